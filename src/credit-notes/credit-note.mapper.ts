import { formatUnits } from '../common/money';
import { toLineItemResponse } from '../invoices/invoice.mapper';
import type { CreditNoteRow } from './credit-notes.repository';
import type { CreditNoteResponse } from './dto/credit-note.response';

/** `CN-000042`: six digits at least, as invoice numbers. */
export function creditNoteNumber(n: number): string {
  return `CN-${String(n).padStart(6, '0')}`;
}

export function toCreditNoteResponse(row: CreditNoteRow): CreditNoteResponse {
  return {
    id: row.id,
    number: creditNoteNumber(row.number),
    invoiceId: row.invoice_id,
    customerId: row.customer_id,
    mint: row.mint,
    lines: row.lines.map(toLineItemResponse),
    subtotal: formatUnits(row.subtotal),
    tax: formatUnits(row.tax),
    amount: formatUnits(row.amount),
    reason: row.reason,
    memo: row.memo,
    action: row.action,
    refundId: row.refund_id,
    createdAt: row.created_at,
  };
}
