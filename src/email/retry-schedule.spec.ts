import { baseDelayMs, nextAttemptAt, RETRY_WINDOW_MS } from './retry-schedule';

const S = 1000;
const M = 60 * S;
const H = 60 * M;

describe('e-mail retry schedule', () => {
  it('doubles from 1 min and caps at 6 h', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20].map(baseDelayMs)).toEqual([
      1 * M,
      2 * M,
      4 * M,
      8 * M,
      16 * M,
      32 * M,
      64 * M,
      128 * M,
      256 * M,
      6 * H,
      6 * H,
    ]);
  });

  it('jitters by at most 20 % either way', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const after = (random: () => number) =>
      nextAttemptAt({ attempt: 1, createdAt: now, now, random })!.getTime() - now.getTime();
    expect(after(() => 0)).toBe(48 * S);
    expect(after(() => 0.5)).toBe(60 * S);
    expect(after(() => 0.999999)).toBe(72 * S);
    for (let i = 0; i < 200; i++) {
      const delay = after(Math.random);
      expect(delay).toBeGreaterThanOrEqual(48 * S);
      expect(delay).toBeLessThanOrEqual(72 * S);
    }
  });

  it('retries for 3 days, then gives up: 20 attempts without jitter', () => {
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
    expect(attempts).toBe(20);
    expect(now.getTime() - created.getTime()).toBeLessThanOrEqual(RETRY_WINDOW_MS);
    expect(now.getTime() - created.getTime()).toBeGreaterThan(RETRY_WINDOW_MS - 6 * H);
  });
});
