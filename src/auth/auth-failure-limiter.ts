/**
 * Counts failed authentications per client IP in fixed one-minute windows. Past the limit, the
 * guard answers 429 before any database lookup, so guessing keys (every well-formed unknown key
 * costs a query) is cheap to stop. In memory, per instance.
 */
export class AuthFailureLimiter {
  private readonly windows = new Map<string, { start: number; failures: number }>();

  constructor(
    private readonly limitPerMinute: number,
    private readonly now: () => number = Date.now,
    private readonly windowMs = 60_000,
  ) {}

  isBlocked(ip: string): boolean {
    const window = this.windows.get(ip);
    return (
      !!window &&
      this.now() - window.start < this.windowMs &&
      window.failures >= this.limitPerMinute
    );
  }

  recordFailure(ip: string): void {
    const now = this.now();
    const window = this.windows.get(ip);
    if (!window || now - window.start >= this.windowMs) {
      if (this.windows.size >= 10_000) this.sweep(now);
      this.windows.set(ip, { start: now, failures: 1 });
    } else {
      window.failures++;
    }
  }

  private sweep(now: number): void {
    for (const [ip, window] of this.windows) {
      if (now - window.start >= this.windowMs) this.windows.delete(ip);
    }
  }
}
