import { formatUnits } from '../common/money';
import { SubscriptionResponse } from './dto/subscription.response';
import type { SubscriptionListRow } from './subscriptions.repository';

/**
 * A subscription as the API returns it: the one definition of its JSON (issue 22, "each response
 * shape is rendered in one place"). The list serializes these same objects
 * (`subscriptionListItemJson`); a `SubscriptionRow` (with more columns) is one too.
 */
export function toSubscriptionResponse(row: SubscriptionListRow): SubscriptionResponse {
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

/**
 * A batch of the list's subscriptions as JSON text (array items, comma-separated): each the
 * mapper's object, stringified. No second definition of the shape: a 10 000-row list renders no
 * slower than the hand-concatenated text it replaced (bench/subscription-list.bench.ts).
 */
export function subscriptionListJson(rows: readonly SubscriptionListRow[]): string {
  return rows.map((row) => JSON.stringify(toSubscriptionResponse(row))).join(',');
}
