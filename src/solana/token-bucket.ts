/**
 * A request budget: `rate` tokens a second, at most `capacity` saved up (one second's worth by
 * default). `take(n)` resolves when `n` requests may go: callers wait their turn (first come,
 * first served), they are never refused. A take larger than the capacity waits for a full bucket
 * and leaves it in debt, which later takes wait to repay, so a batch of 100 requests under a
 * budget of 10 a second costs the 10 seconds it should, not a refusal.
 */
export class TokenBucket {
  private tokens: number;
  private updatedAt: number;
  private readonly queue: { n: number; resolve: () => void }[] = [];
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly rate: number,
    private readonly capacity = Math.max(1, rate),
    private readonly now: () => number = Date.now,
  ) {
    if (!(rate > 0)) throw new RangeError('rate must be positive');
    this.tokens = capacity;
    this.updatedAt = now();
  }

  /** Resolves once `n` requests fit the budget (at once when they do now and nobody waits). */
  take(n: number): Promise<void> {
    this.refill();
    if (this.queue.length === 0 && this.tokens >= this.needed(n)) {
      this.tokens -= n;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.queue.push({ n, resolve });
      this.schedule();
    });
  }

  /** How many callers wait for budget now. */
  get waiting(): number {
    return this.queue.length;
  }

  /** A take waits for `n` tokens, or for a full bucket when `n` is more than it holds. */
  private needed(n: number): number {
    return Math.min(n, this.capacity);
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(
      this.capacity,
      this.tokens + ((now - this.updatedAt) * this.rate) / 1000,
    );
    this.updatedAt = now;
  }

  private drain(): void {
    this.timer = undefined;
    this.refill();
    while (this.queue.length > 0 && this.tokens >= this.needed(this.queue[0].n)) {
      const head = this.queue.shift()!;
      this.tokens -= head.n;
      head.resolve();
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.queue.length === 0) return;
    const missing = this.needed(this.queue[0].n) - this.tokens;
    this.timer = setTimeout(
      () => this.drain(),
      Math.max(1, Math.ceil((missing / this.rate) * 1000)),
    );
  }
}
