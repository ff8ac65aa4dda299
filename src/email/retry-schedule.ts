import * as schedule from '../outbox/retry-schedule';

/**
 * When a failed e-mail is tried again (docs/email.md has the table): the outbox schedule
 * (`src/outbox/retry-schedule.ts`) from 1 min, doubling per attempt, capped at 6 h, ±20 % jitter,
 * retried for 3 days from the message's creation.
 */
export const FIRST_RETRY_MS = 60_000;
export const MAX_RETRY_DELAY_MS = 6 * 60 * 60 * 1000;
export const RETRY_WINDOW_MS = 3 * 24 * 60 * 60 * 1000;
const EMAIL_RETRY: schedule.RetryPolicy = {
  firstRetryMs: FIRST_RETRY_MS,
  maxDelayMs: MAX_RETRY_DELAY_MS,
  windowMs: RETRY_WINDOW_MS,
};

/** The delay after failed attempt number `attempt` (1-based), before jitter. */
export function baseDelayMs(attempt: number): number {
  return schedule.baseDelayMs(EMAIL_RETRY, attempt);
}

/** When to try again after failed attempt `attempt`, or null when the window is over. */
export function nextAttemptAt(input: {
  attempt: number;
  createdAt: Date;
  now: Date;
  random?: () => number;
}): Date | null {
  return schedule.nextAttemptAt(EMAIL_RETRY, input);
}
