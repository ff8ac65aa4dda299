import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock } from '../common/clock';
import { NotFoundError, ValidationError } from '../common/errors/domain-error';
import { formatAmount, invoiceTotals, parseAmount } from '../common/money';
import { resolvePage } from '../common/pagination';
import { CustomerCreditsService } from '../customers/customer-credits.service';
import { Db } from '../database/db';
import { EventsService } from '../events/events.service';
import { IdempotencyClaim, IdempotencyService } from '../idempotency/idempotency.service';
import type { StoredLineItem } from '../invoices/entities/invoice.entity';
import { InvoiceCreditsService } from '../invoices/invoice-credits.service';
import { InvoicesService } from '../invoices/invoices.service';
import { PaymentsService } from '../payments/payments.service';
import {
  PreparedRefund,
  RefundExceedsPaymentError,
  RefundsService,
} from '../refunds/refunds.service';
import { toCreditNoteResponse } from './credit-note.mapper';
import { CreditNoteRow, CreditNotesRepository } from './credit-notes.repository';
import { CreateCreditNoteDto, ListCreditNotesQueryDto } from './dto/credit-note.dto';
import { CreateCreditNoteResponse, CreditNoteResponse } from './dto/credit-note.response';

/**
 * Credit notes (docs/refunds.md, "Credit notes"): what an invoice asks for reduced before or
 * after payment, numbered per merchant without gaps, with lines (the invoice's tax on them) and
 * what it does. Each is written with what it does, its number and `credit_note.created` in one
 * transaction, under the invoice's row lock:
 * - `reduce_due`: the Open invoice's `amountCredited` grows (never past what is due); covered by
 *   what is paid and credited, it is Paid.
 * - `refund`: a refund of one of its payments, as `POST /api/payments/:id/refunds` makes
 *   (its transaction built first, outside the transaction), returned for the merchant to sign.
 * - `credit`: the customer's credit balance in the mint grows, and the invoice's
 *   `amountCreditedToBalance`; refunds and credits of an invoice never exceed what it was paid.
 */
@Injectable()
export class CreditNotesService {
  constructor(
    private readonly db: Db,
    private readonly notes: CreditNotesRepository,
    private readonly invoices: InvoicesService,
    private readonly invoiceCredits: InvoiceCreditsService,
    private readonly payments: PaymentsService,
    private readonly refunds: RefundsService,
    private readonly credits: CustomerCreditsService,
    private readonly events: EventsService,
    private readonly idempotency: IdempotencyService,
    private readonly clock: Clock,
  ) {}

  /**
   * @throws NotFoundError (`INVOICE_NOT_FOUND`; `NOT_FOUND` for a payment of another invoice)
   * @throws InvoiceNotOpenError (`reduce_due` of an invoice not Open)
   * @throws CreditExceedsDueError, RefundExceedsPaymentError, PaymentNotRefundableError
   */
  async create(
    merchantId: string,
    invoiceId: string,
    input: CreateCreditNoteDto,
    claim?: IdempotencyClaim,
  ): Promise<CreateCreditNoteResponse> {
    const invoice = await this.invoices.get(merchantId, invoiceId);
    const lines: StoredLineItem[] = input.lines.map((line) => ({
      description: line.description,
      quantity: line.quantity,
      unitAmount: parseAmount(line.unitAmount).toString(),
    }));
    const totals = invoiceTotals(
      lines.map((line) => ({ ...line, unitAmount: BigInt(line.unitAmount) })),
      invoice.taxBps,
    );
    if (input.paymentId != null && input.action !== 'refund') {
      throw new ValidationError('paymentId: only a refund names a payment', [
        { field: 'paymentId', message: 'only a refund names a payment' },
      ]);
    }
    const prepared =
      input.action === 'refund'
        ? await this.refunds.prepare(
            merchantId,
            input.paymentId ?? (await this.paymentToRefund(merchantId, invoiceId, totals.total)),
            { amount: formatAmount(totals.total), reason: input.memo ?? input.reason },
          )
        : undefined;
    if (prepared && prepared.line.invoice_id !== invoiceId) throw new NotFoundError('Payment');
    return this.db.transaction(async (tx) => {
      const number = await this.notes.nextNumber(tx, merchantId);
      const id = randomUUID();
      let refund: CreateCreditNoteResponse['refund'] = null;
      if (input.action === 'reduce_due') {
        await this.invoiceCredits.creditIn(tx, merchantId, invoiceId, totals.total);
      } else if (input.action === 'refund') {
        refund = await this.refunds.createIn(tx, prepared as PreparedRefund);
      } else {
        const left = await this.refunds.leftOfInvoiceIn(tx, merchantId, invoiceId);
        if (totals.total > left) {
          throw new RefundExceedsPaymentError(left, invoice.mint, 'invoice');
        }
        await this.invoiceCredits.creditToBalanceIn(tx, merchantId, invoiceId, totals.total);
        await this.credits.addIn(
          tx,
          { merchantId, customerId: invoice.customerId, mint: invoice.mint, amount: totals.total },
          id,
        );
      }
      const row = await this.notes.insert(tx, {
        id,
        merchantId,
        invoiceId,
        customerId: invoice.customerId,
        number,
        mint: invoice.mint,
        lines,
        subtotal: totals.subtotal.toString(),
        tax: totals.tax.toString(),
        amount: totals.total.toString(),
        reason: input.reason,
        memo: input.memo ?? null,
        action: input.action,
        refundId: refund?.refund.id ?? null,
        at: this.clock.now(),
      });
      const creditNote = toCreditNoteResponse(row);
      await this.events.record(tx, merchantId, 'credit_note.created', creditNote);
      const response = { creditNote, refund };
      if (claim) await this.idempotency.completeIn(tx, claim, 201, response);
      return response;
    });
  }

  /** @throws NotFoundError when the merchant has no such credit note. */
  async get(merchantId: string, id: string): Promise<CreditNoteResponse> {
    const row = await this.notes.find(merchantId, id);
    if (!row) throw new NotFoundError('Credit note');
    return toCreditNoteResponse(row);
  }

  /** A credit note by id alone, any merchant's (its document's public link); null if none. */
  findRow(id: string): Promise<CreditNoteRow | null> {
    return this.notes.find(null, id);
  }

  /**
   * Newest first; each filter narrows; `limit` and `startingAfter` ask for a page.
   * @throws ValidationError when `startingAfter` names no credit note of the merchant.
   */
  async list(merchantId: string, query: ListCreditNotesQueryDto): Promise<CreditNoteResponse[]> {
    const page = await resolvePage(query, 'credit note', (id) =>
      this.notes.createdAt(merchantId, id),
    );
    const rows = await this.notes.list(merchantId, query, page);
    return rows.map(toCreditNoteResponse);
  }

  /** A customer's credit notes, newest first (the portal's list). */
  async listForCustomer(merchantId: string, customerId: string): Promise<CreditNoteResponse[]> {
    const rows = await this.notes.list(
      merchantId,
      { customerId },
      { limit: null, afterCreatedAt: null, afterId: null },
    );
    return rows.map(toCreditNoteResponse);
  }

  /**
   * The first finalized payment of the invoice (oldest first) with `amount` left (what its
   * refunds do not hold): the one a credit note's refund goes against when it names none.
   * @throws RefundExceedsPaymentError when no payment of the invoice has that much left
   */
  private async paymentToRefund(
    merchantId: string,
    invoiceId: string,
    amount: bigint,
  ): Promise<string> {
    const lines = await this.payments.list(merchantId, {
      invoiceId,
      kind: 'invoice',
      status: 'finalized',
    });
    // Oldest first, each with what its refunds do not hold yet.
    let most = 0n;
    for (const candidate of lines.reverse()) {
      const row = await this.payments.refundableIn(this.db, merchantId, candidate.id, false);
      const left = row ? BigInt(row.amount) - BigInt(row.refund_held) : 0n;
      if (left >= amount) return candidate.id;
      if (left > most) most = left;
    }
    throw new RefundExceedsPaymentError(most, lines[0]?.mint ?? '', 'invoice');
  }
}
