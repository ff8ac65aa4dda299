/**
 * When a failed e-mail is tried again (docs/email.md has the table). The same shape as webhook
 * deliveries' schedule (`src/webhooks/retry-schedule.ts`; delivery code is not shared across
 * modules): exponential backoff from 1 min, doubling per attempt, capped at 6 h, each delay
 * jittered by ±20 % so that messages failing together (a relay outage) do not return together.
 * A message is retried for 3 days from its creation; the first retry that would fall later marks
 * it failed.
 */
export const FIRST_RETRY_MS = 60_000;
export const MAX_RETRY_DELAY_MS = 6 * 60 * 60 * 1000;
export const RETRY_WINDOW_MS = 3 * 24 * 60 * 60 * 1000;
const JITTER = 0.2;

/** The delay after failed attempt number `attempt` (1-based), before jitter. */
export function baseDelayMs(attempt: number): number {
  return Math.min(FIRST_RETRY_MS * 2 ** Math.max(0, attempt - 1), MAX_RETRY_DELAY_MS);
}

/**
 * When to try again after failed attempt `attempt` of a message created at `createdAt`, or null
 * when the retry window is over and the message has failed. `random` returns [0, 1).
 */
export function nextAttemptAt(input: {
  attempt: number;
  createdAt: Date;
  now: Date;
  random?: () => number;
}): Date | null {
  const random = input.random ?? Math.random;
  const delay = Math.round(baseDelayMs(input.attempt) * (1 - JITTER + 2 * JITTER * random()));
  const next = input.now.getTime() + delay;
  return next > input.createdAt.getTime() + RETRY_WINDOW_MS ? null : new Date(next);
}
