/**
 * When a failed outbox attempt is tried again: exponential backoff from `firstRetryMs`, doubling
 * per attempt, capped at `maxDelayMs`, each delay jittered by ±20 % so that rows failing together
 * (an endpoint or relay outage) do not return together. A row is retried for `windowMs` from its
 * creation; the first retry that would fall later fails it. Each outbox has its own policy
 * (docs/webhooks.md and docs/email.md have the tables).
 */
export interface RetryPolicy {
  readonly firstRetryMs: number;
  readonly maxDelayMs: number;
  readonly windowMs: number;
}

const JITTER = 0.2;

/** The delay after failed attempt number `attempt` (1-based), before jitter. */
export function baseDelayMs(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.firstRetryMs * 2 ** Math.max(0, attempt - 1), policy.maxDelayMs);
}

/** The jittered delay after failed attempt number `attempt`; `random` returns [0, 1). */
export function backoffMs(
  policy: RetryPolicy,
  attempt: number,
  random: () => number = Math.random,
): number {
  return Math.round(baseDelayMs(policy, attempt) * (1 - JITTER + 2 * JITTER * random()));
}

/**
 * When to try again after failed attempt `attempt` of a row created at `createdAt`, or null when
 * the retry window is over. Never sooner than `retryAfterMs` (what the receiver asked for).
 */
export function nextAttemptAt(
  policy: RetryPolicy,
  input: {
    attempt: number;
    createdAt: Date;
    now: Date;
    retryAfterMs?: number;
    random?: () => number;
  },
): Date | null {
  const delay = Math.max(backoffMs(policy, input.attempt, input.random), input.retryAfterMs ?? 0);
  const next = input.now.getTime() + delay;
  return next > input.createdAt.getTime() + policy.windowMs ? null : new Date(next);
}
