import { Module } from '@nestjs/common';
import { BillingModule } from '../billing/billing.module';
import { CheckoutModule } from '../checkout/checkout.module';
import { CreditNotesModule } from '../credit-notes/credit-notes.module';
import { CustomersModule } from '../customers/customers.module';
import { InvoicesModule } from '../invoices/invoices.module';
import { RefundsModule } from '../refunds/refunds.module';
import { SubscriptionsModule } from '../subscriptions/subscriptions.module';
import { PortalController, PortalSessionsController } from './portal.controller';
import { PortalPageController } from './portal-page.controller';
import { PortalSessionGuard } from './portal-session.guard';
import { AuthModule } from '../auth/auth.module';
import { PortalSubscriptions } from './portal-subscriptions';
import { PortalMoneyBack } from './portal-money-back';
import { PortalService } from './portal.service';

/** Customer self-service (DESIGN section 9): portal sessions and the portal page's API. */
@Module({
  imports: [
    BillingModule,
    CheckoutModule,
    CreditNotesModule,
    CustomersModule,
    InvoicesModule,
    RefundsModule,
    AuthModule,
    SubscriptionsModule,
  ],
  controllers: [PortalSessionsController, PortalController, PortalPageController],
  providers: [PortalMoneyBack, PortalService, PortalSubscriptions, PortalSessionGuard],
})
export class PortalModule {}
