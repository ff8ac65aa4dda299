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
           invoice_id, subscription_id, period, signature, mint, amount, excess, payer, note, slot,
           finalized_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
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
        (payment.excess ?? 0n).toString(),
        payment.payer,
        payment.note ?? null,
        payment.slot ?? null,
        payment.status === 'finalized' ? now : null,
      ],
    );
    return rows[0] ? toPaymentResponse(rows[0]) : null;
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
