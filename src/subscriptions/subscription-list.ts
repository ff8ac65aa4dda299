import { formatUnits } from '../common/money';
import { isoTimestamp } from '../database/sql';

/** The subscription list's rows, as arrays, in the order `subscriptionListItemJson` reads them. */
export const SUBSCRIPTION_LIST_SELECT = `SELECT s.id, s.plan_id, s.customer_id, s.status,
    ${isoTimestamp('s.current_period_end', 'current_period_end')},
    ${isoTimestamp('s.cancelled_at', 'cancelled_at')},
    ${isoTimestamp('s.last_charge_at', 'last_charge_at')}, s.failure_reason, s.onchain_address,
    p.label, p.amount::text, p.mint, p.interval_seconds, c.wallet_address, c.label,
    ${isoTimestamp('s.created_at', 'created_at')}, ${isoTimestamp('s.updated_at', 'updated_at')},
    ${isoTimestamp('s.revoked_at', 'revoked_at')}
  FROM subscriptions s
  JOIN plans p ON p.id = s.plan_id
  JOIN customers c ON c.id = s.customer_id`;

const text = (value: unknown): string => (value === null ? 'null' : JSON.stringify(value));
/** A value the database guarantees needs no escaping (UUID, base58, ISO timestamp, enum). */
const plain = (value: unknown): string => (value === null ? 'null' : `"${value as string}"`);

/**
 * One subscription of the list as JSON text: the same object, key for key and in the same order,
 * as `JSON.stringify(toSubscriptionResponse(row))` (held equal by the subscriptions e2e test).
 * Free text (failure reason, plan and customer labels) goes through `JSON.stringify`.
 */
export function subscriptionListItemJson(r: unknown[]): string {
  return (
    `{"id":"${r[0] as string}","planId":"${r[1] as string}","customerId":"${r[2] as string}",` +
    `"status":"${r[3] as string}","currentPeriodEnd":${plain(r[4])},"cancelledAt":${plain(r[5])},` +
    `"cancelAtPeriodEnd":${r[17] !== null && r[3] === 'Active'},"customerCancelledAt":${plain(r[17])},` +
    `"lastChargeAt":${plain(r[6])},"failureReason":${text(r[7])},"onchainAddress":${plain(r[8])},` +
    `"plan":{"id":"${r[1] as string}","label":${text(r[9])},"amount":"${formatUnits(r[10] as string)}",` +
    `"mint":"${r[11] as string}","intervalSeconds":${r[12] as number}},` +
    `"customer":{"id":"${r[2] as string}","walletAddress":"${r[13] as string}","label":${text(r[14])}},` +
    `"createdAt":"${r[15] as string}","updatedAt":"${r[16] as string}"}`
  );
}
