import { sql } from '@pgtyped/runtime';
import type { Db } from '../database/db';
import { escapeLike } from '../database/sql';
import { typedCursor } from '../database/row-batches';
import type { InvoiceStatus } from './invoice-status';
import type {
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
 * request could not be typed, and one statement with optional filters would be planned badly
 * once generic). Its columns: the parts of the JSON that hold no money and no configuration (ids,
 * number, status, timestamps, free text, the nested customer), kept rendered on the rows by
 * triggers generated from the shapes (`INVOICE_JSON`, `CUSTOMER_JSON`), so the list formats
 * none of them per request; the amounts as their digits (formatted by the money module); the
 * line items rendered at creation (`line_items_json`), or the stored ones for an invoice older
 * than that column. The ORDER BY follows the (merchant_id, created_at, id) index: no sort.
 */

/** The merchant's invoices. */
const listInvoices = sql<IListInvoicesQuery>`
  SELECT i.id, i.list_json_head AS "list_json_head!",
         COALESCE(i.line_items_json, i.line_items::text) AS "line_items!",
         i.line_items_json IS NOT NULL AS "line_items_rendered!", i.subtotal::text AS "subtotal!",
         i.tax_bps, i.tax::text AS "tax!", i.total::text AS "total!",
         i.amount_paid::text AS "amount_paid!",
         GREATEST(i.total - i.amount_paid, 0)::text AS "amount_due!",
         i.list_json_due_date AS "list_json_due_date!", i.list_json_tail AS "list_json_tail!",
         c.list_json AS "customer_json!"
    FROM invoices i JOIN customers c ON c.id = i.customer_id
   WHERE i.merchant_id = $merchantId!
   ORDER BY i.created_at DESC, i.id DESC`;

/** The merchant's invoices in one status. */
const listInvoicesByStatus = sql<IListInvoicesByStatusQuery>`
  SELECT i.id, i.list_json_head AS "list_json_head!",
         COALESCE(i.line_items_json, i.line_items::text) AS "line_items!",
         i.line_items_json IS NOT NULL AS "line_items_rendered!", i.subtotal::text AS "subtotal!",
         i.tax_bps, i.tax::text AS "tax!", i.total::text AS "total!",
         i.amount_paid::text AS "amount_paid!",
         GREATEST(i.total - i.amount_paid, 0)::text AS "amount_due!",
         i.list_json_due_date AS "list_json_due_date!", i.list_json_tail AS "list_json_tail!",
         c.list_json AS "customer_json!"
    FROM invoices i JOIN customers c ON c.id = i.customer_id
   WHERE i.merchant_id = $merchantId! AND i.status = $status!
   ORDER BY i.created_at DESC, i.id DESC`;

/**
 * The merchant's invoices whose onchainId, number, memo, or customer's label or wallet matches
 * the ILIKE `pattern` (D11).
 */
const listInvoicesBySearch = sql<IListInvoicesBySearchQuery>`
  SELECT i.id, i.list_json_head AS "list_json_head!",
         COALESCE(i.line_items_json, i.line_items::text) AS "line_items!",
         i.line_items_json IS NOT NULL AS "line_items_rendered!", i.subtotal::text AS "subtotal!",
         i.tax_bps, i.tax::text AS "tax!", i.total::text AS "total!",
         i.amount_paid::text AS "amount_paid!",
         GREATEST(i.total - i.amount_paid, 0)::text AS "amount_due!",
         i.list_json_due_date AS "list_json_due_date!", i.list_json_tail AS "list_json_tail!",
         c.list_json AS "customer_json!"
    FROM invoices i JOIN customers c ON c.id = i.customer_id
   WHERE i.merchant_id = $merchantId!
     AND (i.onchain_id ILIKE $pattern! OR i.memo ILIKE $pattern! OR c.label ILIKE $pattern!
          OR c.wallet_address ILIKE $pattern! OR invoice_number(i.number) ILIKE $pattern!)
   ORDER BY i.created_at DESC, i.id DESC`;

/** The merchant's invoices in one status that match the ILIKE `pattern` (both filters above). */
const listInvoicesByStatusAndSearch = sql<IListInvoicesByStatusAndSearchQuery>`
  SELECT i.id, i.list_json_head AS "list_json_head!",
         COALESCE(i.line_items_json, i.line_items::text) AS "line_items!",
         i.line_items_json IS NOT NULL AS "line_items_rendered!", i.subtotal::text AS "subtotal!",
         i.tax_bps, i.tax::text AS "tax!", i.total::text AS "total!",
         i.amount_paid::text AS "amount_paid!",
         GREATEST(i.total - i.amount_paid, 0)::text AS "amount_due!",
         i.list_json_due_date AS "list_json_due_date!", i.list_json_tail AS "list_json_tail!",
         c.list_json AS "customer_json!"
    FROM invoices i JOIN customers c ON c.id = i.customer_id
   WHERE i.merchant_id = $merchantId! AND i.status = $status!
     AND (i.onchain_id ILIKE $pattern! OR i.memo ILIKE $pattern! OR c.label ILIKE $pattern!
          OR c.wallet_address ILIKE $pattern! OR invoice_number(i.number) ILIKE $pattern!)
   ORDER BY i.created_at DESC, i.id DESC`;

/**
 * The merchant's invoices (the statement of the filters given), newest first, handed to
 * `onBatch` a batch of rows at a time through a cursor (`Db.forEachBatch`). Part of
 * `InvoicesRepository` (its `streamList`), in a file of its own for its four statements.
 */
export function streamInvoiceList(
  db: Db,
  merchantId: string,
  { status, search }: InvoiceListFilters,
  onBatch: (rows: InvoiceListRow[]) => Promise<boolean>,
): Promise<void> {
  if (search) {
    const pattern = `%${escapeLike(search)}%`;
    return db.forEachBatch(
      status
        ? typedCursor(listInvoicesByStatusAndSearch, { merchantId, status, pattern })
        : typedCursor(listInvoicesBySearch, { merchantId, pattern }),
      onBatch,
    );
  }
  return db.forEachBatch(
    status
      ? typedCursor(listInvoicesByStatus, { merchantId, status })
      : typedCursor(listInvoices, { merchantId }),
    onBatch,
  );
}
