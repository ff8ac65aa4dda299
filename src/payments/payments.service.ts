import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock } from '../common/clock';
import { resolvePage } from '../common/pagination';
import type { SqlTx } from '../database/pg-transaction';
import { PaymentResponse } from './dto/payment.response';
import { ListPaymentsQueryDto } from './dto/payment.dto';
import type { PaymentDetails, PaymentKind, PaymentStatus } from './entities/payment.entity';
import { toPaymentResponse } from './payment.mapper';
import { ledgerCsvLine } from './ledger-csv';
import { LedgerExportRepository } from './ledger-export.repository';
import { PaymentRefundsRepository } from './payment-refunds.repository';
import { PaymentInsertRow, PaymentsRepository } from './payments.repository';

/** A ledger line to write (amounts in base units). */
export interface NewPayment {
  /** Given when the caller must name the line before it is written; else a new one. */
  id?: string;
  merchantId: string;
  kind: PaymentKind;
  status: PaymentStatus;
  amount: bigint;
  /** What the chain withheld of it; `amount` is net of it. */
  fee?: bigint;
  /** The merchant's token account that received (invoice and unattributed payments). */
  destination?: string | null;
  /** The transfer instruction's index; null for money that came without one. */
  instruction?: number | null;
  references?: string[] | null;
  excess?: bigint;
  mint: string;
  signature: string | null;
  payer: string | null;
  customerId: string | null;
  invoiceId?: string | null;
  subscriptionId?: string | null;
  period?: number | null;
  note?: string | null;
  slot?: number | null;
  details?: PaymentDetails | null;
}

/**
 * The payments ledger: every invoice payment and every subscription charge, with its signature.
 * Written by the billing engine inside the transaction that settles what the payment did (so a
 * line exists exactly when its effect committed); read by `GET /api/payments`.
 */
@Injectable()
export class PaymentsService {
  constructor(
    private readonly payments: PaymentsRepository,
    private readonly exports: LedgerExportRepository,
    private readonly refunds: PaymentRefundsRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * The merchant's lines in `[from, to)`, oldest first, as CSV records (`ledgerCsvLine`), a
   * batch per `write`; stops when `write` says the client has gone.
   */
  exportCsv(
    merchantId: string,
    range: { from: Date | null; to: Date | null },
    write: (csv: string) => Promise<boolean>,
  ): Promise<void> {
    return this.exports.stream(merchantId, range, (rows) =>
      write(rows.map(ledgerCsvLine).join('')),
    );
  }

  /**
   * Newest first; each filter narrows; `limit` and `startingAfter` ask for a page (D6).
   * @throws ValidationError when `startingAfter` names no line of the merchant's ledger.
   */
  async list(merchantId: string, query: ListPaymentsQueryDto): Promise<PaymentResponse[]> {
    const page = await resolvePage(query, 'payment', (id) =>
      this.payments.createdAt(merchantId, id),
    );
    const filters = {
      invoice_id: query.invoiceId,
      subscription_id: query.subscriptionId,
      customer_id: query.customerId,
      status: query.status,
      kind: query.kind,
    };
    const rows = await this.payments.list(merchantId, filters, page);
    return rows.map(toPaymentResponse);
  }

  /**
   * Writes a ledger line in the caller's transaction. `onConflictSkip`: an invoice payment seen
   * twice (two scans, two instances) is one line; null is returned for the second.
   */
  async insertIn(tx: SqlTx, payment: NewPayment): Promise<PaymentResponse | null> {
    const now = this.clock.now();
    const row = await this.payments.insert(tx, { ...insertRow(payment, now), at: now });
    return row ? toPaymentResponse(row) : null;
  }

  /**
   * Writes several ledger lines in the caller's transaction, in one statement (`insertIn` of
   * each): each line, in the order given, or null for one that was there already.
   */
  async insertManyIn(
    tx: SqlTx,
    payments: readonly NewPayment[],
  ): Promise<(PaymentResponse | null)[]> {
    const now = this.clock.now();
    const rows = await this.payments.insertMany(
      tx,
      payments.map((payment) => insertRow(payment, now)),
      now,
    );
    return rows.map((row) => (row ? toPaymentResponse(row) : null));
  }

  /**
   * Attaches an unattributed line of the merchant to one of its invoices (the merchant's
   * resolution), in the caller's transaction: compare-and-set on the line still being
   * unattributed, so it is attached once. @returns the line as now, or null when it is not an
   * unattributed line of this merchant (any more).
   */
  async attachIn(
    tx: SqlTx,
    merchantId: string,
    id: string,
    to: { invoiceId: string; customerId: string; excess: bigint },
  ): Promise<PaymentResponse | null> {
    const row = await this.payments.attach(
      tx,
      merchantId,
      id,
      { invoiceId: to.invoiceId, customerId: to.customerId, excess: to.excess.toString() },
      this.clock.now(),
    );
    return row ? toPaymentResponse(row) : null;
  }

  /** An unattributed line of the merchant, locked for the caller's transaction; null if none. */
  async unattributedIn(
    tx: SqlTx,
    merchantId: string,
    id: string,
  ): Promise<{ amount: bigint; mint: string; status: PaymentStatus; refundHeld: bigint } | null> {
    const row = await this.payments.lockUnattributed(tx, merchantId, id);
    return row
      ? {
          amount: BigInt(row.amount),
          mint: row.mint,
          status: row.status,
          refundHeld: BigInt(row.refund_held),
        }
      : null;
  }

  /**
   * What refunds hold of the line grows by `delta` (a refund created or issued again), or
   * shrinks (an Expired one), in the caller's transaction, which holds the line's row lock.
   */
  holdForRefundIn(tx: SqlTx, merchantId: string, id: string, delta: bigint): Promise<void> {
    return this.refunds.addRefundHeld(tx, merchantId, id, delta, this.clock.now());
  }

  /** Marks a confirmed line finalized; null when another sweep did it first. */
  async finalizeIn(tx: SqlTx, id: string): Promise<PaymentResponse | null> {
    const row = await this.payments.finalize(tx, id, this.clock.now());
    return row ? toPaymentResponse(row) : null;
  }

  /**
   * Whether the merchant has an invoice line of this signature and mint recorded before lines
   * were per instruction (one line per transaction, no destination), in the caller's transaction.
   */
  hasLegacyInvoiceLineIn(
    tx: SqlTx,
    merchantId: string,
    signature: string,
    mint: string,
  ): Promise<boolean> {
    return this.payments.hasLegacyInvoiceLine(tx, merchantId, signature, mint);
  }

  /**
   * The merchant's line as a refund of it needs it (its kind, status, amount, mint and payer),
   * in `tx`; `lock` holds it for the transaction, so refunds of one line are decided one at a
   * time. Null when the merchant has no such line.
   */
  refundableIn(tx: SqlTx, merchantId: string, id: string, lock: boolean) {
    return this.refunds.refundable(tx, merchantId, id, lock);
  }

  /** Whether the merchant has this ledger line, of any kind, in the caller's transaction. */
  existsIn(tx: SqlTx, merchantId: string, id: string): Promise<boolean> {
    return this.payments.exists(tx, merchantId, id);
  }
}

/** A ledger line as written at `now`, from what the caller knows of it. */
function insertRow(payment: NewPayment, now: Date): Omit<PaymentInsertRow, 'at'> {
  return {
    id: payment.id ?? randomUUID(),
    merchant_id: payment.merchantId,
    kind: payment.kind,
    status: payment.status,
    customer_id: payment.customerId,
    invoice_id: payment.invoiceId ?? null,
    subscription_id: payment.subscriptionId ?? null,
    period: payment.period ?? null,
    signature: payment.signature,
    mint: payment.mint,
    amount: payment.amount.toString(),
    fee: (payment.fee ?? 0n).toString(),
    destination: payment.destination ?? null,
    instruction: payment.instruction ?? null,
    references: payment.references ?? null,
    excess: (payment.excess ?? 0n).toString(),
    payer: payment.payer,
    note: payment.note ?? null,
    slot: payment.slot ?? null,
    finalized_at: payment.status === 'finalized' ? now : null,
    details: payment.details ?? null,
  };
}
