import { Injectable } from '@nestjs/common';
import { sql } from '../database/typed-sql';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import type { MintSymbol } from '../solana/mints';
import type { StoredLineItem } from './entities/invoice.entity';
import type { ListPage } from '../common/pagination';
import {
  findInvoiceCreatedAt,
  type InvoiceListFilters,
  type InvoiceListRow,
  streamInvoiceList,
} from './invoice-list.repository';
import type { InvoiceStatus } from './invoice-status';
import type {
  IAddPaidQuery,
  IAddCreditedQuery,
  IAddCreditedToBalanceQuery,
  IAddRefundedQuery,
  IFindWithCustomerQuery,
  IFindWithCustomerResult,
  IListForCustomerQuery,
  IListForCustomerResult,
  ILockByReferencesQuery,
  ILockByReferencesResult,
  ILockCoveredQuery,
  ILockForPaymentQuery,
  IMarkOverdueQuery,
  IMoveStatusQuery,
  INextNumberQuery,
} from './invoices.repository.types';

/**
 * An `invoices` row as PostgreSQL returns it (bigints as text: never through a float;
 * timestamps ISO 8601 UTC by `api_time`). `status` and `mint` are text columns holding one of
 * their enums, and `line_items` is jsonb holding the stored items: the generated type says
 * `string` and `Json`, narrowed here.
 */
export type InvoiceRow = Omit<IListForCustomerResult, 'status' | 'mint' | 'line_items'> & {
  status: InvoiceStatus;
  mint: MintSymbol;
  line_items: StoredLineItem[];
};

/**
 * A generated invoice row as an `InvoiceRow`: its text enums and jsonb items narrowed (the
 * generated `Json` does not overlap `StoredLineItem[]` for the compiler, hence `unknown`).
 */
export function narrowed<T extends IListForCustomerResult>(
  row: T,
): Omit<T, 'status' | 'mint' | 'line_items'> & InvoiceRow {
  return row as unknown as Omit<T, 'status' | 'mint' | 'line_items'> & InvoiceRow;
}

/** An invoice row joined with its customer's columns (`c_*`). */
export type InvoiceWithCustomerRow = InvoiceRow &
  Omit<IFindWithCustomerResult, keyof IListForCustomerResult>;

export type { InvoiceListFilters, InvoiceListRow };

/** An invoice as a payment of it needs it, read under its row lock (bigints as text). */
export type InvoicePaymentTarget = Omit<ILockByReferencesResult, 'mint'> & { mint: MintSymbol };

/** An invoice to create (Open, nothing paid); amounts in base units, as text. */
export interface InvoiceInsertRow {
  id: string;
  merchant_id: string;
  customer_id: string;
  number: number;
  onchain_id: string;
  memo: string | null;
  mint: MintSymbol;
  line_items: StoredLineItem[];
  /** The API's `lineItems` as JSON text (`lineItemsJson`), kept for the list. */
  line_items_json: string;
  subtotal: string;
  tax_bps: number;
  tax: string;
  total: string;
  /** What the customer's credit balance took off it at creation. */
  amount_credited: string;
  due_date: Date | null;
  chain_slot: number;
  /** Domain time of the write. */
  at: Date;
}

/** A write of the caller's to run in another statement (`EventsService.recordAll`'s `after`). */
export interface SqlWrite {
  sql: string;
  params: unknown[];
}

/**
 * The merchant's next invoice number, counted in `invoice_numbers`; the statement's commit does
 * not wait for the WAL flush (see `nextNumber`).
 */
const nextNumber = sql<INextNumberQuery>`
  WITH next AS (
    INSERT INTO invoice_numbers (merchant_id, last) VALUES ($merchantId!, 1)
    ON CONFLICT (merchant_id) DO UPDATE SET last = invoice_numbers.last + 1
    RETURNING last
  )
  SELECT last AS "last!", set_config('synchronous_commit', 'off', true) FROM next`;

/** The merchant's invoice with its customer's columns (`c_*`). */
const findWithCustomer = sql<IFindWithCustomerQuery>`
  SELECT i.id, i.merchant_id, i.customer_id, i.number, i.status, i.onchain_id, i.memo, i.mint,
         i.line_items, i.subtotal::text AS "subtotal!", i.tax_bps, i.tax::text AS "tax!",
         i.total::text AS "total!", i.amount_paid::text AS "amount_paid!",
         i.amount_refunded::text AS "amount_refunded!",
         i.amount_credited::text AS "amount_credited!",
         i.amount_credited_to_balance::text AS "amount_credited_to_balance!",
         GREATEST(i.total - i.amount_paid - i.amount_credited, 0)::text AS "amount_due!",
         api_time(i.due_date) AS due_date, api_time(i.paid_at) AS paid_at, i.payment_signature,
         api_time(i.created_at) AS "created_at!", api_time(i.updated_at) AS "updated_at!",
         c.wallet_address AS c_wallet_address, c.email AS c_email, c.label AS c_label,
         api_time(c.created_at) AS "c_created_at!", api_time(c.updated_at) AS "c_updated_at!"
    FROM invoices i JOIN customers c ON c.id = i.customer_id
   WHERE i.id = $id! AND i.merchant_id = $merchantId!`;

/** A customer's invoices, newest first. */
const listForCustomer = sql<IListForCustomerQuery>`
  SELECT i.id, i.merchant_id, i.customer_id, i.number, i.status, i.onchain_id, i.memo, i.mint,
         i.line_items, i.subtotal::text AS "subtotal!", i.tax_bps, i.tax::text AS "tax!",
         i.total::text AS "total!", i.amount_paid::text AS "amount_paid!",
         i.amount_refunded::text AS "amount_refunded!",
         i.amount_credited::text AS "amount_credited!",
         i.amount_credited_to_balance::text AS "amount_credited_to_balance!",
         GREATEST(i.total - i.amount_paid - i.amount_credited, 0)::text AS "amount_due!",
         api_time(i.due_date) AS due_date, api_time(i.paid_at) AS paid_at, i.payment_signature,
         api_time(i.created_at) AS "created_at!", api_time(i.updated_at) AS "updated_at!"
    FROM invoices i WHERE i.merchant_id = $merchantId! AND i.customer_id = $customerId!
   ORDER BY i.created_at DESC, i.id DESC`;

/**
 * Moves the invoice to `to` only from one of `from`, checked by the UPDATE itself under the
 * row's lock; `paid_at` is stamped when `paid`, the signature kept when none is given.
 */
const moveStatus = sql<IMoveStatusQuery>`
  UPDATE invoices SET status = $to!, updated_at = $at!,
         paid_at = CASE WHEN $paid! THEN $at!::timestamptz ELSE paid_at END,
         payment_signature = COALESCE($signature, payment_signature)
   WHERE id = $id! AND merchant_id = $merchantId! AND status = ANY($from!::text[])
   RETURNING id`;

/** Stamps `overdue_at` on an Open invoice past its due date at `now`, once. */
const markOverdue = sql<IMarkOverdueQuery>`
  UPDATE invoices SET overdue_at = $now!, updated_at = $now!
   WHERE id = $id! AND merchant_id = $merchantId! AND status = 'Open' AND overdue_at IS NULL
     AND due_date < $now!
   RETURNING id`;

/** The merchant's invoices with these references, locked in id order. */
const lockByReferences = sql<ILockByReferencesQuery>`
  SELECT id, onchain_id, status, total::text AS "total!", amount_paid::text AS "amount_paid!",
         amount_credited::text AS "amount_credited!",
         amount_credited_to_balance::text AS "amount_credited_to_balance!", customer_id, mint
    FROM invoices WHERE merchant_id = $merchantId! AND onchain_id = ANY($references!::text[])
   ORDER BY id FOR UPDATE`;

/** The merchant's invoice, locked for a payment of it. */
const lockForPayment = sql<ILockForPaymentQuery>`
  SELECT id, onchain_id, status, total::text AS "total!", amount_paid::text AS "amount_paid!",
         amount_credited::text AS "amount_credited!",
         amount_credited_to_balance::text AS "amount_credited_to_balance!", customer_id, mint
    FROM invoices WHERE id = $id! AND merchant_id = $merchantId! FOR UPDATE`;

/**
 * The invoice, locked: Open with its finalized payments (a sum over `payments`, the payments
 * module's table) reaching its total less what credits took off it.
 */
const lockCovered = sql<ILockCoveredQuery>`
  SELECT i.status = 'Open' AND COALESCE((
           SELECT SUM(pm.amount) FROM payments pm
            WHERE pm.invoice_id = i.id AND pm.kind = 'invoice' AND pm.status = 'finalized'
              AND pm.note IS NULL), 0) >= i.total - i.amount_credited AS "covered!", i.merchant_id
    FROM invoices i WHERE i.id = $id! FOR UPDATE`;

/** `amount_paid` grows by `amount` (base units, as text). */
const addPaid = sql<IAddPaidQuery>`
  UPDATE invoices SET amount_paid = amount_paid + $amount!::bigint, updated_at = $at!
   WHERE id = $id!`;

/** `amount_credited` grows by `amount` (base units, as text): a credit note reduced what is due. */
const addCredited = sql<IAddCreditedQuery>`
  UPDATE invoices SET amount_credited = amount_credited + $amount!::bigint, updated_at = $at!
   WHERE id = $id! AND merchant_id = $merchantId!`;

/** `amount_credited_to_balance` grows by `amount`: a credit note left a credit of its payments. */
const addCreditedToBalance = sql<IAddCreditedToBalanceQuery>`
  UPDATE invoices
     SET amount_credited_to_balance = amount_credited_to_balance + $amount!::bigint, updated_at = $at!
   WHERE id = $id! AND merchant_id = $merchantId!`;

/** `amount_refunded` grows by `amount` (base units, as text): a refund of its payment landed. */
const addRefunded = sql<IAddRefundedQuery>`
  UPDATE invoices SET amount_refunded = amount_refunded + $amount!::bigint, updated_at = $at!
   WHERE id = $id! AND merchant_id = $merchantId!`;

/**
 * Every statement on `invoices` and `invoice_numbers`: the tables' one owner (issue 22), typed
 * by pgtyped from the migrated schema (`npm run db:types`).
 */
@Injectable()
export class InvoicesRepository {
  constructor(private readonly db: Db) {}

  /**
   * The merchant's next invoice number (D16), in a statement that commits on its own (`ex` is a
   * session, not a transaction): the counter row is locked only for that statement, not until
   * the invoice commits (held across the invoice's statements and its commit's WAL flush, it
   * made every invoice of a merchant wait for the one before: ~300 a second). Its commit does
   * not wait for the WAL flush (`synchronous_commit` off for this statement alone): the
   * invoice's own commit comes later in the WAL and flushes it, so a number on a committed
   * invoice is durable, and a crash can only forget a number no invoice carries. An invoice that
   * fails after this leaves a gap in the numbers, never a duplicate.
   */
  async nextNumber(ex: SqlTx, merchantId: string): Promise<number> {
    const [next] = await nextNumber.run({ merchantId }, ex);
    return next.last;
  }

  /**
   * The INSERT of a new invoice, for the caller to run in its transaction with its events in one
   * statement (`EventsService.recordAll`'s `after`): one round trip. A text composed into the
   * caller's statement, so not a pgtyped statement of its own.
   */
  insertWrite(row: InvoiceInsertRow): SqlWrite {
    return {
      sql: `INSERT INTO invoices (id, merchant_id, customer_id, number, status, onchain_id,
              memo, mint, line_items, line_items_json, subtotal, tax_bps, tax, total,
              amount_paid, amount_credited, due_date, chain_slot, created_at, updated_at)
            VALUES (?, ?, ?, ?, 'Open', ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?)`,
      params: [
        row.id,
        row.merchant_id,
        row.customer_id,
        row.number,
        row.onchain_id,
        row.memo,
        row.mint,
        JSON.stringify(row.line_items),
        row.line_items_json,
        row.subtotal,
        row.tax_bps,
        row.tax,
        row.total,
        row.amount_credited,
        row.due_date,
        row.chain_slot,
        row.at,
        row.at,
      ],
    };
  }

  /**
   * The merchant's invoices with their customers' rendered JSON, newest first, handed to
   * `onBatch` a batch of rows at a time through a cursor (`Db.forEachBatch`). `status`
   * filters; `search` is a case-insensitive substring of the onchainId, number, memo, or the
   * customer's label or wallet (D11). One `page` of them (`WHOLE_LIST`: all).
   */
  streamList(
    merchantId: string,
    filters: InvoiceListFilters,
    page: ListPage,
    onBatch: (rows: InvoiceListRow[]) => Promise<boolean>,
  ): Promise<void> {
    return streamInvoiceList(this.db, merchantId, filters, page, onBatch);
  }

  /** When the merchant's invoice was created (a page's cursor); undefined when there is none. */
  createdAt(merchantId: string, id: string): Promise<string | undefined> {
    return findInvoiceCreatedAt(this.db, merchantId, id);
  }

  /**
   * The merchant's invoice with its customer; undefined when absent or another merchant's. On
   * `ex`: in the caller's transaction when there is one (a transition reads what it just wrote).
   */
  async findWithCustomer(
    ex: SqlTx,
    merchantId: string,
    id: string,
  ): Promise<InvoiceWithCustomerRow | undefined> {
    const [row] = await findWithCustomer.run({ merchantId, id }, ex);
    return row && narrowed(row);
  }

  /** A customer's invoices, newest first. */
  async listForCustomer(ex: SqlTx, merchantId: string, customerId: string): Promise<InvoiceRow[]> {
    return (await listForCustomer.run({ merchantId, customerId }, ex)).map(narrowed);
  }

  /**
   * Moves the merchant's invoice to `to` only from one of `from` (checked by the UPDATE itself,
   * under the row's lock, so concurrent moves serialize), stamping `updated_at`, and `paid_at`
   * when `paid`. @returns whether it moved.
   */
  async moveStatus(
    ex: SqlTx,
    merchantId: string,
    id: string,
    move: {
      from: readonly InvoiceStatus[];
      to: InvoiceStatus;
      paid: boolean;
      signature: string | null;
    },
    at: Date,
  ): Promise<boolean> {
    const { to, paid, signature } = move;
    const moved = await moveStatus.run(
      { to, at, paid, signature, id, merchantId, from: [...move.from] },
      ex,
    );
    return moved.length > 0;
  }

  /**
   * Stamps `overdue_at` on the merchant's invoice when it is Open, past its due date at `now`
   * and not stamped before. @returns whether it did.
   */
  async markOverdue(ex: SqlTx, merchantId: string, id: string, now: Date): Promise<boolean> {
    const marked = await markOverdue.run({ now, id, merchantId }, ex);
    return marked.length > 0;
  }

  /**
   * The merchant's invoices whose references are among `references`, locked in one order (two
   * receipts naming the same invoices never wait on each other in a circle).
   */
  async lockByReferences(
    tx: SqlTx,
    merchantId: string,
    references: string[],
  ): Promise<InvoicePaymentTarget[]> {
    return (await lockByReferences.run({ merchantId, references }, tx)) as InvoicePaymentTarget[];
  }

  /** The merchant's invoice, locked for a payment of it; undefined when absent. */
  async lockForPayment(
    tx: SqlTx,
    merchantId: string,
    id: string,
  ): Promise<InvoicePaymentTarget | undefined> {
    const [invoice] = await lockForPayment.run({ id, merchantId }, tx);
    return invoice as InvoicePaymentTarget | undefined;
  }

  /**
   * Locks the invoice and tells whether it is Open with its finalized payments (a sum over
   * `payments`, the payments module's table, in the same statement) reaching its total.
   * @returns undefined when there is no such invoice.
   */
  async lockCovered(
    tx: SqlTx,
    id: string,
  ): Promise<{ covered: boolean; merchant_id: string } | undefined> {
    const [covered] = await lockCovered.run({ id }, tx);
    return covered;
  }

  /** `amount_paid` grows by `amount` (base units, as text). */
  async addPaid(tx: SqlTx, id: string, amount: string, at: Date): Promise<void> {
    await addPaid.run({ amount, at, id }, tx);
  }

  /** `amount_credited` grows by `amount` (base units, as text). */
  async addCredited(
    tx: SqlTx,
    merchantId: string,
    id: string,
    amount: string,
    at: Date,
  ): Promise<void> {
    await addCredited.run({ amount, at, id, merchantId }, tx);
  }

  /** `amount_credited_to_balance` grows by `amount` (base units, as text). */
  async addCreditedToBalance(
    tx: SqlTx,
    merchantId: string,
    id: string,
    amount: string,
    at: Date,
  ): Promise<void> {
    await addCreditedToBalance.run({ amount, at, id, merchantId }, tx);
  }

  /** `amount_refunded` grows by `amount` (base units, as text). */
  async addRefunded(
    tx: SqlTx,
    merchantId: string,
    id: string,
    amount: string,
    at: Date,
  ): Promise<void> {
    await addRefunded.run({ amount, at, id, merchantId }, tx);
  }
}
