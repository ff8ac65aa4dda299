import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { InvoicesModule } from '../invoices/invoices.module';
import { MerchantsModule } from '../merchants/merchants.module';
import { PaymentsModule } from '../payments/payments.module';
import { RefundFinder } from './refund-finder';
import { RefundWatcher } from './refund-watcher';
import { RefundsController } from './refunds.controller';
import { RefundsRepository } from './refunds.repository';
import { RefundsService } from './refunds.service';

/**
 * Refunds (docs/refunds.md): the merchant's API, the row's owner, and the watcher the billing
 * engine's schedule runs (`RefundWatcher.sweep`).
 */
@Module({
  imports: [EventsModule, IdempotencyModule, InvoicesModule, MerchantsModule, PaymentsModule],
  controllers: [RefundsController],
  providers: [RefundFinder, RefundWatcher, RefundsRepository, RefundsService],
  exports: [RefundWatcher, RefundsService],
})
export class RefundsModule {}
