import { Module } from '@nestjs/common';
import { EmailModule } from '../email/email.module';
import { EventsModule } from '../events/events.module';
import { InvoicesModule } from '../invoices/invoices.module';
import { PaymentsModule } from '../payments/payments.module';
import { RefundsModule } from '../refunds/refunds.module';
import { UsageModule } from '../usage/usage.module';
import { X402Module } from '../x402/x402.module';
import { AuthModule } from '../auth/auth.module';
import { SubscriptionsModule } from '../subscriptions/subscriptions.module';
import { BillingMetrics } from './billing-metrics';
import { BillingNotices } from './billing-notices';
import { BillingService } from './billing.service';
import { ChainCursors } from './chain-cursors';
import { ChargeClaims } from './charge-claims';
import { ChargeLeases } from './charge-leases';
import { ChargeRunService } from './charge-run.service';
import { ChargeSettlement } from './charge-settlement';
import { ChargeSuccesses } from './charge-successes';
import { InvoiceWatcherService } from './invoice-watcher.service';
import { BillingMetricsRepository } from './repositories/billing-metrics.repository';
import { BillingNoticesRepository } from './repositories/billing-notices.repository';
import { ChainCursorsRepository } from './repositories/chain-cursors.repository';
import { ChargeAttemptsRepository } from './repositories/charge-attempts.repository';
import { InvoiceWatchRepository } from './repositories/invoice-watch.repository';
import { ReceivingAccountAlertsRepository } from './repositories/receiving-account-alerts.repository';
import { SubscribesRepository } from './repositories/subscribes.repository';
import { UnreadSignaturesRepository } from './repositories/unread-signatures.repository';
import { WalletReservationsRepository } from './repositories/wallet-reservations.repository';
import { SchemeMovesService } from './scheme-moves.service';
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
    RefundsModule,
    UsageModule,
    X402Module,
    AuthModule,
    SubscriptionsModule,
  ],
  providers: [
    BillingMetrics,
    BillingMetricsRepository,
    BillingNotices,
    BillingNoticesRepository,
    BillingService,
    ChainCursors,
    ChainCursorsRepository,
    ChargeAttemptsRepository,
    ChargeClaims,
    ChargeLeases,
    ChargeRunService,
    ChargeSettlement,
    ChargeSuccesses,
    InvoiceWatchRepository,
    InvoiceWatcherService,
    ReceivingAccountAlertsRepository,
    SchemeMovesService,
    SubscribeService,
    SubscribesRepository,
    UnreadSignatures,
    UnreadSignaturesRepository,
    WalletReservationsRepository,
  ],
  exports: [BillingService, ChargeRunService, SchemeMovesService, SubscribeService],
})
export class BillingModule {}
