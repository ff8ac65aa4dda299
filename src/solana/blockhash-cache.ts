import { Commitment, Connection } from '@solana/web3.js';
import { ServiceUnavailableError } from '../common/errors/domain-error';
import { withTimeout } from '../common/with-timeout';

export interface RecentBlockhash {
  blockhash: string;
  lastValidBlockHeight: number;
  /** The slot the RPC answered at: a transaction using this blockhash lands after it. */
  slot: number;
}

export interface BlockhashCacheOptions {
  /** How often the background refresh runs. */
  refreshMs?: number;
  /** The oldest blockhash handed out; older, it is fetched while the caller waits. */
  maxAgeMs?: number;
  /** How long a caller waits for a fetch before the chain counts as unreachable. */
  fetchTimeoutMs?: number;
  now?: () => number;
}

/** The chain RPC did not answer: the request cannot be served now (503). */
export class ChainUnavailableError extends ServiceUnavailableError {
  constructor() {
    super('The Solana RPC is unreachable: no recent blockhash for the transaction; retry later');
  }
}

/**
 * A recent blockhash for the unsigned transactions the API returns (plan and invoice
 * registrations, checkout payments), refreshed in the background so that building one costs no
 * RPC round trip. Never older than `maxAgeMs` (20 s by default: a blockhash lives ~60-90 s, so
 * the signer keeps a minute). While the RPC is down a caller learns it within `fetchTimeoutMs`,
 * and after a failed fetch the next callers fail at once for a moment rather than each waiting.
 */
export class BlockhashCache {
  private latest?: RecentBlockhash & { at: number };
  private inflight?: Promise<RecentBlockhash>;
  private failedAt = -Infinity;
  private timer?: NodeJS.Timeout;
  private readonly refreshMs: number;
  private readonly maxAgeMs: number;
  private readonly fetchTimeoutMs: number;
  private readonly now: () => number;

  constructor(
    private readonly connection: Connection,
    private readonly commitment: Commitment,
    options: BlockhashCacheOptions = {},
  ) {
    this.refreshMs = options.refreshMs ?? 5_000;
    this.maxAgeMs = options.maxAgeMs ?? 20_000;
    this.fetchTimeoutMs = options.fetchTimeoutMs ?? 3_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * A blockhash at most `maxAgeMs` old. The first call starts the background refresh.
   * @throws ChainUnavailableError when none can be had from the RPC in time.
   */
  async get(): Promise<RecentBlockhash> {
    this.start();
    const latest = this.latest;
    if (latest && this.now() - latest.at <= this.maxAgeMs) return latest;
    // Just failed: the RPC is down; do not make every request wait for it again.
    if (this.now() - this.failedAt < Math.min(this.fetchTimeoutMs, 2_000)) {
      throw new ChainUnavailableError();
    }
    try {
      return await this.fetch();
    } catch {
      this.failedAt = this.now();
      throw new ChainUnavailableError();
    }
  }

  /** Stops the background refresh (shutdown; tests). */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.fetch().catch(() => undefined), this.refreshMs);
    this.timer.unref();
  }

  /** One fetch at a time, bounded by `fetchTimeoutMs`; its result becomes the cached blockhash. */
  private fetch(): Promise<RecentBlockhash> {
    this.inflight ??= withTimeout(
      this.connection.getLatestBlockhashAndContext(this.commitment),
      this.fetchTimeoutMs,
    )
      .then(({ context, value }) => {
        const recent = { ...value, slot: context.slot };
        this.latest = { ...recent, at: this.now() };
        return recent;
      })
      .finally(() => (this.inflight = undefined));
    return this.inflight;
  }
}
