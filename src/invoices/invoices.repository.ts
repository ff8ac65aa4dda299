import { Injectable } from '@nestjs/common';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { escapeLike, isoTimestamp } from '../database/sql';
import type { MintSymbol } from '../solana/mints';
import type { StoredLineItem } from './entities/invoice.entity';
import { InvoiceRow, InvoiceWithCustomerRow } from './invoice.mapper';
import type { InvoiceStatus } from './invoice-status';

/** The columns of an `InvoiceRow`, for a table aliased `i`. */
export const INVOICE_COLUMNS = `i.id, i.merchant_id, i.customer_id, i.number, i.status, i.onchain_id,
  i.memo, i.mint, i.line_items, i.subtotal::text AS subtotal, i.tax_bps, i.tax::text AS tax,
  i.total::text AS total, i.amount_paid::text AS amount_paid,
  GREATEST(i.total - i.amount_paid, 0)::text AS amount_due,
  ${isoTimestamp('i.due_date', 'due_date')}, ${isoTimestamp('i.paid_at', 'paid_at')},
  i.payment_signature, ${isoTimestamp('i.created_at', 'created_at')},
  ${isoTimestamp('i.updated_at', 'updated_at')}`;

/** Its customer's columns, for a customers table aliased `c`. */
export const INVOICE_CUSTOMER_COLUMNS = `c.wallet_address AS c_wallet_address, c.email AS c_email,
  c.label AS c_label, ${isoTimestamp('c.created_at', 'c_created_at')},
  ${isoTimestamp('c.updated_at', 'c_updated_at')}`;

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
  due_date: Date | null;
  chain_slot: number;
  /** Domain time of the write. */
  at: Date;
}

/** An invoice with what its checkout shows of the merchant and the customer billed. */
export interface CheckoutInvoiceRow extends InvoiceRow {
  merchant_name: string;
  merchant_wallet: string;
  customer_label: string | null;
  customer_wallet: string;
}

/** An invoice of a customer as the portal lists it (amounts as text). */
export interface PortalInvoiceRow {
  id: string;
  number: number;
  status: string;
  mint: string;
  total: string;
  amount_paid: string;
  due_date: string;
}

/** A write of the caller's to run in another statement (`EventsService.recordAll`'s `after`). */
export interface SqlWrite {
  sql: string;
  params: unknown[];
}

/** The list's filters: `search` is a case-insensitive substring (see `streamList`). */
export interface InvoiceListFilters {
  status?: InvoiceStatus;
  search?: string;
}

/** An invoice as a payment of it needs it, read under its row lock (bigints as text). */
export interface InvoicePaymentTarget {
  id: string;
  onchain_id: string;
  status: string;
  total: string;
  amount_paid: string;
  customer_id: string;
  mint: MintSymbol;
}

/**
 * The invoice list's columns, in the order of each array row of `streamList`: each one's name
 * (its index in `INVOICE_LIST_AT`) and its SQL. The parts of the JSON that hold no money and no
 * configuration (ids, number, status, timestamps, free text, the nested customer) are kept
 * rendered on the rows by database triggers (`list_json_*`, Migration20261124170000), so the
 * list formats none of them per request. Amounts come as their digits, formatted by the money
 * module (`invoiceListItemJson`).
 */
const INVOICE_LIST_COLUMNS = [
  ['id', 'i.id'],
  ['head', 'i.list_json_head'],
  ['lineItems', 'COALESCE(i.line_items_json, i.line_items::text)'],
  ['lineItemsRendered', 'i.line_items_json IS NOT NULL'],
  ['subtotal', 'i.subtotal::text'],
  ['taxBps', 'i.tax_bps'],
  ['tax', 'i.tax::text'],
  ['total', 'i.total::text'],
  ['amountPaid', 'i.amount_paid::text'],
  ['amountDue', 'GREATEST(i.total - i.amount_paid, 0)::text'],
  ['dueDate', 'i.list_json_due_date'],
  ['tail', 'i.list_json_tail'],
  ['customer', 'c.list_json'],
] as const;

export type InvoiceListColumn = (typeof INVOICE_LIST_COLUMNS)[number][0];

/** Each column's position in a row of the invoice list (`streamList`). */
export const INVOICE_LIST_AT = Object.fromEntries(
  INVOICE_LIST_COLUMNS.map(([name], index) => [name, index]),
) as Record<InvoiceListColumn, number>;

const INVOICE_LIST_SELECT = `SELECT ${INVOICE_LIST_COLUMNS.map(([, sql]) => sql).join(', ')}
  FROM invoices i JOIN customers c ON c.id = i.customer_id`;

const SELECT_WITH_CUSTOMER = `SELECT ${INVOICE_COLUMNS}, ${INVOICE_CUSTOMER_COLUMNS}
  FROM invoices i JOIN customers c ON c.id = i.customer_id`;

/** Every statement on `invoices` and `invoice_numbers`: the tables' one owner (issue 22). */
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
    const [next] = await ex.execute<{ last: number }[]>(
      `WITH next AS (
         INSERT INTO invoice_numbers (merchant_id, last) VALUES (?, 1)
         ON CONFLICT (merchant_id) DO UPDATE SET last = invoice_numbers.last + 1
         RETURNING last
       )
       SELECT last, set_config('synchronous_commit', 'off', true) FROM next`,
      [merchantId],
    );
    return next.last;
  }

  /**
   * The INSERT of a new invoice, for the caller to run in its transaction with its events in one
   * statement (`EventsService.recordAll`'s `after`): one round trip.
   */
  insertWrite(row: InvoiceInsertRow): SqlWrite {
    return {
      sql: `INSERT INTO invoices (id, merchant_id, customer_id, number, status, onchain_id,
              memo, mint, line_items, line_items_json, subtotal, tax_bps, tax, total,
              amount_paid, due_date, chain_slot, created_at, updated_at)
            VALUES (?, ?, ?, ?, 'Open', ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)`,
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
        row.due_date,
        row.chain_slot,
        row.at,
        row.at,
      ],
    };
  }

  /**
   * The merchant's invoices with their customers' rendered JSON, newest first, handed to
   * `onBatch` a batch of array rows at a time (columns at `INVOICE_LIST_AT`) through a cursor
   * (`Db.forEachRowBatch`). `status` filters; `search` is a case-insensitive substring of the
   * onchainId, number, memo, or the customer's label or wallet (D11).
   */
  streamList(
    merchantId: string,
    filters: InvoiceListFilters,
    onBatch: (rows: unknown[][]) => Promise<boolean>,
  ): Promise<void> {
    const params: unknown[] = [merchantId];
    let where = 'i.merchant_id = ?';
    if (filters.status) {
      where += ' AND i.status = ?';
      params.push(filters.status);
    }
    if (filters.search) {
      const pattern = `%${escapeLike(filters.search)}%`;
      where += ` AND (i.onchain_id ILIKE ? OR i.memo ILIKE ? OR c.label ILIKE ?
        OR c.wallet_address ILIKE ? OR invoice_number(i.number) ILIKE ?)`;
      params.push(pattern, pattern, pattern, pattern, pattern);
    }
    return this.db.forEachRowBatch(
      `${INVOICE_LIST_SELECT} WHERE ${where} ORDER BY i.created_at DESC, i.id DESC`,
      params,
      onBatch,
    );
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
    const [row] = await ex.execute<InvoiceWithCustomerRow[]>(
      `${SELECT_WITH_CUSTOMER} WHERE i.id = ? AND i.merchant_id = ?`,
      [id, merchantId],
    );
    return row;
  }

  /** A customer's invoices, newest first. */
  listForCustomer(merchantId: string, customerId: string): Promise<InvoiceRow[]> {
    return this.db.execute<InvoiceRow[]>(
      `SELECT ${INVOICE_COLUMNS} FROM invoices i WHERE i.merchant_id = ? AND i.customer_id = ?
          ORDER BY i.created_at DESC, i.id DESC`,
      [merchantId, customerId],
    );
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
    const moved = await ex.execute<{ id: string }[]>(
      `UPDATE invoices SET status = ?, updated_at = ?,
         paid_at = CASE WHEN ? THEN ?::timestamptz ELSE paid_at END,
         payment_signature = COALESCE(?, payment_signature)
        WHERE id = ? AND merchant_id = ? AND status IN (${move.from.map(() => '?').join(', ')})
        RETURNING id`,
      [move.to, at, move.paid, at, move.signature, id, merchantId, ...move.from],
    );
    return moved.length > 0;
  }

  /**
   * Stamps `overdue_at` on the merchant's invoice when it is Open, past its due date at `now`
   * and not stamped before. @returns whether it did.
   */
  async markOverdue(ex: SqlTx, merchantId: string, id: string, now: Date): Promise<boolean> {
    const marked = await ex.execute<{ id: string }[]>(
      `UPDATE invoices SET overdue_at = ?, updated_at = ?
        WHERE id = ? AND merchant_id = ? AND status = 'Open' AND overdue_at IS NULL
          AND due_date < ?
        RETURNING id`,
      [now, now, id, merchantId, now],
    );
    return marked.length > 0;
  }

  /**
   * The merchant's invoices whose references are among `references`, locked in one order (two
   * receipts naming the same invoices never wait on each other in a circle).
   */
  lockByReferences(
    tx: SqlTx,
    merchantId: string,
    references: string[],
  ): Promise<InvoicePaymentTarget[]> {
    return tx.execute<InvoicePaymentTarget[]>(
      `SELECT id, onchain_id, status, total::text AS total,
              amount_paid::text AS amount_paid, customer_id, mint
         FROM invoices WHERE merchant_id = ? AND onchain_id = ANY(?)
        ORDER BY id FOR UPDATE`,
      [merchantId, references],
    );
  }

  /** The merchant's invoice, locked for a payment of it; undefined when absent. */
  async lockForPayment(
    tx: SqlTx,
    merchantId: string,
    id: string,
  ): Promise<InvoicePaymentTarget | undefined> {
    const [invoice] = await tx.execute<InvoicePaymentTarget[]>(
      `SELECT id, onchain_id, status, total::text AS total, amount_paid::text AS amount_paid,
              customer_id, mint
         FROM invoices WHERE id = ? AND merchant_id = ? FOR UPDATE`,
      [id, merchantId],
    );
    return invoice;
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
    const [covered] = await tx.execute<{ covered: boolean; merchant_id: string }[]>(
      `SELECT i.status = 'Open' AND COALESCE((
                SELECT SUM(pm.amount) FROM payments pm
                 WHERE pm.invoice_id = i.id AND pm.kind = 'invoice' AND pm.status = 'finalized'
                   AND pm.note IS NULL), 0) >= i.total AS covered, i.merchant_id
         FROM invoices i WHERE i.id = ? FOR UPDATE`,
      [id],
    );
    return covered;
  }

  /** `amount_paid` grows by `amount` (base units, as text). */
  async addPaid(tx: SqlTx, id: string, amount: string, at: Date): Promise<void> {
    await tx.execute(
      `UPDATE invoices SET amount_paid = amount_paid + ?::bigint, updated_at = ? WHERE id = ?`,
      [amount, at, id],
    );
  }

  /**
   * An invoice by id alone, any merchant's (the public checkout: the payer holds the link), with
   * the merchant's name and wallet and the customer billed. Undefined when there is none.
   */
  async findForCheckout(id: string): Promise<CheckoutInvoiceRow | undefined> {
    const [row] = await this.db.execute<CheckoutInvoiceRow[]>(
      `SELECT ${INVOICE_COLUMNS}, m.name AS merchant_name, m.wallet_address AS merchant_wallet,
              c.label AS customer_label, c.wallet_address AS customer_wallet
         FROM invoices i JOIN merchants m ON m.id = i.merchant_id
         JOIN customers c ON c.id = i.customer_id
        WHERE i.id = ?`,
      [id],
    );
    return row;
  }

  /** A customer's invoices as the portal lists them, newest first. */
  listForPortal(merchantId: string, customerId: string): Promise<PortalInvoiceRow[]> {
    return this.db.execute<PortalInvoiceRow[]>(
      `SELECT i.id, i.number, i.status, i.mint, i.total::text AS total,
              i.amount_paid::text AS amount_paid, ${isoTimestamp('i.due_date', 'due_date')}
         FROM invoices i WHERE i.merchant_id = ? AND i.customer_id = ?
        ORDER BY i.created_at DESC, i.id DESC`,
      [merchantId, customerId],
    );
  }
}
