import { Module } from '@nestjs/common';
import { CustomersModule } from '../customers/customers.module';
import { EventsModule } from '../events/events.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { InvoicesModule } from '../invoices/invoices.module';
import { PaymentsModule } from '../payments/payments.module';
import { RefundsModule } from '../refunds/refunds.module';
import { CreditNotesController } from './credit-notes.controller';
import { CreditNotesRepository } from './credit-notes.repository';
import { CreditNotesService } from './credit-notes.service';

/** Credit notes against invoices (docs/refunds.md): the API and the table's owner. */
@Module({
  imports: [
    CustomersModule,
    EventsModule,
    IdempotencyModule,
    InvoicesModule,
    PaymentsModule,
    RefundsModule,
  ],
  controllers: [CreditNotesController],
  providers: [CreditNotesRepository, CreditNotesService],
  exports: [CreditNotesService],
})
export class CreditNotesModule {}
