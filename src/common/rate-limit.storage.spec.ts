import { TokenBucketStorage } from './rate-limit.storage';

describe('TokenBucketStorage', () => {
  const MINUTE = 60_000;
  let now = 0;
  const storage = (capacity?: number) => new TokenBucketStorage(capacity, () => now);
  beforeEach(() => {
    now = 1_000_000;
  });

  it('allows a burst of the limit, then refuses, counting hits down the remaining budget', () => {
    const s = storage();
    const hits = [1, 2, 3, 4, 5].map(() => s.take('key:a', MINUTE, 5));
    expect(hits.map((h) => [h.isBlocked, h.totalHits])).toEqual([
      [false, 1],
      [false, 2],
      [false, 3],
      [false, 4],
      [false, 5],
    ]);
    const refused = s.take('key:a', MINUTE, 5);
    expect(refused).toMatchObject({ isBlocked: true, totalHits: 6 });
    // One request's worth (60 s / 5) comes back in 12 s: that is the Retry-After.
    expect(refused.timeToBlockExpire).toBe(12);
  });

  it('gives requests back at the limit per window, evenly, and a refusal costs nothing', () => {
    const s = storage();
    for (let i = 0; i < 5; i++) s.take('key:a', MINUTE, 5);
    for (let i = 0; i < 3; i++) expect(s.take('key:a', MINUTE, 5).isBlocked).toBe(true);
    now += 11_999;
    expect(s.take('key:a', MINUTE, 5).isBlocked).toBe(true);
    now += 1;
    expect(s.take('key:a', MINUTE, 5)).toMatchObject({ isBlocked: false, totalHits: 5 });
    expect(s.take('key:a', MINUTE, 5).isBlocked).toBe(true);
    now += MINUTE; // a full window later: the whole budget again
    expect(s.take('key:a', MINUTE, 5)).toMatchObject({ isBlocked: false, totalHits: 1 });
  });

  it('keeps one budget per key', () => {
    const s = storage();
    for (let i = 0; i < 2; i++) s.take('key:a', MINUTE, 2);
    expect(s.take('key:a', MINUTE, 2).isBlocked).toBe(true);
    expect(s.take('key:b', MINUTE, 2).isBlocked).toBe(false);
  });

  it('sustains the limit per window under steady traffic, no more', () => {
    const s = storage();
    let allowed = 0;
    for (let t = 0; t < 10 * MINUTE; t += 10) {
      now = 1_000_000 + t;
      if (!s.take('key:a', MINUTE, 6000).isBlocked) allowed++;
    }
    // Ten minutes at 100 requests a second against 6 000 a minute: the burst plus ten minutes' rate.
    expect(allowed).toBeGreaterThanOrEqual(6000 * 10);
    expect(allowed).toBeLessThanOrEqual(6000 * 11);
  });

  it('forgets the least recently seen clients beyond its capacity', () => {
    const s = storage(2);
    s.take('ip:1', MINUTE, 1);
    s.take('ip:2', MINUTE, 1);
    s.take('ip:3', MINUTE, 1); // ip:1 dropped: it starts again with a full bucket
    expect(s.take('ip:1', MINUTE, 1).isBlocked).toBe(false);
    expect(s.take('ip:3', MINUTE, 1).isBlocked).toBe(true);
  });
});
