import { formatUnits } from '../common/money';
import { LIST_COLUMN as C } from './subscriptions.repository';

const text = (value: unknown): string => (value === null ? 'null' : JSON.stringify(value));
/** A value the database guarantees needs no escaping (UUID, base58, ISO timestamp, enum). */
const plain = (value: unknown): string => (value === null ? 'null' : `"${value as string}"`);

/**
 * One subscription of the list (an array row of `SubscriptionsRepository.forEachListBatch`) as
 * JSON text: the same object, key for key and in the same order, as
 * `JSON.stringify(toSubscriptionResponse(row))` (held equal by the subscriptions e2e test).
 * Free text (failure reason, plan and customer labels) goes through `JSON.stringify`.
 */
export function subscriptionListItemJson(r: unknown[]): string {
  return (
    `{"id":"${r[C.id] as string}","planId":"${r[C.planId] as string}",` +
    `"customerId":"${r[C.customerId] as string}","status":"${r[C.status] as string}",` +
    `"currentPeriodEnd":${plain(r[C.currentPeriodEnd])},"cancelledAt":${plain(r[C.cancelledAt])},` +
    `"cancelAtPeriodEnd":${r[C.revokedAt] !== null && r[C.status] === 'Active'},` +
    `"customerCancelledAt":${plain(r[C.revokedAt])},"lastChargeAt":${plain(r[C.lastChargeAt])},` +
    `"failureReason":${text(r[C.failureReason])},"onchainAddress":${plain(r[C.onchainAddress])},` +
    `"plan":{"id":"${r[C.planId] as string}","label":${text(r[C.planLabel])},` +
    `"amount":"${formatUnits(r[C.planAmount] as string)}","mint":"${r[C.planMint] as string}",` +
    `"intervalSeconds":${r[C.planIntervalSeconds] as number}},` +
    `"customer":{"id":"${r[C.customerId] as string}",` +
    `"walletAddress":"${r[C.customerWalletAddress] as string}","label":${text(r[C.customerLabel])}},` +
    `"createdAt":"${r[C.createdAt] as string}","updatedAt":"${r[C.updatedAt] as string}"}`
  );
}
