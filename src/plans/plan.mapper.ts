import { formatAmount } from '../common/money';
import { isoTimestamp } from '../database/sql';
import type { MintSymbol } from '../solana/mints';
import { PlanResponse } from './dto/plan.response';

/** A `plans` row as PostgreSQL returns it (`amount` as text: bigint never passes through a float). */
export interface PlanRow {
  id: string;
  merchant_id: string;
  label: string;
  description: string | null;
  mint: MintSymbol;
  amount: string;
  interval_seconds: number;
  active: boolean;
  onchain_plan_id: string;
  onchain_address: string | null;
  created_at: string;
  updated_at: string;
}

/** The columns of a `PlanRow`, for a table aliased `p`. */
export const PLAN_COLUMNS = `p.id, p.merchant_id, p.label, p.description, p.mint, p.amount::text AS amount,
  p.interval_seconds, p.active, p.onchain_plan_id, p.onchain_address,
  ${isoTimestamp('p.created_at', 'created_at')}, ${isoTimestamp('p.updated_at', 'updated_at')}`;

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
