import * as schedule from '../outbox/retry-schedule';

/**
 * When a failed webhook delivery is tried again (docs/webhooks.md has the table): the outbox
 * schedule (`src/outbox/retry-schedule.ts`) from 30 s, doubling per attempt, capped at 12 h,
 * ±20 % jitter, retried for 3 days from the delivery's creation.
 * A 429 or 503 with `Retry-After` is never retried sooner than asked (up to a day), nor sooner than
 * the backoff, so a receiver cannot make us spin.
 */
export const FIRST_RETRY_MS = 30_000;
export const MAX_RETRY_DELAY_MS = 12 * 60 * 60 * 1000;
export const RETRY_WINDOW_MS = 3 * 24 * 60 * 60 * 1000;
export const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;
/** RFC 9110 IMF-fixdate, the form `Retry-After` dates take: `Sun, 06 Nov 1994 08:49:37 GMT`. */
const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const WEBHOOK_RETRY: schedule.RetryPolicy = {
  firstRetryMs: FIRST_RETRY_MS,
  maxDelayMs: MAX_RETRY_DELAY_MS,
  windowMs: RETRY_WINDOW_MS,
};

/** The delay after failed attempt number `attempt` (1-based), before jitter. */
export function baseDelayMs(attempt: number): number {
  return schedule.baseDelayMs(WEBHOOK_RETRY, attempt);
}

/** The jittered delay after failed attempt number `attempt`; `random` returns [0, 1). */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  return schedule.backoffMs(WEBHOOK_RETRY, attempt, random);
}

/**
 * A `Retry-After` header (delay-seconds or an HTTP date) as milliseconds from `now`, clamped to
 * [0, 1 day]; undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  let ms: number;
  if (/^\d+$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else if (HTTP_DATE.test(trimmed)) {
    const at = Date.parse(trimmed);
    if (Number.isNaN(at)) return undefined;
    ms = at - nowMs;
  } else return undefined;
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

/**
 * When to try again after failed attempt `attempt` of a delivery created at `createdAt`, or
 * null when the retry window is over and the delivery has failed.
 */
export function nextAttemptAt(input: {
  attempt: number;
  createdAt: Date;
  now: Date;
  retryAfterMs?: number;
  random?: () => number;
}): Date | null {
  return schedule.nextAttemptAt(WEBHOOK_RETRY, input);
}
