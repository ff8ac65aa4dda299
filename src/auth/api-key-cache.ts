import { AuthContext } from '../common/decorators/current-merchant.decorator';

/**
 * In-memory map from key hash to the merchant it authenticates, so a known key costs no database
 * round trip. Correctness rests on invalidation: a revocation evicts the hash here at once and,
 * through PostgreSQL NOTIFY, on every other instance. While the notification channel is down the
 * cache is disabled (every request reads the database), because evictions could be missed.
 * Entries also expire after `ttlMs` (real time), bounding the harm of a channel that died silently.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, { context: AuthContext; expiresAt: number }>();
  /** Bumped by every eviction, so a lookup that raced a revocation is not cached. */
  private epoch = 0;
  private enabled = false;

  constructor(
    private readonly capacity = 10_000,
    private readonly ttlMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(hash: string): AuthContext | undefined {
    if (!this.enabled) return undefined;
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.context;
  }

  /** The epoch to pass back to `set` after a database lookup that started now. */
  begin(): number {
    return this.epoch;
  }

  set(hash: string, value: AuthContext, epochAtLookup: number): void {
    if (!this.enabled || epochAtLookup !== this.epoch) return;
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(hash, { context: value, expiresAt: this.now() + this.ttlMs });
  }

  evict(hash: string): void {
    this.epoch++;
    this.entries.delete(hash);
  }

  /** Stop caching and forget everything (the notification channel dropped). */
  disable(): void {
    this.epoch++;
    this.enabled = false;
    this.entries.clear();
  }

  /** Start caching (the notification channel is listening). */
  enable(): void {
    this.epoch++;
    this.enabled = true;
  }

  get size(): number {
    return this.entries.size;
  }
}
