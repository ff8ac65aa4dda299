import { formatUnits } from '../common/money';
import { RefundResponse } from './dto/refund.response';
import type { RefundRow } from './refunds.repository';

export function toRefundResponse(row: RefundRow): RefundResponse {
  return {
    id: row.id,
    paymentId: row.payment_id,
    invoiceId: row.invoice_id,
    subscriptionId: row.subscription_id,
    customerId: row.customer_id,
    status: row.status,
    mint: row.mint,
    amount: formatUnits(row.amount),
    fee: formatUnits(row.fee),
    reason: row.reason,
    reference: row.reference,
    recipient: row.recipient,
    destination: row.destination,
    lastValidBlockHeight: Number(row.last_valid_block_height),
    signature: row.signature,
    ledgerPaymentId: row.ledger_payment_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    succeededAt: row.succeeded_at,
    expiredAt: row.expired_at,
  };
}
