import { Module } from '@nestjs/common';
import { BillingModule } from '../billing/billing.module';
import { CheckoutModule } from '../checkout/checkout.module';
import { CustomersModule } from '../customers/customers.module';
import { InvoicesModule } from '../invoices/invoices.module';
import { SubscriptionsModule } from '../subscriptions/subscriptions.module';
import { PortalController, PortalSessionsController } from './portal.controller';
import { PortalPageController } from './portal-page.controller';
import { PortalSessionGuard } from './portal-session.guard';
import { AuthModule } from '../auth/auth.module';
import { PortalSubscriptions } from './portal-subscriptions';
import { PortalService } from './portal.service';

/** Customer self-service (DESIGN section 9): portal sessions and the portal page's API. */
@Module({
  imports: [
    BillingModule,
    CheckoutModule,
    CustomersModule,
    InvoicesModule,
    AuthModule,
    SubscriptionsModule,
  ],
  controllers: [PortalSessionsController, PortalController, PortalPageController],
  providers: [PortalService, PortalSubscriptions, PortalSessionGuard],
})
export class PortalModule {}
