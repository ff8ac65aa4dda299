import { Injectable } from '@nestjs/common';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { isoTimestamp } from '../database/sql';
import type { MintSymbol } from '../solana/mints';
import type { PaymentKind, PaymentStatus } from './entities/payment.entity';

/** A `payments` row as PostgreSQL returns it (bigints as text). */
export interface PaymentRow {
  id: string;
  merchant_id: string;
  kind: PaymentKind;
  status: PaymentStatus;
  amount: string;
  fee: string;
  destination: string | null;
  references: string[] | null;
  excess: string;
  mint: MintSymbol;
  signature: string | null;
  payer: string | null;
  invoice_id: string | null;
  subscription_id: string | null;
  period: number | null;
  customer_id: string | null;
  note: string | null;
  slot: string | null;
  created_at: string;
  finalized_at: string | null;
  updated_at: string;
}

/** Every column a `PaymentResponse` needs, for `payments` aliased `pm`. */
const PAYMENT_COLUMNS = `pm.id, pm.merchant_id, pm.kind, pm.status, pm.amount::text AS amount,
  pm.fee::text AS fee, pm.destination, pm."references", pm.excess::text AS excess, pm.mint, pm.signature, pm.payer, pm.invoice_id, pm.subscription_id,
  pm.period, pm.customer_id, pm.note, pm.slot::text AS slot,
  ${isoTimestamp('pm.created_at', 'created_at')}, ${isoTimestamp('pm.finalized_at', 'finalized_at')},
  ${isoTimestamp('pm.updated_at', 'updated_at')}`;

/** The list's filters: each given one narrows (equality on its column). */
export interface PaymentFilters {
  invoice_id?: string;
  subscription_id?: string;
  customer_id?: string;
  status?: PaymentStatus;
  kind?: PaymentKind;
}

/** A ledger line as it is written (amounts in base units, as text). */
export interface PaymentInsertRow {
  id: string;
  merchant_id: string;
  kind: PaymentKind;
  status: PaymentStatus;
  customer_id: string | null;
  invoice_id: string | null;
  subscription_id: string | null;
  period: number | null;
  signature: string | null;
  mint: string;
  amount: string;
  fee: string;
  destination: string | null;
  instruction: number | null;
  references: string[] | null;
  excess: string;
  payer: string | null;
  note: string | null;
  slot: number | null;
  finalized_at: Date | null;
  /** Domain time of the write. */
  at: Date;
}

/** An unattributed line as its attachment needs it. */
export interface UnattributedRow {
  amount: string;
  mint: string;
  status: PaymentStatus;
}

/** Every statement on `payments` but the billing engine's own: the ledger's owner (issue 22). */
@Injectable()
export class PaymentsRepository {
  constructor(private readonly db: Db) {}

  /** The merchant's lines, newest first. */
  list(merchantId: string, filters: PaymentFilters): Promise<PaymentRow[]> {
    const params: unknown[] = [merchantId];
    let where = 'pm.merchant_id = ?';
    for (const column of [
      'invoice_id',
      'subscription_id',
      'customer_id',
      'status',
      'kind',
    ] as const) {
      const value = filters[column];
      if (value !== undefined) {
        where += ` AND pm.${column} = ?`;
        params.push(value);
      }
    }
    return this.db.execute<PaymentRow[]>(
      `SELECT ${PAYMENT_COLUMNS} FROM payments pm WHERE ${where}
        ORDER BY pm.created_at DESC, pm.id DESC`,
      params,
    );
  }

  /**
   * The line, unless it conflicts with one written before (`ON CONFLICT DO NOTHING`: an invoice
   * payment seen twice is one line). @returns the row, or null on a conflict.
   */
  async insert(tx: SqlTx, row: PaymentInsertRow): Promise<PaymentRow | null> {
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
        row.id,
        row.at,
        row.at,
        row.merchant_id,
        row.kind,
        row.status,
        row.customer_id,
        row.invoice_id,
        row.subscription_id,
        row.period,
        row.signature,
        row.mint,
        row.amount,
        row.fee,
        row.destination,
        row.instruction,
        row.references,
        row.excess,
        row.payer,
        row.note,
        row.slot,
        row.finalized_at,
      ],
    );
    return rows[0] ?? null;
  }

  /**
   * Compare-and-set of an unattributed line of the merchant onto an invoice. @returns the line
   * as now, or null when it is not an unattributed line of this merchant (any more).
   */
  async attach(
    tx: SqlTx,
    merchantId: string,
    id: string,
    to: { invoiceId: string; customerId: string; excess: string },
    at: Date,
  ): Promise<PaymentRow | null> {
    const rows = await tx.execute<PaymentRow[]>(
      `WITH pm AS (
         UPDATE payments SET kind = 'invoice', invoice_id = ?, customer_id = ?, excess = ?::bigint,
                note = NULL, updated_at = ?
          WHERE id = ? AND merchant_id = ? AND kind = 'unattributed'
          RETURNING *
       )
       SELECT ${PAYMENT_COLUMNS} FROM pm`,
      [to.invoiceId, to.customerId, to.excess, at, id, merchantId],
    );
    return rows[0] ?? null;
  }

  /** An unattributed line of the merchant, locked for the caller's transaction. */
  async lockUnattributed(
    tx: SqlTx,
    merchantId: string,
    id: string,
  ): Promise<UnattributedRow | null> {
    const [row] = await tx.execute<UnattributedRow[]>(
      `SELECT amount::text AS amount, mint, status FROM payments
        WHERE id = ? AND merchant_id = ? AND kind = 'unattributed' FOR UPDATE`,
      [id, merchantId],
    );
    return row ?? null;
  }

  /** A confirmed line made finalized; null when it is not confirmed (any more). */
  async finalize(tx: SqlTx, id: string, at: Date): Promise<PaymentRow | null> {
    const rows = await tx.execute<PaymentRow[]>(
      `WITH pm AS (
         UPDATE payments SET status = 'finalized', finalized_at = ?, updated_at = ?
          WHERE id = ? AND status = 'confirmed'
          RETURNING *
       )
       SELECT ${PAYMENT_COLUMNS} FROM pm`,
      [at, at, id],
    );
    return rows[0] ?? null;
  }

  /**
   * Whether the merchant has an invoice line of this signature and mint written before lines
   * were per instruction (no destination).
   */
  async hasLegacyInvoiceLine(
    tx: SqlTx,
    merchantId: string,
    signature: string,
    mint: string,
  ): Promise<boolean> {
    const rows = await tx.execute<{ one: number }[]>(
      `SELECT 1 AS one FROM payments
        WHERE merchant_id = ? AND signature = ? AND mint = ? AND kind = 'invoice'
          AND destination IS NULL
        LIMIT 1`,
      [merchantId, signature, mint],
    );
    return rows.length > 0;
  }

  /** Whether the merchant has this line (of any kind). */
  async exists(tx: SqlTx, merchantId: string, id: string): Promise<boolean> {
    const rows = await tx.execute<{ id: string }[]>(
      `SELECT id FROM payments WHERE id = ? AND merchant_id = ?`,
      [id, merchantId],
    );
    return rows.length > 0;
  }
}
