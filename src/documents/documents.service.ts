import { Injectable } from '@nestjs/common';
import { ConflictError, NotFoundError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-codes';
import { AppConfig } from '../config/app-config';
import { invoiceCheckoutUrl, invoiceNumber } from '../invoices/invoice.mapper';
import { InvoicesService } from '../invoices/invoices.service';
import { PaymentsService } from '../payments/payments.service';
import { creditNoteDocument, invoiceDocument } from './invoice-document';
import { CreditNotesService } from '../credit-notes/credit-notes.service';
import { renderPdf } from './pdf';

/** A rendered document and the file name it is offered under. */
export interface RenderedDocument {
  filename: string;
  pdf: Buffer;
}

/**
 * The documents an accountant asks for (docs/refunds.md, "Documents"), as PDFs: an invoice, and
 * its receipt once Paid (every payment and refund with its signature and explorer link). Read
 * from the invoices' and the ledger's owners; rendered by PDFKit, in the request, with no
 * browser.
 */
@Injectable()
export class DocumentsService {
  constructor(
    private readonly invoices: InvoicesService,
    private readonly payments: PaymentsService,
    private readonly notes: CreditNotesService,
    private readonly config: AppConfig,
  ) {}

  /**
   * A credit note's PDF. `merchantId` null: the public link (its id alone opens it).
   * @throws NotFoundError when absent or another merchant's
   */
  async creditNote(merchantId: string | null, id: string): Promise<RenderedDocument> {
    const note = await this.notes.findRow(id);
    if (!note || (merchantId !== null && note.merchant_id !== merchantId)) {
      throw new NotFoundError('Credit note');
    }
    const invoice = (await this.invoices.findForCheckout(note.invoice_id))!;
    const view = creditNoteDocument(note, invoice);
    return {
      filename: `${view.number}.pdf`,
      pdf: await renderPdf(view, new Date(note.created_at)),
    };
  }

  /**
   * The invoice's PDF (`receipt`: its receipt). `merchantId` null: the public link, which the
   * invoice's id alone opens, as its hosted checkout page.
   * @throws NotFoundError (`INVOICE_NOT_FOUND`) when absent or another merchant's
   * @throws ConflictError for a receipt of an invoice that is not Paid
   */
  async invoice(
    merchantId: string | null,
    id: string,
    kind: 'invoice' | 'receipt',
  ): Promise<RenderedDocument> {
    const invoice = await this.invoices.findForCheckout(id);
    if (!invoice || (merchantId !== null && invoice.merchant_id !== merchantId)) {
      throw new NotFoundError('Invoice', ErrorCode.INVOICE_NOT_FOUND);
    }
    const number = invoiceNumber(invoice.number);
    if (kind === 'receipt' && invoice.status !== 'Paid') {
      throw new ConflictError(
        `Invoice ${number} is ${invoice.status}: its receipt exists once it is Paid`,
      );
    }
    const ledger = await this.payments.list(invoice.merchant_id, { invoiceId: id });
    const view = invoiceDocument(kind, invoice, ledger.reverse(), {
      cluster: this.config.SOLANA_CLUSTER,
      rpcUrl: this.config.solanaRpcUrl,
      checkoutUrl: invoiceCheckoutUrl(this.config.publicBaseUrl, id),
    });
    const at = new Date(kind === 'receipt' ? invoice.paid_at! : invoice.created_at);
    return {
      filename: kind === 'receipt' ? `${number}-receipt.pdf` : `${number}.pdf`,
      pdf: await renderPdf(view, at),
    };
  }
}
