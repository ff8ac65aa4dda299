import { AuthFailureLimiter } from './auth-failure-limiter';

describe('AuthFailureLimiter', () => {
  it('blocks an IP after the limit, for the rest of its one-minute window', () => {
    let now = 0;
    const limiter = new AuthFailureLimiter(3, () => now);
    for (let i = 0; i < 3; i++) {
      expect(limiter.isBlocked('1.2.3.4')).toBe(false);
      limiter.recordFailure('1.2.3.4');
    }
    expect(limiter.isBlocked('1.2.3.4')).toBe(true);
    expect(limiter.isBlocked('5.6.7.8')).toBe(false);
    now = 59_999;
    expect(limiter.isBlocked('1.2.3.4')).toBe(true);
    now = 60_000;
    expect(limiter.isBlocked('1.2.3.4')).toBe(false);
    limiter.recordFailure('1.2.3.4'); // a new window starts
    expect(limiter.isBlocked('1.2.3.4')).toBe(false);
  });
});
