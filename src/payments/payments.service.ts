import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock } from '../common/clock';
import { pgQuery, SqlTx } from '../database/pg-transaction';
import { PaymentResponse } from './dto/payment.response';
import { ListPaymentsQueryDto } from './dto/payment.dto';
import type { PaymentKind, PaymentStatus } from './entities/payment.entity';
import { PAYMENT_COLUMNS, PaymentRow, toPaymentResponse } from './payment.mapper';

/** A ledger line to write (amounts in base units). */
export interface NewPayment {
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
}

/**
 * The payments ledger: every invoice payment and every subscription charge, with its signature.
 * Written by the billing engine inside the transaction that settles what the payment did (so a
 * line exists exactly when its effect committed); read by `GET /api/payments`.
 */
@Injectable()
export class PaymentsService {
  constructor(
    private readonly em: EntityManager,
    private readonly clock: Clock,
  ) {}

  /** Newest first; each filter narrows. */
  async list(merchantId: string, query: ListPaymentsQueryDto): Promise<PaymentResponse[]> {
    const params: unknown[] = [merchantId];
    let where = 'pm.merchant_id = ?';
    for (const [column, value] of [
      ['invoice_id', query.invoiceId],
      ['subscription_id', query.subscriptionId],
      ['customer_id', query.customerId],
      ['status', query.status],
      ['kind', query.kind],
    ] as const) {
      if (value !== undefined) {
        where += ` AND pm.${column} = ?`;
        params.push(value);
      }
    }
    const rows = await pgQuery<PaymentRow[]>(
      this.em,
      `SELECT ${PAYMENT_COLUMNS} FROM payments pm WHERE ${where}
        ORDER BY pm.created_at DESC, pm.id DESC`,
      params,
    );
    return rows.map(toPaymentResponse);
  }

  /**
   * Writes a ledger line in the caller's transaction. `onConflictSkip`: an invoice payment seen
   * twice (two scans, two instances) is one line; null is returned for the second.
   */
  async insertIn(tx: SqlTx, payment: NewPayment): Promise<PaymentResponse | null> {
    const now = this.clock.now();
    const rows = await tx.execute<PaymentRow[]>(
      `WITH pm AS (
         INSERT INTO payments (id, created_at, updated_at, merchant_id, kind, status, customer_id,
           invoice_id, subscription_id, period, signature, mint, amount, fee, destination,
           instruction, "references", excess, payer, note, slot, finalized_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT DO NOTHING
         RETURNING *
       )
       SELECT ${PAYMENT_COLUMNS} FROM pm`,
      [
        randomUUID(),
        now,
        now,
        payment.merchantId,
        payment.kind,
        payment.status,
        payment.customerId,
        payment.invoiceId ?? null,
        payment.subscriptionId ?? null,
        payment.period ?? null,
        payment.signature,
        payment.mint,
        payment.amount.toString(),
        (payment.fee ?? 0n).toString(),
        payment.destination ?? null,
        payment.instruction ?? null,
        payment.references ?? null,
        (payment.excess ?? 0n).toString(),
        payment.payer,
        payment.note ?? null,
        payment.slot ?? null,
        payment.status === 'finalized' ? now : null,
      ],
    );
    return rows[0] ? toPaymentResponse(rows[0]) : null;
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
    const rows = await tx.execute<PaymentRow[]>(
      `WITH pm AS (
         UPDATE payments SET kind = 'invoice', invoice_id = ?, customer_id = ?, excess = ?::bigint,
                note = NULL, updated_at = ?
          WHERE id = ? AND merchant_id = ? AND kind = 'unattributed'
          RETURNING *
       )
       SELECT ${PAYMENT_COLUMNS} FROM pm`,
      [to.invoiceId, to.customerId, to.excess.toString(), this.clock.now(), id, merchantId],
    );
    return rows[0] ? toPaymentResponse(rows[0]) : null;
  }

  /** An unattributed line of the merchant, locked for the caller's transaction; null if none. */
  async unattributedIn(
    tx: SqlTx,
    merchantId: string,
    id: string,
  ): Promise<{ amount: bigint; mint: string; status: PaymentStatus } | null> {
    const [row] = await tx.execute<{ amount: string; mint: string; status: PaymentStatus }[]>(
      `SELECT amount::text AS amount, mint, status FROM payments
        WHERE id = ? AND merchant_id = ? AND kind = 'unattributed' FOR UPDATE`,
      [id, merchantId],
    );
    return row ? { amount: BigInt(row.amount), mint: row.mint, status: row.status } : null;
  }

  /** Marks a confirmed line finalized; null when another sweep did it first. */
  async finalizeIn(tx: SqlTx, id: string): Promise<PaymentResponse | null> {
    const now = this.clock.now();
    const rows = await tx.execute<PaymentRow[]>(
      `WITH pm AS (
         UPDATE payments SET status = 'finalized', finalized_at = ?, updated_at = ?
          WHERE id = ? AND status = 'confirmed'
          RETURNING *
       )
       SELECT ${PAYMENT_COLUMNS} FROM pm`,
      [now, now, id],
    );
    return rows[0] ? toPaymentResponse(rows[0]) : null;
  }
}
