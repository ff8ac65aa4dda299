import { CustomerResponse } from '../customers/dto/customer.response';
import { formatUnits } from '../common/money';
import type { MintSymbol } from '../solana/mints';
import {
  InvoiceResponse,
  InvoiceWithCustomerResponse,
  LineItemResponse,
} from './dto/invoice.response';
import type { StoredLineItem } from './entities/invoice.entity';
import type { InvoiceStatus } from './invoice-status';

/** An `invoices` row as PostgreSQL returns it (bigints as text: never through a float). */
export interface InvoiceRow {
  id: string;
  merchant_id: string;
  customer_id: string;
  number: number;
  status: InvoiceStatus;
  onchain_id: string;
  memo: string | null;
  mint: MintSymbol;
  line_items: StoredLineItem[];
  subtotal: string;
  tax_bps: number;
  tax: string;
  total: string;
  amount_paid: string;
  /** `total - amount_paid`, never below 0. */
  amount_due: string;
  due_date: string | null;
  paid_at: string | null;
  payment_signature: string | null;
  created_at: string;
  updated_at: string;
}

/** An invoice row joined with its customer's columns (`c_*`). */
export interface InvoiceWithCustomerRow extends InvoiceRow {
  c_wallet_address: string;
  c_email: string | null;
  c_label: string | null;
  c_created_at: string;
  c_updated_at: string;
}

/** `INV-000042`: six digits at least, more once a merchant passes 999 999 invoices. */
export function invoiceNumber(n: number): string {
  return `INV-${String(n).padStart(6, '0')}`;
}

export function invoiceCheckoutUrl(publicBaseUrl: string, invoiceId: string): string {
  return `${publicBaseUrl}/checkout/invoices/${invoiceId}`;
}

/**
 * The API's invoice. Amounts are formatted from the digits PostgreSQL returns (`formatUnits`), so
 * a 10,000-invoice list never converts 110,000 values to BigInt and back.
 */
export function toInvoiceResponse(row: InvoiceRow, publicBaseUrl: string): InvoiceResponse {
  return {
    id: row.id,
    number: invoiceNumber(row.number),
    status: row.status,
    onchainId: row.onchain_id,
    memo: row.memo,
    mint: row.mint,
    lineItems: row.line_items.map(toLineItemResponse),
    subtotal: formatUnits(row.subtotal),
    taxBps: row.tax_bps,
    tax: formatUnits(row.tax),
    total: formatUnits(row.total),
    amountPaid: formatUnits(row.amount_paid),
    amountDue: formatUnits(row.amount_due),
    dueDate: row.due_date,
    hostedCheckoutUrl: invoiceCheckoutUrl(publicBaseUrl, row.id),
    customerId: row.customer_id,
    paidAt: row.paid_at,
    paymentSignature: row.payment_signature,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toInvoiceWithCustomer(
  row: InvoiceWithCustomerRow,
  publicBaseUrl: string,
): InvoiceWithCustomerResponse {
  return { ...toInvoiceResponse(row, publicBaseUrl), customer: customerOf(row) };
}

function customerOf(row: InvoiceWithCustomerRow): CustomerResponse {
  return {
    id: row.customer_id,
    merchantId: row.merchant_id,
    walletAddress: row.c_wallet_address,
    email: row.c_email,
    label: row.c_label,
    createdAt: row.c_created_at,
    updatedAt: row.c_updated_at,
  };
}

/** The API's `lineItems` as JSON text (stored with the invoice for the list). */
export function lineItemsJson(items: StoredLineItem[]): string {
  return JSON.stringify(items.map(toLineItemResponse));
}

function toLineItemResponse(item: StoredLineItem): LineItemResponse {
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
