import { formatUnits } from '../common/money';
import type { StoredLineItem } from './entities/invoice.entity';
import { invoiceCheckoutUrl, lineItemsJson } from './invoice.mapper';
import { INVOICE_LIST_AT } from './invoices.repository';

/**
 * The JSON text that starts every `hostedCheckoutUrl` of a list (`"https://…/checkout/invoices/`),
 * escaped once for the whole list.
 */
export function checkoutUrlPrefixJson(publicBaseUrl: string): string {
  return JSON.stringify(invoiceCheckoutUrl(publicBaseUrl, '')).slice(0, -1);
}

// Each column's position in a list row, by name (`InvoicesRepository.streamList`), looked up once.
const {
  id: ID,
  head: HEAD,
  lineItems: LINE_ITEMS,
  lineItemsRendered: LINE_ITEMS_RENDERED,
  subtotal: SUBTOTAL,
  taxBps: TAX_BPS,
  tax: TAX,
  total: TOTAL,
  amountPaid: AMOUNT_PAID,
  amountDue: AMOUNT_DUE,
  dueDate: DUE_DATE,
  tail: TAIL,
  customer: CUSTOMER,
} = INVOICE_LIST_AT;

/**
 * One invoice of the list as JSON text: the same object, key for key and in the same order, as
 * `JSON.stringify(toInvoiceWithCustomer(row))` (held equal by the invoices e2e test), written
 * without building it. `r` is a row of `InvoicesRepository.streamList`: the parts that hold no
 * money and no configuration come rendered by the database; amounts come as their digits,
 * formatted here by the money module. Line items come rendered from the row
 * (`line_items_json`, written at creation), or are rendered here for an invoice older than that
 * column.
 */
export function invoiceListItemJson(r: unknown[], checkoutPrefix: string): string {
  const lines = r[LINE_ITEMS_RENDERED]
    ? (r[LINE_ITEMS] as string)
    : lineItemsJson(JSON.parse(r[LINE_ITEMS] as string) as StoredLineItem[]);
  return (
    `${r[HEAD] as string},"lineItems":${lines},"subtotal":"${formatUnits(r[SUBTOTAL] as string)}",` +
    `"taxBps":${r[TAX_BPS] as number},"tax":"${formatUnits(r[TAX] as string)}",` +
    `"total":"${formatUnits(r[TOTAL] as string)}",` +
    `"amountPaid":"${formatUnits(r[AMOUNT_PAID] as string)}",` +
    `"amountDue":"${formatUnits(r[AMOUNT_DUE] as string)}","dueDate":${r[DUE_DATE] as string},` +
    `"hostedCheckoutUrl":${checkoutPrefix}${r[ID] as string}",${r[TAIL] as string},` +
    `"customer":${r[CUSTOMER] as string}}`
  );
}
