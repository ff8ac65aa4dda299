import { Module } from '@nestjs/common';
import { EmailModule } from '../email/email.module';
import { EventsModule } from '../events/events.module';
import { InvoicesModule } from '../invoices/invoices.module';
import { PaymentsModule } from '../payments/payments.module';
import { AuthModule } from '../auth/auth.module';
import { SubscriptionsModule } from '../subscriptions/subscriptions.module';
import { BillingNotices } from './billing-notices';
import { BillingService } from './billing.service';
import { ChainCursors } from './chain-cursors';
import { ChargeClaims } from './charge-claims';
import { ChargeRunService } from './charge-run.service';
import { ChargeSettlement } from './charge-settlement';
import { InvoiceWatcherService } from './invoice-watcher.service';
import { SubscribeService } from './subscribe.service';
import { UnreadSignatures } from './unread-signatures';

/**
 * The billing engine: charge runs (exactly once per period), the subscribe confirmation and its
 * reconciling watcher, the invoice payment watcher and finality, customer notices.
 */
@Module({
  imports: [
    EmailModule,
    EventsModule,
    InvoicesModule,
    PaymentsModule,
    AuthModule,
    SubscriptionsModule,
  ],
  providers: [
    BillingNotices,
    BillingService,
    ChainCursors,
    ChargeClaims,
    ChargeRunService,
    ChargeSettlement,
    InvoiceWatcherService,
    SubscribeService,
    UnreadSignatures,
  ],
  exports: [BillingService, ChargeRunService, SubscribeService],
})
export class BillingModule {}
