import { formatUnits } from '../common/money';
import type { StoredLineItem } from './entities/invoice.entity';
import { invoiceCheckoutUrl, lineItemsJson } from './invoice.mapper';

/**
 * The JSON text that starts every `hostedCheckoutUrl` of a list (`"https://…/checkout/invoices/`),
 * escaped once for the whole list.
 */
export function checkoutUrlPrefixJson(publicBaseUrl: string): string {
  return JSON.stringify(invoiceCheckoutUrl(publicBaseUrl, '')).slice(0, -1);
}

/**
 * The invoice list's rows, as arrays (`forEachRowBatch`), in the order `invoiceListItemJson`
 * reads them. The parts of the JSON that hold no money and no configuration (ids, number,
 * status, timestamps, free text, the nested customer) are kept rendered on the rows by database
 * triggers (`list_json_*`, Migration20261124170000), so the list formats none of them per request.
 * Amounts come as their digits, formatted here by the money module.
 */
export const INVOICE_LIST_SELECT = `SELECT i.id, i.list_json_head,
    COALESCE(i.line_items_json, i.line_items::text), i.line_items_json IS NOT NULL,
    i.subtotal::text, i.tax_bps, i.tax::text, i.total::text,
    i.amount_paid::text, GREATEST(i.total - i.amount_paid, 0)::text,
    i.list_json_due_date, i.list_json_tail, c.list_json
  FROM invoices i JOIN customers c ON c.id = i.customer_id`;

/**
 * One invoice of the list as JSON text: the same object, key for key and in the same order, as
 * `JSON.stringify(toInvoiceWithCustomer(row))` (held equal by the invoices e2e test), written
 * without building it. Line items come rendered from the row (`line_items_json`, written at
 * creation), or are rendered here for an invoice older than that column.
 */
export function invoiceListItemJson(r: unknown[], checkoutPrefix: string): string {
  const lines = r[3]
    ? (r[2] as string)
    : lineItemsJson(JSON.parse(r[2] as string) as StoredLineItem[]);
  return (
    `${r[1] as string},"lineItems":${lines},"subtotal":"${formatUnits(r[4] as string)}",` +
    `"taxBps":${r[5] as number},"tax":"${formatUnits(r[6] as string)}",` +
    `"total":"${formatUnits(r[7] as string)}","amountPaid":"${formatUnits(r[8] as string)}",` +
    `"amountDue":"${formatUnits(r[9] as string)}","dueDate":${r[10] as string},` +
    `"hostedCheckoutUrl":${checkoutPrefix}${r[0] as string}",${r[11] as string},` +
    `"customer":${r[12] as string}}`
  );
}
