import { formatAmount } from '../common/money';
import { PlanResponse } from './dto/plan.response';
import type { PlanRow } from './plans.repository';

/** `checkoutUrl` is the hosted subscribe page: `${PUBLIC_BASE_URL}/checkout/plans/:id`. */
export function toPlanResponse(row: PlanRow, publicBaseUrl: string): PlanResponse {
  return {
    id: row.id,
    label: row.label,
    description: row.description,
    mint: row.mint,
    amount: formatAmount(BigInt(row.amount)),
    intervalSeconds: row.interval_seconds,
    active: row.active,
    checkoutUrl: planCheckoutUrl(publicBaseUrl, row.id),
    onchainAddress: row.onchain_address,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function planCheckoutUrl(publicBaseUrl: string, planId: string): string {
  return `${publicBaseUrl}/checkout/plans/${planId}`;
}
