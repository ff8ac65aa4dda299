import { Module } from '@nestjs/common';
import { CreditNotesModule } from '../credit-notes/credit-notes.module';
import { InvoicesModule } from '../invoices/invoices.module';
import { PaymentsModule } from '../payments/payments.module';
import {
  CreditNoteDocumentsController,
  DocumentsController,
  PublicDocumentsController,
} from './documents.controller';
import { DocumentsService } from './documents.service';

/** PDF documents (invoices, receipts, credit notes), for the merchant's API and the customer's links. */
@Module({
  imports: [CreditNotesModule, InvoicesModule, PaymentsModule],
  controllers: [CreditNoteDocumentsController, DocumentsController, PublicDocumentsController],
  providers: [DocumentsService],
})
export class DocumentsModule {}
