import { formatUnits } from '../common/money';
import { SubscriptionResponse } from './dto/subscription.response';
import type { SubscriptionRow } from './subscriptions.repository';

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
