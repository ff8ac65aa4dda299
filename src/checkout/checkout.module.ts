import { Module } from '@nestjs/common';
import { BillingModule } from '../billing/billing.module';
import { InvoicesModule } from '../invoices/invoices.module';
import { PlansModule } from '../plans/plans.module';
import { SubscriptionsModule } from '../subscriptions/subscriptions.module';
import { CheckoutController } from './checkout.controller';
import { CheckoutService } from './checkout.service';
import { CheckoutPagesController } from './pages/checkout-pages.controller';
import { CheckoutPages } from './pages/checkout-pages.service';
import { PageShell } from './pages/layout';

/**
 * The public checkout (no API key): views and Solana Pay transaction requests, and the hosted
 * pages built on them (their shell is shared with the customer portal's page).
 */
@Module({
  imports: [BillingModule, InvoicesModule, PlansModule, SubscriptionsModule],
  controllers: [CheckoutController, CheckoutPagesController],
  providers: [CheckoutService, CheckoutPages, PageShell],
  exports: [PageShell],
})
export class CheckoutModule {}
