/**
 * Seconds from `since` to `now` (0 without a `since`, never negative): a gauge's age. `since`
 * as the pool returns timestamps (text) or a Date.
 */
export function secondsSince(since: string | Date | null | undefined, now: Date): number {
  if (since === null || since === undefined) return 0;
  return Math.max(0, (now.getTime() - new Date(since).getTime()) / 1000);
}
