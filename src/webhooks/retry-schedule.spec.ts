import {
  backoffMs,
  baseDelayMs,
  MAX_RETRY_AFTER_MS,
  nextAttemptAt,
  parseRetryAfter,
  RETRY_WINDOW_MS,
} from './retry-schedule';

const S = 1000;
const H = 3600 * S;

describe('retry schedule', () => {
  it('doubles from 30 s and caps at 12 h', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 20].map(baseDelayMs)).toEqual([
      30 * S,
      60 * S,
      120 * S,
      240 * S,
      480 * S,
      960 * S,
      1920 * S,
      3840 * S,
      7680 * S,
      15360 * S,
      30720 * S,
      12 * H,
      12 * H,
    ]);
  });

  it('jitters by at most 20 % either way', () => {
    expect(backoffMs(1, () => 0)).toBe(24 * S);
    expect(backoffMs(1, () => 0.5)).toBe(30 * S);
    expect(backoffMs(1, () => 0.999999)).toBe(36 * S);
    for (let i = 0; i < 200; i++) {
      const d = backoffMs(3);
      expect(d).toBeGreaterThanOrEqual(96 * S);
      expect(d).toBeLessThanOrEqual(144 * S);
    }
  });

  it('retries for 3 days, then gives up: 16 attempts without jitter', () => {
    const created = new Date('2026-01-01T00:00:00Z');
    let now = created;
    let attempts = 1; // the first attempt happens at creation
    for (;;) {
      const next = nextAttemptAt({ attempt: attempts, createdAt: created, now, random: () => 0.5 });
      if (!next) break;
      expect(next.getTime()).toBeGreaterThan(now.getTime());
      now = next;
      attempts++;
    }
    expect(attempts).toBe(16);
    expect(now.getTime() - created.getTime()).toBeLessThanOrEqual(RETRY_WINDOW_MS);
    expect(now.getTime() - created.getTime()).toBeGreaterThan(RETRY_WINDOW_MS - 12 * H);
  });

  it('never retries sooner than Retry-After, nor sooner than the backoff', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const at = (retryAfterMs: number) =>
      nextAttemptAt({ attempt: 1, createdAt: now, now, retryAfterMs, random: () => 0.5 })!;
    expect(at(120 * S).getTime() - now.getTime()).toBe(120 * S);
    expect(at(5 * S).getTime() - now.getTime()).toBe(30 * S);
  });

  it('gives up when Retry-After points past the window', () => {
    const created = new Date('2026-01-01T00:00:00Z');
    const now = new Date(created.getTime() + RETRY_WINDOW_MS - H);
    expect(nextAttemptAt({ attempt: 3, createdAt: created, now, retryAfterMs: 2 * H })).toBeNull();
  });

  describe('parseRetryAfter', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    it.each([
      ['120', 120 * S],
      [' 7 ', 7 * S],
      ['0', 0],
      ['Thu, 01 Jan 2026 00:02:00 GMT', 120 * S],
      ['Wed, 31 Dec 2025 00:00:00 GMT', 0],
      ['9999999', MAX_RETRY_AFTER_MS],
    ])('%j -> %d ms', (value, ms) => {
      expect(parseRetryAfter(value, now)).toBe(ms);
    });

    it.each([undefined, '', 'soon', '-5', '1.5'])('%j is ignored', (value) => {
      expect(parseRetryAfter(value, now)).toBeUndefined();
    });
  });
});
