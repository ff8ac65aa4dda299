import { listSerializer } from '../common/json-shape';
import { invoiceCheckoutUrl, INVOICE_LIST_JSON } from './invoice.mapper';

/**
 * The JSON text that starts every `hostedCheckoutUrl` of a list (`"https://…/checkout/invoices/`),
 * escaped once for the whole list.
 */
export function checkoutUrlPrefixJson(publicBaseUrl: string): string {
  return JSON.stringify(invoiceCheckoutUrl(publicBaseUrl, '')).slice(0, -1);
}

/**
 * One invoice of the list as JSON text: the same text, key for key and in the same order, as
 * `JSON.stringify(toInvoiceWithCustomer(row))` (held equal by the invoices e2e test), written
 * without building it from a row of `InvoicesRepository.streamList`, both generated from
 * `INVOICE_LIST_JSON`. `checkoutPrefix` is `checkoutUrlPrefixJson`'s.
 */
export const invoiceListItemJson = listSerializer(INVOICE_LIST_JSON);
