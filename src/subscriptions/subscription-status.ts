import type { EventType } from '../events/event-types';

/**
 * Subscription statuses (spec section 3). The spec's cancel table also names `Trialing`, which
 * is not one of its statuses: there are no trials, so it is not a status here (docs/api-decisions.md).
 */
export const SUBSCRIPTION_STATUSES = ['Active', 'PastDue', 'Cancelled', 'Completed'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/** What moves a subscription: the merchant's three actions and the billing engine's outcomes. */
export type SubscriptionAction = 'pause' | 'resume' | 'cancel' | 'chargeFailed' | 'complete';

export interface SubscriptionTransition {
  from: readonly SubscriptionStatus[];
  to: SubscriptionStatus;
  /** The event recorded with the move, in the same transaction. */
  event: EventType | null;
  /** What the refusal says when the subscription is in another status. */
  refusal: string;
}

/**
 * The one transition table (spec section 3, DESIGN section 8). Only
 * `SubscriptionsService.transition` applies it: it validates the current status under the
 * row's lock, stamps the timestamps and records the event.
 *
 * - pause: `Active -> PastDue`; no charge is attempted; the customer's authorisation stays.
 * - resume: `PastDue -> Active` (paused, or after a failed charge); the next charge is due now.
 * - cancel: `Active | PastDue -> Cancelled`; `cancelledAt` set; never charged again.
 * - chargeFailed (billing engine): `Active -> PastDue`, `failureReason` set.
 * - complete (billing engine): the authorised term is over or the authorisation is gone (the
 *   customer cancelled it); `failureReason` says which.
 */
export const SUBSCRIPTION_TRANSITIONS: Record<SubscriptionAction, SubscriptionTransition> = {
  pause: {
    from: ['Active'],
    to: 'PastDue',
    event: 'subscription.paused',
    refusal: 'Only an Active subscription can be paused',
  },
  resume: {
    from: ['PastDue'],
    to: 'Active',
    event: 'subscription.resumed',
    refusal: 'Only a PastDue subscription can be resumed',
  },
  cancel: {
    from: ['Active', 'PastDue'],
    to: 'Cancelled',
    event: 'subscription.canceled',
    refusal: 'A Cancelled or Completed subscription cannot be cancelled',
  },
  chargeFailed: {
    from: ['Active'],
    to: 'PastDue',
    event: 'subscription.past_due',
    refusal: 'Only an Active subscription is charged',
  },
  complete: {
    from: ['Active', 'PastDue'],
    to: 'Completed',
    event: 'subscription.completed',
    refusal: 'Only an Active or PastDue subscription can complete',
  },
};

/** Whether `action` is allowed from `status`. */
export function canTransition(status: SubscriptionStatus, action: SubscriptionAction): boolean {
  return SUBSCRIPTION_TRANSITIONS[action].from.includes(status);
}
