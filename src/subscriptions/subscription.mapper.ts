import { formatUnits } from '../common/money';
import { isoTimestamp } from '../database/sql';
import type { MintSymbol } from '../solana/mints';
import { SubscriptionResponse } from './dto/subscription.response';
import type { SubscriptionStatus } from './subscription-status';

/** A subscription row joined with its plan (`p_*`) and customer (`c_*`). */
export interface SubscriptionRow {
  id: string;
  merchant_id: string;
  plan_id: string;
  customer_id: string;
  status: SubscriptionStatus;
  current_period_end: string | null;
  cancelled_at: string | null;
  revoked_at: string | null;
  paused_at: string | null;
  last_charge_at: string | null;
  failure_reason: string | null;
  onchain_address: string | null;
  created_at: string;
  updated_at: string;
  p_label: string;
  p_amount: string;
  p_mint: MintSymbol;
  p_interval_seconds: number;
  c_wallet_address: string;
  c_label: string | null;
}

/**
 * A subscription as the API returns it (with its plan and customer snapshots), read from `from`:
 * the table, or a CTE of rows an UPDATE just returned (`RETURNING *`), so that a change and
 * the row it made cost one round trip. `extra` adds more columns (`s.x AS y, …`) after them.
 */
export const subscriptionSelect = (
  from: string,
  extra = '',
): string => `SELECT s.id, s.merchant_id, s.plan_id, s.customer_id, s.status,
    ${isoTimestamp('s.current_period_end', 'current_period_end')},
    ${isoTimestamp('s.cancelled_at', 'cancelled_at')}, ${isoTimestamp('s.revoked_at', 'revoked_at')},
    ${isoTimestamp('s.paused_at', 'paused_at')},
    ${isoTimestamp('s.last_charge_at', 'last_charge_at')}, s.failure_reason, s.onchain_address,
    ${isoTimestamp('s.created_at', 'created_at')}, ${isoTimestamp('s.updated_at', 'updated_at')},
    p.label AS p_label, p.amount::text AS p_amount, p.mint AS p_mint,
    p.interval_seconds AS p_interval_seconds,
    c.wallet_address AS c_wallet_address, c.label AS c_label${extra ? `, ${extra}` : ''}
  FROM ${from} s
  JOIN plans p ON p.id = s.plan_id
  JOIN customers c ON c.id = s.customer_id`;

export const SUBSCRIPTION_SELECT = subscriptionSelect('subscriptions');

export function toSubscriptionResponse(row: SubscriptionRow): SubscriptionResponse {
  return {
    id: row.id,
    planId: row.plan_id,
    customerId: row.customer_id,
    status: row.status,
    currentPeriodEnd: row.current_period_end,
    cancelledAt: row.cancelled_at,
    cancelAtPeriodEnd: row.revoked_at != null && row.status === 'Active',
    customerCancelledAt: row.revoked_at ?? null,
    lastChargeAt: row.last_charge_at,
    failureReason: row.failure_reason,
    onchainAddress: row.onchain_address,
    plan: {
      id: row.plan_id,
      label: row.p_label,
      amount: formatUnits(row.p_amount),
      mint: row.p_mint,
      intervalSeconds: row.p_interval_seconds,
    },
    customer: { id: row.customer_id, walletAddress: row.c_wallet_address, label: row.c_label },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
