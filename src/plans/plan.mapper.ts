import { formatAmount, formatUnits } from '../common/money';
import { MeterResponse, PlanResponse } from './dto/plan.response';
import type { PlanRow } from './plans.repository';

/** `checkoutUrl` is the hosted subscribe page: `${PUBLIC_BASE_URL}/checkout/plans/:id`. */
export function toPlanResponse(row: PlanRow, publicBaseUrl: string): PlanResponse {
  return {
    id: row.id,
    label: row.label,
    description: row.description,
    mint: row.mint,
    amount: formatAmount(BigInt(row.amount) - BigInt(row.meter_cap ?? 0)),
    meter: meterOf(row),
    maxAmountPerPeriod: formatUnits(row.amount),
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

/** The plan's meter as the API shows it, or null. */
export function meterOf(row: {
  meter_name: string | null;
  meter_unit_price: string | null;
  meter_unit_size: string | null;
  meter_included_units: string | null;
  meter_cap: string | null;
  usage_grace_seconds: number;
}): MeterResponse | null {
  if (row.meter_name === null) return null;
  return {
    name: row.meter_name,
    unitPrice: formatUnits(row.meter_unit_price!),
    unitSize: formatUnits(row.meter_unit_size!),
    includedUnits: formatUnits(row.meter_included_units!),
    cap: formatUnits(row.meter_cap!),
    graceSeconds: row.usage_grace_seconds,
  };
}
