import { isIPv6 } from 'node:net';

/** Clients tracked at once; past this, the oldest windows are dropped (bounded memory). */
const MAX_CLIENTS = 10_000;

/**
 * Counts failed authentications per client in fixed one-minute windows (DESIGN D17). The client
 * is the address express decides with `TRUST_PROXY` (behind a load balancer, the original
 * client, not the balancer); an IPv6 client is its /64, the block one subscriber gets, so rotating
 * addresses inside it does not reset the count. In memory, per instance, with at most
 * `MAX_CLIENTS` windows: an attacker rotating addresses evicts the oldest windows rather than
 * growing the map without end.
 *
 * A blocked client is not refused outright: every key it presents is still checked (the key
 * cache, then one indexed database lookup), so a valid key is never answered 429 because of
 * failures someone else caused from the same address (behind a load balancer without
 * `TRUST_PROXY`, that is everyone). Only failed attempts are answered 429 while blocked: the
 * limit tells a guessing client to stop (`Retry-After`). It does not shield the database: a failed
 * attempt costs one index lookup, less than the HTTP request around it, and a 256-bit key cannot
 * be guessed anyway.
 */
export class AuthFailureLimiter {
  private readonly windows = new Map<string, { start: number; failures: number }>();

  constructor(
    private readonly limitPerMinute: number,
    private readonly now: () => number = Date.now,
    private readonly windowMs = 60_000,
    private readonly maxClients = MAX_CLIENTS,
  ) {}

  /** The unit failures are counted by: an IPv4 address, or an IPv6 address's /64. */
  static clientOf(address: string): string {
    const bare = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
    if (!isIPv6(bare)) return bare;
    return `${expandIPv6(bare).slice(0, 4).join(':')}::/64`;
  }

  isBlocked(address: string): boolean {
    const window = this.windows.get(AuthFailureLimiter.clientOf(address));
    return (
      !!window &&
      this.now() - window.start < this.windowMs &&
      window.failures >= this.limitPerMinute
    );
  }

  /** Seconds until a blocked client's window ends (for `Retry-After`). */
  retryAfterSeconds(address: string): number {
    const window = this.windows.get(AuthFailureLimiter.clientOf(address));
    if (!window) return 1;
    return Math.max(1, Math.ceil((window.start + this.windowMs - this.now()) / 1000));
  }

  recordFailure(address: string): void {
    const client = AuthFailureLimiter.clientOf(address);
    const now = this.now();
    const window = this.windows.get(client);
    if (window && now - window.start < this.windowMs) {
      window.failures++;
      return;
    }
    this.windows.delete(client);
    if (this.windows.size >= this.maxClients) this.makeRoom(now);
    this.windows.set(client, { start: now, failures: 1 });
  }

  /** How many clients are tracked (memory bound checks). */
  get size(): number {
    return this.windows.size;
  }

  /** Drops ended windows, then the oldest ones (Map order is start order) down to 90 %. */
  private makeRoom(now: number): void {
    for (const [client, window] of this.windows) {
      if (now - window.start >= this.windowMs) this.windows.delete(client);
    }
    const target = Math.floor(this.maxClients * 0.9);
    for (const client of this.windows.keys()) {
      if (this.windows.size <= target) break;
      this.windows.delete(client);
    }
  }
}

/** The eight groups of an IPv6 address, lower case, no zone. */
function expandIPv6(address: string): string[] {
  const [head, tail = ''] = address.split('%')[0].toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') && tail ? tail.split(':') : [];
  const fill = address.includes('::') ? 8 - left.length - right.length : 0;
  return [...left, ...Array.from({ length: fill }, () => '0'), ...right].map((g) =>
    g.replace(/^0+(?=.)/, ''),
  );
}
