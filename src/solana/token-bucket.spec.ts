import { TokenBucket } from './token-bucket';

describe('TokenBucket', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  /** Resolves the takes given, recording when each one went (ms after the start). */
  function takes(bucket: TokenBucket, sizes: number[]) {
    const start = Date.now();
    const went: number[] = [];
    sizes.forEach((n, i) => void bucket.take(n).then(() => (went[i] = Date.now() - start)));
    return went;
  }

  it('lets a second of budget go at once, then one request per 1/rate seconds, in order', async () => {
    const bucket = new TokenBucket(4);
    const went = takes(bucket, [1, 1, 1, 1, 1, 1, 1]);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(went).toEqual([0, 0, 0, 0, 250, 500, 750]);
  });

  it('makes a batch wait for as many tokens as it holds', async () => {
    const bucket = new TokenBucket(10);
    const went = takes(bucket, [10, 5]);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(went).toEqual([0, 500]);
  });

  it('lets a take larger than the bucket go on a full bucket, in debt the next takes repay', async () => {
    const bucket = new TokenBucket(2);
    const went = takes(bucket, [6, 1]);
    await jest.advanceTimersByTimeAsync(5_000);
    // 6 on a full bucket of 2 leaves -4: the next one waits 2.5 s for a token.
    expect(went).toEqual([0, 2_500]);
  });

  it('serves waiters first come, first served: a small take never jumps a waiting large one', async () => {
    const bucket = new TokenBucket(2);
    const went = takes(bucket, [2, 2, 1]);
    expect(bucket.waiting).toBe(2);
    await jest.advanceTimersByTimeAsync(2_000);
    expect(went).toEqual([0, 1_000, 1_500]);
    expect(bucket.waiting).toBe(0);
  });

  it('refills up to its capacity only', async () => {
    const bucket = new TokenBucket(2);
    await jest.advanceTimersByTimeAsync(10_000); // idle: still 2 saved, not 20
    const went = takes(bucket, [1, 1, 1]);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(went).toEqual([0, 0, 500]);
  });

  it('refuses a budget that is not positive', () => {
    expect(() => new TokenBucket(0)).toThrow(RangeError);
  });
});
