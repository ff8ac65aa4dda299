import { Injectable } from '@nestjs/common';
import { sql } from '../database/typed-sql';
import type { ListPage } from '../common/pagination';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { typedCursor } from '../database/row-batches';
import type { MintSymbol } from '../solana/mints';
import type { PaymentDetails, PaymentKind, PaymentStatus } from './entities/payment.entity';
import type {
  IAttachPaymentQuery,
  IFinalizePaymentQuery,
  IFindLegacyInvoiceLineQuery,
  IFindPaymentQuery,
  IInsertPaymentQuery,
  IInsertPaymentsQuery,
  IListInvoicePaymentsQuery,
  IListPaymentsQuery,
  IListPaymentsResult,
  IPaymentCreatedAtQuery,
  IListSubscriptionPaymentsQuery,
  ILockUnattributedQuery,
} from './payments.repository.types';

/**
 * A `payments` line as the statements return it (bigints as text, timestamps ISO 8601 UTC). Its
 * kind, status and mint are text columns (the generated type leaves them `string`) holding one
 * of the entity's kinds and statuses and one of the service's mints.
 */
export type PaymentRow = Omit<IListPaymentsResult, 'kind' | 'status' | 'mint' | 'details'> & {
  kind: PaymentKind;
  status: PaymentStatus;
  mint: MintSymbol;
  details: PaymentDetails | null;
};

/** Each statement's line as a `PaymentRow`: their columns are the same (checked here). */
const paymentRow = (row: IListPaymentsResult): PaymentRow => row as PaymentRow;

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
  details: PaymentDetails | null;
  /** Domain time of the write. */
  at: Date;
}

/** An unattributed line as its attachment needs it. */
export interface UnattributedRow {
  amount: string;
  mint: string;
  status: PaymentStatus;
  /** What refunds hold of it (base units, as text). */
  refund_held: string;
}

/*
 * Every statement below that returns lines returns the same columns (`PaymentRow`: what a
 * `PaymentResponse` needs), written out in each (pgtyped types a static text, which holds no
 * interpolation). Bigints as text; timestamps as the API's ISO text (`api_time`).
 *
 * The list is one statement per way in: by the merchant's (merchant, created_at, id) index, or by
 * the invoice's or the subscription's index when the filter names one. The other filters
 * (customer, status, kind; the subscription beside an invoice) only narrow the rows read that
 * way, as `($x IS NULL OR column = $x)`; 32 statements, one per combination, would not change
 * the plans. Each takes a page (`ListPage`). They are read through a cursor, an unnamed statement
 * PostgreSQL plans for the values it is given each time: every `$x IS NULL` folds before
 * planning, so a page after a cursor starts at that row of the merchant's index (a generic plan
 * would read from the top and filter), and `LIMIT NULL` is no limit.
 */

/** The merchant's lines, newest first, through the merchant's index. */
const listPayments = sql<IListPaymentsQuery>`
  SELECT pm.id, pm.merchant_id, pm.kind, pm.status, pm.amount::text AS "amount!",
         pm.fee::text AS "fee!", pm.destination, pm."references", pm.excess::text AS "excess!",
         pm.mint, pm.signature, pm.payer, pm.invoice_id, pm.subscription_id, pm.period,
         pm.customer_id, pm.note, pm.details, pm.slot::text AS slot,
         api_time(pm.created_at) AS "created_at!", api_time(pm.finalized_at) AS finalized_at,
         api_time(pm.updated_at) AS "updated_at!"
    FROM payments pm
   WHERE pm.merchant_id = $merchantId!
     AND ($customerId::uuid IS NULL OR pm.customer_id = $customerId)
     AND ($status::text IS NULL OR pm.status = $status) AND ($kind::text IS NULL OR pm.kind = $kind)
     AND ($afterId::uuid IS NULL
          OR (pm.created_at, pm.id) < ($afterCreatedAt::timestamptz, $afterId))
   ORDER BY pm.created_at DESC, pm.id DESC
   LIMIT $limit::int`;

/** The merchant's lines of an invoice, newest first. */
const listInvoicePayments = sql<IListInvoicePaymentsQuery>`
  SELECT pm.id, pm.merchant_id, pm.kind, pm.status, pm.amount::text AS "amount!",
         pm.fee::text AS "fee!", pm.destination, pm."references", pm.excess::text AS "excess!",
         pm.mint, pm.signature, pm.payer, pm.invoice_id, pm.subscription_id, pm.period,
         pm.customer_id, pm.note, pm.details, pm.slot::text AS slot,
         api_time(pm.created_at) AS "created_at!", api_time(pm.finalized_at) AS finalized_at,
         api_time(pm.updated_at) AS "updated_at!"
    FROM payments pm
   WHERE pm.invoice_id = $invoiceId! AND pm.merchant_id = $merchantId!
     AND ($subscriptionId::uuid IS NULL OR pm.subscription_id = $subscriptionId)
     AND ($customerId::uuid IS NULL OR pm.customer_id = $customerId)
     AND ($status::text IS NULL OR pm.status = $status) AND ($kind::text IS NULL OR pm.kind = $kind)
     AND ($afterId::uuid IS NULL
          OR (pm.created_at, pm.id) < ($afterCreatedAt::timestamptz, $afterId))
   ORDER BY pm.created_at DESC, pm.id DESC
   LIMIT $limit::int`;

/** The merchant's lines of a subscription (its charges), newest first. */
const listSubscriptionPayments = sql<IListSubscriptionPaymentsQuery>`
  SELECT pm.id, pm.merchant_id, pm.kind, pm.status, pm.amount::text AS "amount!",
         pm.fee::text AS "fee!", pm.destination, pm."references", pm.excess::text AS "excess!",
         pm.mint, pm.signature, pm.payer, pm.invoice_id, pm.subscription_id, pm.period,
         pm.customer_id, pm.note, pm.details, pm.slot::text AS slot,
         api_time(pm.created_at) AS "created_at!", api_time(pm.finalized_at) AS finalized_at,
         api_time(pm.updated_at) AS "updated_at!"
    FROM payments pm
   WHERE pm.subscription_id = $subscriptionId! AND pm.merchant_id = $merchantId!
     AND ($customerId::uuid IS NULL OR pm.customer_id = $customerId)
     AND ($status::text IS NULL OR pm.status = $status) AND ($kind::text IS NULL OR pm.kind = $kind)
     AND ($afterId::uuid IS NULL
          OR (pm.created_at, pm.id) < ($afterCreatedAt::timestamptz, $afterId))
   ORDER BY pm.created_at DESC, pm.id DESC
   LIMIT $limit::int`;

/**
 * The line, unless it conflicts with one written before (`ON CONFLICT DO NOTHING`: an invoice
 * payment seen twice is one line): then nothing is returned.
 */
const insertPayment = sql<IInsertPaymentQuery>`
  INSERT INTO payments AS pm (id, created_at, updated_at, merchant_id, kind, status, customer_id,
    invoice_id, subscription_id, period, signature, mint, amount, fee, destination, instruction,
    "references", excess, payer, note, slot, finalized_at, details)
  VALUES ($id!, $at!, $at!, $merchantId!, $kind!, $status!, $customerId, $invoiceId,
    $subscriptionId, $period, $signature, $mint!, $amount!, $fee!, $destination, $instruction,
    $references, $excess!, $payer, $note, $slot, $finalizedAt, $details::jsonb)
  ON CONFLICT DO NOTHING
  RETURNING pm.id, pm.merchant_id, pm.kind, pm.status, pm.amount::text AS "amount!",
         pm.fee::text AS "fee!", pm.destination, pm."references", pm.excess::text AS "excess!",
         pm.mint, pm.signature, pm.payer, pm.invoice_id, pm.subscription_id, pm.period,
         pm.customer_id, pm.note, pm.details, pm.slot::text AS slot,
         api_time(pm.created_at) AS "created_at!", api_time(pm.finalized_at) AS finalized_at,
         api_time(pm.updated_at) AS "updated_at!"`;

/**
 * `insertPayment` of several lines at once (the lines of a group of charges settled together),
 * at one time: one statement. A line that conflicts is left out, as one alone is.
 */
const insertPayments = sql<IInsertPaymentsQuery>`
  INSERT INTO payments AS pm (id, created_at, updated_at, merchant_id, kind, status, customer_id,
    invoice_id, subscription_id, period, signature, mint, amount, fee, destination, instruction,
    "references", excess, payer, note, slot, finalized_at, details)
  SELECT l.id, $at!, $at!, l.merchant_id, l.kind, l.status, l.customer_id, l.invoice_id,
         l.subscription_id, l.period, l.signature, l.mint, l.amount, l.fee, l.destination,
         l.instruction, l."references", l.excess, l.payer, l.note, l.slot, l.finalized_at,
         l.details
    FROM jsonb_to_recordset($lines!::jsonb) AS l(id uuid, merchant_id uuid, kind text,
         status text, customer_id uuid, invoice_id uuid, subscription_id uuid, period int,
         signature text, mint text, amount bigint, fee bigint, destination text, instruction int,
         "references" text[], excess bigint, payer text, note text, slot bigint,
         finalized_at timestamptz, details jsonb)
  ON CONFLICT DO NOTHING
  RETURNING pm.id, pm.merchant_id, pm.kind, pm.status, pm.amount::text AS "amount!",
         pm.fee::text AS "fee!", pm.destination, pm."references", pm.excess::text AS "excess!",
         pm.mint, pm.signature, pm.payer, pm.invoice_id, pm.subscription_id, pm.period,
         pm.customer_id, pm.note, pm.details, pm.slot::text AS slot,
         api_time(pm.created_at) AS "created_at!", api_time(pm.finalized_at) AS finalized_at,
         api_time(pm.updated_at) AS "updated_at!"`;

/** Compare-and-set of an unattributed line of the merchant onto an invoice: the line as now. */
const attachPayment = sql<IAttachPaymentQuery>`
  UPDATE payments pm SET kind = 'invoice', invoice_id = $invoiceId!, customer_id = $customerId!,
         excess = $excess!::bigint, note = NULL, updated_at = $at!
   WHERE pm.id = $id! AND pm.merchant_id = $merchantId! AND pm.kind = 'unattributed'
  RETURNING pm.id, pm.merchant_id, pm.kind, pm.status, pm.amount::text AS "amount!",
         pm.fee::text AS "fee!", pm.destination, pm."references", pm.excess::text AS "excess!",
         pm.mint, pm.signature, pm.payer, pm.invoice_id, pm.subscription_id, pm.period,
         pm.customer_id, pm.note, pm.details, pm.slot::text AS slot,
         api_time(pm.created_at) AS "created_at!", api_time(pm.finalized_at) AS finalized_at,
         api_time(pm.updated_at) AS "updated_at!"`;

/** An unattributed line of the merchant, locked for the caller's transaction. */
const lockUnattributed = sql<ILockUnattributedQuery>`
  SELECT amount::text AS "amount!", mint, status, refund_held::text AS "refund_held!" FROM payments
   WHERE id = $id! AND merchant_id = $merchantId! AND kind = 'unattributed' FOR UPDATE`;

/** A confirmed line made finalized: the line as now. */
const finalizePayment = sql<IFinalizePaymentQuery>`
  UPDATE payments pm SET status = 'finalized', finalized_at = $at!, updated_at = $at!
   WHERE pm.id = $id! AND pm.status = 'confirmed'
  RETURNING pm.id, pm.merchant_id, pm.kind, pm.status, pm.amount::text AS "amount!",
         pm.fee::text AS "fee!", pm.destination, pm."references", pm.excess::text AS "excess!",
         pm.mint, pm.signature, pm.payer, pm.invoice_id, pm.subscription_id, pm.period,
         pm.customer_id, pm.note, pm.details, pm.slot::text AS slot,
         api_time(pm.created_at) AS "created_at!", api_time(pm.finalized_at) AS finalized_at,
         api_time(pm.updated_at) AS "updated_at!"`;

/** An invoice line of the merchant, this signature and mint, with no destination. */
const findLegacyInvoiceLine = sql<IFindLegacyInvoiceLineQuery>`
  SELECT 1 AS one FROM payments
   WHERE merchant_id = $merchantId! AND signature = $signature! AND mint = $mint!
     AND kind = 'invoice' AND destination IS NULL
   LIMIT 1`;

/** The merchant's line (of any kind). */
const findPayment = sql<IFindPaymentQuery>`
  SELECT id FROM payments WHERE id = $id! AND merchant_id = $merchantId!`;

/** When the merchant's line was written (the pool's text of the timestamp): a page's cursor. */
const paymentCreatedAt = sql<IPaymentCreatedAtQuery>`
  SELECT created_at FROM payments WHERE id = $id! AND merchant_id = $merchantId!`;

/** Every statement on `payments` but the billing engine's own: the ledger's owner (issue 22). */
@Injectable()
export class PaymentsRepository {
  constructor(private readonly db: Db) {}

  /**
   * The merchant's lines, newest first, one `page` of them (`WHOLE_LIST`: all), through a cursor
   * (see the list's statements for the way each reads).
   */
  async list(merchantId: string, filters: PaymentFilters, page: ListPage): Promise<PaymentRow[]> {
    const { invoice_id: invoiceId, subscription_id: subscriptionId } = filters;
    const narrow = {
      merchantId,
      customerId: filters.customer_id,
      status: filters.status,
      kind: filters.kind,
      limit: page.limit,
      afterCreatedAt: page.afterCreatedAt,
      afterId: page.afterId,
    };
    const rows = await this.db.readAll(
      invoiceId !== undefined
        ? typedCursor(listInvoicePayments, { ...narrow, invoiceId, subscriptionId })
        : subscriptionId !== undefined
          ? typedCursor(listSubscriptionPayments, { ...narrow, subscriptionId })
          : typedCursor(listPayments, narrow),
    );
    return rows.map(paymentRow);
  }

  /** When the merchant's line was written (a page's cursor); undefined when there is none. */
  async createdAt(merchantId: string, id: string): Promise<string | undefined> {
    const [row] = await paymentCreatedAt.run({ id, merchantId }, this.db);
    return row?.created_at;
  }

  /**
   * The line, unless it conflicts with one written before (`ON CONFLICT DO NOTHING`: an invoice
   * payment seen twice is one line). @returns the row, or null on a conflict.
   */
  async insert(tx: SqlTx, row: PaymentInsertRow): Promise<PaymentRow | null> {
    const [inserted] = await insertPayment.run(
      {
        id: row.id,
        at: row.at,
        merchantId: row.merchant_id,
        kind: row.kind,
        status: row.status,
        customerId: row.customer_id,
        invoiceId: row.invoice_id,
        subscriptionId: row.subscription_id,
        period: row.period,
        signature: row.signature,
        mint: row.mint,
        amount: row.amount,
        fee: row.fee,
        destination: row.destination,
        instruction: row.instruction,
        references: row.references,
        excess: row.excess,
        payer: row.payer,
        note: row.note,
        slot: row.slot,
        finalizedAt: row.finalized_at,
        details: row.details === null ? null : JSON.stringify(row.details),
      },
      tx,
    );
    return inserted === undefined ? null : paymentRow(inserted);
  }

  /**
   * Several lines written at `at` in one statement (`insert` of each): each line as written, in
   * the order given, or null for one that conflicts with a line already there.
   */
  async insertMany(
    tx: SqlTx,
    rows: readonly Omit<PaymentInsertRow, 'at'>[],
    at: Date,
  ): Promise<(PaymentRow | null)[]> {
    const lines = rows.map((row) => ({
      ...row,
      finalized_at: row.finalized_at?.toISOString() ?? null,
    }));
    const inserted = await insertPayments.run({ lines: JSON.stringify(lines), at }, tx);
    const byId = new Map(inserted.map((row) => [row.id, paymentRow(row)]));
    return rows.map((row) => byId.get(row.id) ?? null);
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
    const [attached] = await attachPayment.run({ ...to, at, id, merchantId }, tx);
    return attached === undefined ? null : paymentRow(attached);
  }

  /** An unattributed line of the merchant, locked for the caller's transaction. */
  async lockUnattributed(
    tx: SqlTx,
    merchantId: string,
    id: string,
  ): Promise<UnattributedRow | null> {
    const [row] = await lockUnattributed.run({ id, merchantId }, tx);
    // `status` is one of the entity's (a text column: typed `string`).
    return (row as UnattributedRow | undefined) ?? null;
  }

  /** A confirmed line made finalized; null when it is not confirmed (any more). */
  async finalize(tx: SqlTx, id: string, at: Date): Promise<PaymentRow | null> {
    const [finalized] = await finalizePayment.run({ id, at }, tx);
    return finalized === undefined ? null : paymentRow(finalized);
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
    const rows = await findLegacyInvoiceLine.run({ merchantId, signature, mint }, tx);
    return rows.length > 0;
  }

  /** Whether the merchant has this line (of any kind). */
  async exists(tx: SqlTx, merchantId: string, id: string): Promise<boolean> {
    const rows = await findPayment.run({ id, merchantId }, tx);
    return rows.length > 0;
  }
}
