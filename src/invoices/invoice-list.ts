import { formatUnits } from '../common/money';
import { isoText } from '../database/sql';
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
 * reads them. PostgreSQL concatenates the parts of the JSON that need no money and no
 * configuration (ids, number, status, timestamps; free text through `to_json`, which escapes as
 * `JSON.stringify` does): it works on the next batch while this process writes the last, so that
 * work is hidden. Amounts come as their digits, formatted here by the money module.
 */
export const INVOICE_LIST_SELECT = `SELECT i.id,
    '{"id":"' || i.id || '","number":"' || invoice_number(i.number) || '","status":"' ||
      i.status || '","onchainId":"' || i.onchain_id || '","memo":' ||
      COALESCE(to_json(i.memo)::text, 'null') || ',"mint":"' || i.mint || '"',
    COALESCE(i.line_items_json, i.line_items::text), i.line_items_json IS NOT NULL,
    i.subtotal::text, i.tax_bps, i.tax::text, i.total::text,
    i.amount_paid::text, GREATEST(i.total - i.amount_paid, 0)::text,
    COALESCE('"' || ${isoText('i.due_date')} || '"', 'null'),
    '"customerId":"' || i.customer_id || '","paidAt":' ||
      COALESCE('"' || ${isoText('i.paid_at')} || '"', 'null') || ',"paymentSignature":' ||
      COALESCE('"' || i.payment_signature || '"', 'null') || ',"createdAt":"' ||
      ${isoText('i.created_at')} || '","updatedAt":"' || ${isoText('i.updated_at')} || '"',
    '{"id":"' || c.id || '","merchantId":"' || c.merchant_id || '","walletAddress":"' ||
      c.wallet_address || '","email":' || COALESCE(to_json(c.email)::text, 'null') ||
      ',"label":' || COALESCE(to_json(c.label)::text, 'null') || ',"createdAt":"' ||
      ${isoText('c.created_at')} || '","updatedAt":"' || ${isoText('c.updated_at')} || '"}'
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
