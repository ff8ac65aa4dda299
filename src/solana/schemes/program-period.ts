import type { AccountInfo } from '@solana/web3.js';

/** A subscription's per-period allowance as the Subscriptions program keeps it. */
export interface PeriodAllowance {
  terms: { amount: bigint; periodHours: bigint };
  amountPulledInPeriod: bigint;
  currentPeriodStartTs: bigint;
}

/** The cluster's unix time from the Clock sysvar's data (`unix_timestamp`, an i64 at 32). */
export function clockUnixTimestamp(info: AccountInfo<Buffer> | null): bigint | null {
  if (!info || info.data.length < 40) return null;
  return info.data.readBigInt64LE(32);
}

/**
 * Why the program would refuse a pull of `amount` at `now` for the period's allowance
 * (`validate_recurring_transfer`: a period that has run its length starts afresh, with nothing
 * pulled; within it, what was pulled plus the pull may not exceed the plan's amount), or null.
 * When the service has not charged the period, someone else pulled it: the plan's owner or
 * another puller (recorded as unattributed, `subscription_pull_by_other`). The charge waits for
 * the next period; it is not the customer's doing.
 */
export function periodAllowanceTaken(
  subscription: PeriodAllowance,
  amount: bigint,
  now: bigint,
): string | null {
  const { terms, amountPulledInPeriod: pulled, currentPeriodStartTs: start } = subscription;
  const length = terms.periodHours * 3600n;
  if (length <= 0n || now < start || now - start >= length) return null;
  if (pulled + amount <= terms.amount) return null;
  return (
    `this period's allowance is already pulled (${pulled} of ${terms.amount} since ${start}; ` +
    `the next period starts at ${start + length}): a pull the service did not make ` +
    `(its payment is noted subscription_pull_by_other)`
  );
}
