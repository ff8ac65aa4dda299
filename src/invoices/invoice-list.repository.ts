import { sql } from '../database/typed-sql';
import type { ListPage } from '../common/pagination';
import type { Db } from '../database/db';
import { escapeLike } from '../database/sql';
import { typedCursor } from '../database/row-batches';
import type { InvoiceStatus } from './invoice-status';
import type {
  IInvoiceCreatedAtQuery,
  IListInvoicesBySearchQuery,
  IListInvoicesByStatusAndSearchQuery,
  IListInvoicesByStatusQuery,
  IListInvoicesQuery,
  IListInvoicesResult,
} from './invoice-list.repository.types';

/** The list's filters: `search` is a case-insensitive substring (see `streamInvoiceList`). */
export interface InvoiceListFilters {
  status?: InvoiceStatus;
  search?: string;
}

/**
 * One row of the invoice list: the parts of the JSON that the triggers keep rendered on the rows
 * (`list_json_*`, `customer_json`), the line items, and the amounts as their digits. Read by
 * `invoiceListItemJson` (src/invoices/invoice-json.ts).
 */
export type InvoiceListRow = IListInvoicesResult;

/*
 * The invoice list, newest first, one statement per filter the list takes (a text built per
 * request could not be typed). Its columns: the parts of the JSON that hold no money and no
 * configuration (ids, number, status, timestamps, free text, the nested customer), kept rendered
 * on the rows by triggers generated from the shapes (`INVOICE_JSON`, `CUSTOMER_JSON`), so the
 * list formats none of them per request; the amounts as their digits (formatted by the money
 * module); the line items rendered at creation (`line_items_json`), or the stored ones for an
 * invoice older than that column. The ORDER BY follows the (merchant_id, created_at, id) index:
 * no sort.
 *
 * Each takes the page (`ListPage`): `afterId` null reads from the top, `limit` null reads to the
 * end (`LIMIT NULL` is no limit). They are read through a cursor, an unnamed statement that
 * PostgreSQL plans for the values it is given each time (never a generic plan): `$afterId IS
 * NULL` folds to true or false before planning, so a page after a cursor starts at that row of
 * the index and a whole list reads as it did without the page.
 */

/** The merchant's invoices. */
const listInvoices = sql<IListInvoicesQuery>`
  SELECT i.id, i.list_json_head AS "list_json_head!",
         COALESCE(i.line_items_json, i.line_items::text) AS "line_items!",
         i.line_items_json IS NOT NULL AS "line_items_rendered!", i.subtotal::text AS "subtotal!",
         i.tax_bps, i.tax::text AS "tax!", i.total::text AS "total!",
         i.amount_paid::text AS "amount_paid!",
         i.amount_refunded::text AS "amount_refunded!",
         i.amount_credited::text AS "amount_credited!",
         i.amount_credited_to_balance::text AS "amount_credited_to_balance!",
         GREATEST(i.total - i.amount_paid - i.amount_credited, 0)::text AS "amount_due!",
         i.list_json_due_date AS "list_json_due_date!", i.list_json_tail AS "list_json_tail!",
         c.list_json AS "customer_json!"
    FROM invoices i JOIN customers c ON c.id = i.customer_id
   WHERE i.merchant_id = $merchantId!
     AND ($afterId::uuid IS NULL OR (i.created_at, i.id) < ($afterCreatedAt::timestamptz, $afterId))
   ORDER BY i.created_at DESC, i.id DESC
   LIMIT $limit::int`;

/** The merchant's invoices in one status. */
const listInvoicesByStatus = sql<IListInvoicesByStatusQuery>`
  SELECT i.id, i.list_json_head AS "list_json_head!",
         COALESCE(i.line_items_json, i.line_items::text) AS "line_items!",
         i.line_items_json IS NOT NULL AS "line_items_rendered!", i.subtotal::text AS "subtotal!",
         i.tax_bps, i.tax::text AS "tax!", i.total::text AS "total!",
         i.amount_paid::text AS "amount_paid!",
         i.amount_refunded::text AS "amount_refunded!",
         i.amount_credited::text AS "amount_credited!",
         i.amount_credited_to_balance::text AS "amount_credited_to_balance!",
         GREATEST(i.total - i.amount_paid - i.amount_credited, 0)::text AS "amount_due!",
         i.list_json_due_date AS "list_json_due_date!", i.list_json_tail AS "list_json_tail!",
         c.list_json AS "customer_json!"
    FROM invoices i JOIN customers c ON c.id = i.customer_id
   WHERE i.merchant_id = $merchantId! AND i.status = $status!
     AND ($afterId::uuid IS NULL OR (i.created_at, i.id) < ($afterCreatedAt::timestamptz, $afterId))
   ORDER BY i.created_at DESC, i.id DESC
   LIMIT $limit::int`;

/*
 * The searches (D11): the merchant's invoices whose onchainId, number or memo, or whose
 * customer's label or wallet, matches the ILIKE `pattern`. The invoice's columns and the
 * customer's are two tables, and an OR across a join can use no index: it read every invoice of
 * the merchant and its customer (seconds at a million invoices). So the matches are found in two
 * halves, each of which can use its table's trigram index (`invoices_search_idx`,
 * `customers_search_idx`) or, for a pattern too short or too common for trigrams to narrow, the
 * (merchant_id, created_at, id) index in order, stopping at `limit`: the planner chooses per
 * half, for the pattern given. Each half is a page of its own (the same cursor and `limit`); the
 * page is the first `limit` of their union, joined to what the list shows. An invoice's customer
 * is its merchant's (invoices upsert their customer by merchant), so the second half looks among
 * the merchant's customers only. The rows and their order are the OR's.
 */

/** The merchant's invoices that match the ILIKE `pattern`. */
const listInvoicesBySearch = sql<IListInvoicesBySearchQuery>`
  WITH found AS (
    (SELECT i.id FROM invoices i
      WHERE i.merchant_id = $merchantId!
        AND (i.onchain_id ILIKE $pattern! OR i.memo ILIKE $pattern!
             OR invoice_number(i.number) ILIKE $pattern!)
        AND ($afterId::uuid IS NULL
             OR (i.created_at, i.id) < ($afterCreatedAt::timestamptz, $afterId))
      ORDER BY i.created_at DESC, i.id DESC LIMIT $limit::int)
    UNION
    (SELECT i.id FROM invoices i JOIN customers k ON k.id = i.customer_id
      WHERE i.merchant_id = $merchantId! AND k.merchant_id = $merchantId!
        AND (k.label ILIKE $pattern! OR k.wallet_address ILIKE $pattern!)
        AND ($afterId::uuid IS NULL
             OR (i.created_at, i.id) < ($afterCreatedAt::timestamptz, $afterId))
      ORDER BY i.created_at DESC, i.id DESC LIMIT $limit::int)
  )
  SELECT i.id, i.list_json_head AS "list_json_head!",
         COALESCE(i.line_items_json, i.line_items::text) AS "line_items!",
         i.line_items_json IS NOT NULL AS "line_items_rendered!", i.subtotal::text AS "subtotal!",
         i.tax_bps, i.tax::text AS "tax!", i.total::text AS "total!",
         i.amount_paid::text AS "amount_paid!",
         i.amount_refunded::text AS "amount_refunded!",
         i.amount_credited::text AS "amount_credited!",
         i.amount_credited_to_balance::text AS "amount_credited_to_balance!",
         GREATEST(i.total - i.amount_paid - i.amount_credited, 0)::text AS "amount_due!",
         i.list_json_due_date AS "list_json_due_date!", i.list_json_tail AS "list_json_tail!",
         c.list_json AS "customer_json!"
    FROM found JOIN invoices i ON i.id = found.id JOIN customers c ON c.id = i.customer_id
   ORDER BY i.created_at DESC, i.id DESC
   LIMIT $limit::int`;

/** The merchant's invoices in one status that match the ILIKE `pattern` (both filters above). */
const listInvoicesByStatusAndSearch = sql<IListInvoicesByStatusAndSearchQuery>`
  WITH found AS (
    (SELECT i.id FROM invoices i
      WHERE i.merchant_id = $merchantId! AND i.status = $status!
        AND (i.onchain_id ILIKE $pattern! OR i.memo ILIKE $pattern!
             OR invoice_number(i.number) ILIKE $pattern!)
        AND ($afterId::uuid IS NULL
             OR (i.created_at, i.id) < ($afterCreatedAt::timestamptz, $afterId))
      ORDER BY i.created_at DESC, i.id DESC LIMIT $limit::int)
    UNION
    (SELECT i.id FROM invoices i JOIN customers k ON k.id = i.customer_id
      WHERE i.merchant_id = $merchantId! AND i.status = $status! AND k.merchant_id = $merchantId!
        AND (k.label ILIKE $pattern! OR k.wallet_address ILIKE $pattern!)
        AND ($afterId::uuid IS NULL
             OR (i.created_at, i.id) < ($afterCreatedAt::timestamptz, $afterId))
      ORDER BY i.created_at DESC, i.id DESC LIMIT $limit::int)
  )
  SELECT i.id, i.list_json_head AS "list_json_head!",
         COALESCE(i.line_items_json, i.line_items::text) AS "line_items!",
         i.line_items_json IS NOT NULL AS "line_items_rendered!", i.subtotal::text AS "subtotal!",
         i.tax_bps, i.tax::text AS "tax!", i.total::text AS "total!",
         i.amount_paid::text AS "amount_paid!",
         i.amount_refunded::text AS "amount_refunded!",
         i.amount_credited::text AS "amount_credited!",
         i.amount_credited_to_balance::text AS "amount_credited_to_balance!",
         GREATEST(i.total - i.amount_paid - i.amount_credited, 0)::text AS "amount_due!",
         i.list_json_due_date AS "list_json_due_date!", i.list_json_tail AS "list_json_tail!",
         c.list_json AS "customer_json!"
    FROM found JOIN invoices i ON i.id = found.id JOIN customers c ON c.id = i.customer_id
   ORDER BY i.created_at DESC, i.id DESC
   LIMIT $limit::int`;

/** When the merchant's invoice was created (the pool's text of the timestamp): a page's cursor. */
const invoiceCreatedAt = sql<IInvoiceCreatedAtQuery>`
  SELECT created_at FROM invoices WHERE id = $id! AND merchant_id = $merchantId!`;

/** When the merchant's invoice was created, or undefined (absent or another merchant's). */
export async function findInvoiceCreatedAt(
  db: Db,
  merchantId: string,
  id: string,
): Promise<string | undefined> {
  const [row] = await invoiceCreatedAt.run({ id, merchantId }, db);
  return row?.created_at;
}

/**
 * The merchant's invoices (the statement of the filters given), newest first, one page of them
 * (`ListPage`; `WHOLE_LIST` for all), handed to `onBatch` a batch of rows at a time through a
 * cursor (`Db.forEachBatch`). Part of `InvoicesRepository` (its `streamList`), in a file of its
 * own for its four statements.
 */
export function streamInvoiceList(
  db: Db,
  merchantId: string,
  { status, search }: InvoiceListFilters,
  page: ListPage,
  onBatch: (rows: InvoiceListRow[]) => Promise<boolean>,
): Promise<void> {
  const { limit, afterCreatedAt, afterId } = page;
  const paged = { merchantId, limit, afterCreatedAt, afterId };
  if (search) {
    const pattern = `%${escapeLike(search)}%`;
    return db.forEachBatch(
      status
        ? typedCursor(listInvoicesByStatusAndSearch, { ...paged, status, pattern })
        : typedCursor(listInvoicesBySearch, { ...paged, pattern }),
      onBatch,
    );
  }
  return db.forEachBatch(
    status
      ? typedCursor(listInvoicesByStatus, { ...paged, status })
      : typedCursor(listInvoices, paged),
    onBatch,
  );
}
