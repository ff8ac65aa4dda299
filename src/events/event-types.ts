/**
 * The event catalog (spec section 6). Each type is documented in docs/events.md with when it fires
 * (DESIGN section 7's emission map) and an example payload.
 */
export const EVENT_TYPES = [
  'invoice.created',
  'invoice.paid',
  'invoice.voided',
  'invoice.overdue',
  'subscription.created',
  'subscription.activated',
  'subscription.paused',
  'subscription.resumed',
  'subscription.canceled',
  'subscription.past_due',
  'subscription.cancel_requested',
  'subscription.completed',
  'customer.created',
  'customer.updated',
  'payment.received',
  'payment.confirmed',
  'payment.unattributed',
  'payment.per_request',
  'refund.created',
  'refund.succeeded',
  'refund.expired',
  'refund.reissued',
  'credit_note.created',
  'usage.cap_exceeded',
  'merchant.receiving_account_missing',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Public event ids are `evt_` + the row's UUID. */
export const EVENT_ID_PREFIX = 'evt_';
