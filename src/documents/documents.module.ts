import { Module } from '@nestjs/common';
import { InvoicesModule } from '../invoices/invoices.module';
import { PaymentsModule } from '../payments/payments.module';
import { DocumentsController, PublicDocumentsController } from './documents.controller';
import { DocumentsService } from './documents.service';

/** PDF documents of invoices (and receipts), for the merchant's API and the customer's links. */
@Module({
  imports: [InvoicesModule, PaymentsModule],
  controllers: [DocumentsController, PublicDocumentsController],
  providers: [DocumentsService],
})
export class DocumentsModule {}
