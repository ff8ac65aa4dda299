import { formatUnits } from '../common/money';
import { isoTimestamp } from '../database/sql';
import type { StoredLineItem } from './entities/invoice.entity';
import { invoiceCheckoutUrl } from './invoice.mapper';

/**
 * The JSON text that starts every `hostedCheckoutUrl` of a list (`"https://…/checkout/invoices/`),
 * escaped once for the whole list.
 */
export function checkoutUrlPrefixJson(publicBaseUrl: string): string {
  return JSON.stringify(invoiceCheckoutUrl(publicBaseUrl, '')).slice(0, -1);
}

/**
 * The invoice list's rows, as arrays (`forEachRowBatch`), in the order `invoiceListItemJson`
 * reads them: amounts as their digits (formatted by the money module's `formatUnits`), the
 * number (`invoice_number`, the mapper's twin) and timestamps as the API writes them.
 */
export const INVOICE_LIST_SELECT = `SELECT i.id, invoice_number(i.number), i.status, i.onchain_id,
    i.memo, i.mint, i.line_items::text, i.subtotal::text, i.tax_bps, i.tax::text, i.total::text,
    i.amount_paid::text, GREATEST(i.total - i.amount_paid, 0)::text,
    ${isoTimestamp('i.due_date', 'due_date')}, i.customer_id, ${isoTimestamp('i.paid_at', 'paid_at')},
    i.payment_signature, ${isoTimestamp('i.created_at', 'created_at')},
    ${isoTimestamp('i.updated_at', 'updated_at')}, c.merchant_id, c.wallet_address, c.email,
    c.label, ${isoTimestamp('c.created_at', 'c_created_at')},
    ${isoTimestamp('c.updated_at', 'c_updated_at')}
  FROM invoices i JOIN customers c ON c.id = i.customer_id`;

const text = (value: unknown): string => (value === null ? 'null' : JSON.stringify(value));
/** A value the database guarantees needs no escaping (UUID, base58, ISO timestamp, enum). */
const plain = (value: unknown): string => (value === null ? 'null' : `"${value as string}"`);

/**
 * One invoice of the list as JSON text: the same object, key for key and in the same order, as
 * `JSON.stringify(toInvoiceWithCustomer(row))` (held equal by the invoices e2e test), written
 * without building it. The merchant's and customer's free text (memo, descriptions, e-mail,
 * label) goes through `JSON.stringify`; every other value is a UUID, base58, digits, an enum or
 * an ISO timestamp from the database, which need no escaping.
 */
export function invoiceListItemJson(r: unknown[], checkoutPrefix: string): string {
  const id = r[0] as string;
  const lines = (JSON.parse(r[6] as string) as StoredLineItem[])
    .map((item) => {
      const amount =
        item.quantity === 1
          ? item.unitAmount
          : (BigInt(item.unitAmount) * BigInt(item.quantity)).toString();
      return (
        `{"description":${JSON.stringify(item.description)},"quantity":${item.quantity},` +
        `"unitAmount":"${formatUnits(item.unitAmount)}","amount":"${formatUnits(amount)}"}`
      );
    })
    .join(',');
  return (
    `{"id":"${id}","number":"${r[1] as string}","status":"${r[2] as string}",` +
    `"onchainId":"${r[3] as string}","memo":${text(r[4])},"mint":"${r[5] as string}",` +
    `"lineItems":[${lines}],"subtotal":"${formatUnits(r[7] as string)}","taxBps":${r[8] as number},` +
    `"tax":"${formatUnits(r[9] as string)}","total":"${formatUnits(r[10] as string)}",` +
    `"amountPaid":"${formatUnits(r[11] as string)}","amountDue":"${formatUnits(r[12] as string)}",` +
    `"dueDate":${plain(r[13])},"hostedCheckoutUrl":${checkoutPrefix}${id}",` +
    `"customerId":"${r[14] as string}","paidAt":${plain(r[15])},"paymentSignature":${plain(r[16])},` +
    `"createdAt":"${r[17] as string}","updatedAt":"${r[18] as string}",` +
    `"customer":{"id":"${r[14] as string}","merchantId":"${r[19] as string}",` +
    `"walletAddress":"${r[20] as string}","email":${text(r[21])},"label":${text(r[22])},` +
    `"createdAt":"${r[23] as string}","updatedAt":"${r[24] as string}"}}`
  );
}
