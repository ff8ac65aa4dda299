import { Module } from '@nestjs/common';
import { ExportsController } from './exports.controller';
import { LedgerExportRepository } from './ledger-export.repository';
import { PaymentRefundsRepository } from './payment-refunds.repository';
import { PaymentsController } from './payments.controller';
import { PaymentsRepository } from './payments.repository';
import { PaymentsService } from './payments.service';

/** The payments ledger (`GET /api/payments`); the billing engine writes it through the service. */
@Module({
  controllers: [PaymentsController, ExportsController],
  providers: [
    LedgerExportRepository,
    PaymentRefundsRepository,
    PaymentsRepository,
    PaymentsService,
  ],
  exports: [PaymentsService],
})
export class PaymentsModule {}
