import { formatUnits } from '../common/money';
import { isoTimestamp } from '../database/sql';
import type { MintSymbol } from '../solana/mints';
import { PaymentResponse } from './dto/payment.response';
import type { PaymentKind, PaymentStatus } from './entities/payment.entity';

/** A `payments` row as PostgreSQL returns it (bigints as text). */
export interface PaymentRow {
  id: string;
  merchant_id: string;
  kind: PaymentKind;
  status: PaymentStatus;
  amount: string;
  fee: string;
  destination: string | null;
  references: string[] | null;
  excess: string;
  mint: MintSymbol;
  signature: string | null;
  payer: string | null;
  invoice_id: string | null;
  subscription_id: string | null;
  period: number | null;
  customer_id: string | null;
  note: string | null;
  slot: string | null;
  created_at: string;
  finalized_at: string | null;
  updated_at: string;
}

/** Every column a `PaymentResponse` needs, for `payments` aliased `pm`. */
export const PAYMENT_COLUMNS = `pm.id, pm.merchant_id, pm.kind, pm.status, pm.amount::text AS amount,
  pm.fee::text AS fee, pm.destination, pm."references", pm.excess::text AS excess, pm.mint, pm.signature, pm.payer, pm.invoice_id, pm.subscription_id,
  pm.period, pm.customer_id, pm.note, pm.slot::text AS slot,
  ${isoTimestamp('pm.created_at', 'created_at')}, ${isoTimestamp('pm.finalized_at', 'finalized_at')},
  ${isoTimestamp('pm.updated_at', 'updated_at')}`;

export function toPaymentResponse(row: PaymentRow): PaymentResponse {
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    amount: formatUnits(row.amount),
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
    createdAt: row.created_at,
    finalizedAt: row.finalized_at,
    updatedAt: row.updated_at,
  };
}
