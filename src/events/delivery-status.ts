/**
 * A webhook delivery's status, as the events API shows it with each event. `pending`: waiting for
 * its next attempt (or being attempted); `delivered`: a 2xx came back; `failed`: no 2xx within
 * the retry window; `skipped`: the merchant had no endpoint when it was due. (The deliveries are
 * the webhooks module's; the vocabulary is the outbox's, so that events imports nothing of it.)
 */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'skipped'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
