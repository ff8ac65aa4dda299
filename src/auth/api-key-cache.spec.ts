import { ApiKeyCache } from './api-key-cache';

const ctx = { merchantId: 'm', apiKeyId: 'k' };

describe('ApiKeyCache', () => {
  it('serves nothing until enabled (the revocation channel is listening)', () => {
    const cache = new ApiKeyCache();
    cache.set('h', ctx, cache.begin());
    expect(cache.get('h')).toBeUndefined();
    cache.enable();
    cache.set('h', ctx, cache.begin());
    expect(cache.get('h')).toEqual(ctx);
  });

  it('does not cache a lookup that raced a revocation', () => {
    const cache = new ApiKeyCache();
    cache.enable();
    const epoch = cache.begin(); // lookup starts
    cache.evict('h'); // revocation lands while the lookup is in flight
    cache.set('h', ctx, epoch); // lookup returns the stale "active" row
    expect(cache.get('h')).toBeUndefined();
  });

  it('forgets everything when disabled', () => {
    const cache = new ApiKeyCache();
    cache.enable();
    cache.set('h', ctx, cache.begin());
    cache.disable();
    cache.enable();
    expect(cache.get('h')).toBeUndefined();
  });

  it('expires entries after the TTL (real time), whatever the channel says', () => {
    let now = 1_000;
    const cache = new ApiKeyCache(10, 60_000, () => now);
    cache.enable();
    cache.set('h', ctx, cache.begin());
    now += 59_999;
    expect(cache.get('h')).toEqual(ctx);
    now += 1;
    expect(cache.get('h')).toBeUndefined();
  });

  it('stays within its capacity, dropping the oldest entry', () => {
    const cache = new ApiKeyCache(2);
    cache.enable();
    for (const h of ['a', 'b', 'c']) cache.set(h, ctx, cache.begin());
    expect(cache.size).toBe(2);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('c')).toEqual(ctx);
  });
});
