import { formatSignedUnits, formatUnits } from '../common/money';
import { PaymentResponse } from './dto/payment.response';
import type { PaymentRow } from './payments.repository';

export function toPaymentResponse(row: PaymentRow): PaymentResponse {
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    // Negative for a refund's line (money that left the merchant).
    amount: formatSignedUnits(row.amount),
    fee: formatUnits(row.fee),
    destination: row.destination,
    references: row.references ?? [],
    excess: formatUnits(row.excess),
    mint: row.mint,
    signature: row.signature,
    payer: row.payer,
    invoiceId: row.invoice_id,
    subscriptionId: row.subscription_id,
    period: row.period,
    customerId: row.customer_id,
    note: row.note,
    slot: row.slot === null ? null : Number(row.slot),
    resourceUrl: row.details?.resourceUrl ?? null,
    usage: row.details?.usage ?? null,
    createdAt: row.created_at,
    finalizedAt: row.finalized_at,
    updatedAt: row.updated_at,
  };
}
