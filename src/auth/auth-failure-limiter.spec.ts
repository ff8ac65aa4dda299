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

describe('AuthFailureLimiter: clients and memory', () => {
  it('counts an IPv6 client by its /64 and an IPv4-mapped address as the IPv4 one', () => {
    expect(AuthFailureLimiter.clientOf('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(AuthFailureLimiter.clientOf('2001:0db8:0001:0002:ffff:1:2:3')).toBe('2001:db8:1:2::/64');
    expect(AuthFailureLimiter.clientOf('::ffff:10.1.2.3')).toBe('10.1.2.3');
    const limiter = new AuthFailureLimiter(2, () => 0);
    limiter.recordFailure('2001:db8:1:2::1');
    limiter.recordFailure('2001:db8:1:2::ffff'); // another address of the same /64
    expect(limiter.isBlocked('2001:db8:1:2:3:4:5:6')).toBe(true);
    expect(limiter.isBlocked('2001:db8:1:3::1')).toBe(false);
  });

  it('stays bounded when an attacker rotates addresses within one window', () => {
    const limiter = new AuthFailureLimiter(60, () => 0, 60_000, 1_000);
    for (let i = 0; i < 50_000; i++) limiter.recordFailure(`2001:db8:${i.toString(16)}::1`);
    expect(limiter.size).toBeLessThanOrEqual(1_000);
    // The newest clients are the ones kept.
    limiter.recordFailure('9.9.9.9');
    expect(limiter.size).toBeLessThanOrEqual(1_000);
  });

  it('says when a blocked client may retry', () => {
    let now = 10_000;
    const limiter = new AuthFailureLimiter(1, () => now);
    limiter.recordFailure('1.2.3.4');
    now = 40_500;
    expect(limiter.retryAfterSeconds('1.2.3.4')).toBe(30);
  });
});
