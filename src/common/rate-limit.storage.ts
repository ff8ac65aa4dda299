import type { ThrottlerStorage } from '@nestjs/throttler';
import type { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';
import { LRUCache } from 'lru-cache';
import { performance } from 'node:perf_hooks';

/** At most this many clients (API keys, addresses) are tracked; see `TokenBucketStorage`. */
export const RATE_LIMIT_CLIENTS = 100_000;

/**
 * The rate limiter's state: a token bucket per client, kept as GCRA's one number (the
 * "theoretical arrival time"). A client holds `limit` requests and gets them back at
 * `limit` per `ttl`, evenly: a burst of `limit`, then the sustained rate. Each request costs
 * O(1) and allocates nothing.
 *
 * It replaces `@nestjs/throttler`'s in-memory storage, which keeps a timestamp per request of the
 * window and copies that array on every request (`filter`): with the default 6 000 a minute, a
 * busy key's request allocated ~48 KB and scanned 6 000 entries; under the benchmark's high limit,
 * the copying drove most of the garbage collection time.
 *
 * A client whose bucket is full has no entry worth keeping: entries past their time are
 * harmless, and the least recently seen are dropped beyond `RATE_LIMIT_CLIENTS` (such a client
 * starts again with a full bucket). `blockDuration` is not used: a refused request costs nothing
 * and the client may retry as soon as one request's worth has come back (`Retry-After`).
 */
export class TokenBucketStorage implements ThrottlerStorage {
  private readonly arrivals: LRUCache<string, number>;

  constructor(
    capacity = RATE_LIMIT_CLIENTS,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.arrivals = new LRUCache<string, number>({ max: capacity });
  }

  increment(key: string, ttl: number, limit: number): Promise<ThrottlerStorageRecord> {
    return Promise.resolve(this.take(key, ttl, limit));
  }

  /** One request of `key`, allowed or refused; times in the record are whole seconds. */
  take(key: string, ttl: number, limit: number): ThrottlerStorageRecord {
    const now = this.now();
    const interval = ttl / limit;
    const next = Math.max(this.arrivals.get(key) ?? now, now) + interval;
    const allowedAt = next - ttl;
    if (allowedAt > now) {
      return {
        totalHits: limit + 1,
        timeToExpire: Math.ceil((next - interval - now) / 1000),
        isBlocked: true,
        timeToBlockExpire: Math.max(1, Math.ceil((allowedAt - now) / 1000)),
      };
    }
    this.arrivals.set(key, next);
    return {
      totalHits: Math.min(limit, Math.ceil((next - now) / interval - 1e-9)),
      timeToExpire: Math.ceil((next - now) / 1000),
      isBlocked: false,
      timeToBlockExpire: 0,
    };
  }
}
