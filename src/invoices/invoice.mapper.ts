import { type JsonFields, jsonFields, objectMapper, type TriggerShape } from '../common/json-shape';
import { formatUnits } from '../common/money';
import { toCustomerResponse } from '../customers/customer.mapper';
import type { CustomerRow } from '../customers/customers.repository';
import {
  InvoiceResponse,
  InvoiceWithCustomerResponse,
  LineItemResponse,
} from './dto/invoice.response';
import type { StoredLineItem } from './entities/invoice.entity';
import type { InvoiceListRow, InvoiceRow, InvoiceWithCustomerRow } from './invoices.repository';

export type { InvoiceRow, InvoiceWithCustomerRow };

/** `INV-000042`: six digits at least, more once a merchant passes 999 999 invoices. */
export function invoiceNumber(n: number): string {
  return `INV-${String(n).padStart(6, '0')}`;
}

export function invoiceCheckoutUrl(publicBaseUrl: string, invoiceId: string): string {
  return `${publicBaseUrl}/checkout/invoices/${invoiceId}`;
}

/** The API's `lineItems` as JSON text (stored with the invoice for the list). */
export function lineItemsJson(items: StoredLineItem[]): string {
  return JSON.stringify(items.map(toLineItemResponse));
}

export function toLineItemResponse(item: StoredLineItem): LineItemResponse {
  return {
    description: item.description,
    quantity: item.quantity,
    unitAmount: formatUnits(item.unitAmount),
    amount:
      item.quantity === 1
        ? formatUnits(item.unitAmount)
        : formatUnits((BigInt(item.unitAmount) * BigInt(item.quantity)).toString()),
  };
}

/** The customer's columns of an invoice row (`c_*`) as a `customers` row. */
function customerOf(row: InvoiceWithCustomerRow): CustomerRow {
  return {
    id: row.customer_id,
    merchant_id: row.merchant_id,
    wallet_address: row.c_wallet_address,
    email: row.c_email,
    label: row.c_label,
    created_at: row.c_created_at,
    updated_at: row.c_updated_at,
  };
}

const field = jsonFields<InvoiceRow, InvoiceListRow>();

/**
 * The API's invoice, defined once (`C`, the mapper's context: the public base URL; `LC`, the
 * list's: the JSON text that starts every `hostedCheckoutUrl`, `checkoutUrlPrefixJson`). Amounts
 * are formatted from the digits PostgreSQL returns (`formatUnits`), so a 10,000-invoice list
 * never converts 110,000 values to BigInt and back; ids, number, status, free text and
 * timestamps are rendered for the list by the `invoices_render_list_json` trigger.
 */
export const INVOICE_JSON: JsonFields<InvoiceRow, InvoiceListRow, InvoiceResponse, string, string> =
  {
    id: field.text('id'),
    number: {
      value: (row) => invoiceNumber(row.number),
      sql: [{ literal: '"' }, { expression: 'invoice_number(new.number)' }, { literal: '"' }],
    },
    status: field.text('status'),
    onchainId: field.text('onchain_id'),
    memo: field.freeTextOrNull('memo'),
    mint: field.text('mint'),
    // Rendered at creation (`line_items_json`), or here for an invoice older than that column.
    lineItems: {
      value: (row) => row.line_items.map(toLineItemResponse),
      list: [
        {
          text: (row) =>
            row.line_items_rendered
              ? row.line_items
              : lineItemsJson(JSON.parse(row.line_items) as StoredLineItem[]),
        },
      ],
    },
    subtotal: field.money('subtotal'),
    taxBps: field.integer('tax_bps'),
    tax: field.money('tax'),
    total: field.money('total'),
    amountPaid: field.money('amount_paid'),
    amountDue: field.money('amount_due'),
    amountRefunded: field.money('amount_refunded'),
    amountCredited: field.money('amount_credited'),
    amountCreditedToBalance: field.money('amount_credited_to_balance'),
    dueDate: field.timeOrNull('due_date'),
    hostedCheckoutUrl: {
      value: (row, publicBaseUrl) => invoiceCheckoutUrl(publicBaseUrl, row.id),
      list: [{ text: (row, checkoutPrefix) => checkoutPrefix + row.id }, { literal: '"' }],
    },
    customerId: field.text('customer_id'),
    paidAt: field.timeOrNull('paid_at'),
    paymentSignature: field.textOrNull('payment_signature'),
    createdAt: field.time('created_at'),
    updatedAt: field.time('updated_at'),
  };

/**
 * The invoice with its customer (the list's item, and `GET /api/invoices/:id` less its e-mail).
 * The trigger keeps each run of database keys on the row: `list_json_head` (`{"id":…,"mint":…`),
 * `list_json_due_date` (`"dueDate":…`) and `list_json_tail` (`"customerId":…,"updatedAt":…`);
 * the nested customer is its own trigger's `customers.list_json` (`CUSTOMER_JSON`).
 */
export const INVOICE_LIST_JSON: TriggerShape<
  InvoiceWithCustomerRow,
  InvoiceListRow,
  InvoiceWithCustomerResponse,
  string,
  string
> = {
  trigger: 'invoices_render_list_json',
  columns: ['list_json_head', 'list_json_due_date', 'list_json_tail'],
  fields: {
    ...INVOICE_JSON,
    customer: {
      value: (row) => toCustomerResponse(customerOf(row)),
      list: [{ column: 'customer_json' }],
    },
  },
};

/** The API's invoice (`publicBaseUrl` makes its `hostedCheckoutUrl`). */
export const toInvoiceResponse: (row: InvoiceRow, publicBaseUrl: string) => InvoiceResponse =
  objectMapper(INVOICE_JSON);

/** The API's invoice with its customer. */
export const toInvoiceWithCustomer: (
  row: InvoiceWithCustomerRow,
  publicBaseUrl: string,
) => InvoiceWithCustomerResponse = objectMapper(INVOICE_LIST_JSON.fields);
