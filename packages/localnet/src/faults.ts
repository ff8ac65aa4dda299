/**
 * Fault injection for localnet's JSON-RPC: the ways a real cluster and its RPC providers let a
 * client down (a transaction lost on its way to the leader, one that lands late or never, a node
 * whose statuses lag, a provider that refuses batches or caps their size, rate-limits with HTTP
 * 429, answers pages of history shorter than asked, or lists a transaction it does not serve; a
 * congested cluster whose recent prioritization fees are high), switched on at will so that
 * exactly-once, scanning and RPC-failover code can be tested against them. Only the JSON-RPC front end consults these
 * switches; the chain's in-process methods (the faucet, tests calling `LocalnetChain`) are never
 * affected.
 */
import type { LocalnetChain } from './localnet-chain';
import { LocalnetInputError, PreflightError } from './localnet-errors';
import { InvalidTransactionError } from './transaction-wire';

export interface FaultSwitches {
  /** The next N accepted `sendTransaction` calls answer with the signature and are lost. */
  dropSends: number;
  /** Accepted sends land this many slots later (0: at once). */
  delaySlots: number;
  /** For this many more milliseconds, `getSignatureStatuses` answers null for everything. */
  hideStatusesMs: number;
  /** A batch request gets one error object instead of its answers. */
  refuseBatches: boolean;
  /** A batch of more than N requests is refused with HTTP 413 (0: off). */
  maxBatch: number;
  /** The next N HTTP requests (a batch is one) are answered HTTP 429 (`retryAfterSeconds`). */
  throttleNext: number;
  /** The `Retry-After` of `throttleNext`'s 429s, in seconds; 0 sends none. */
  retryAfterSeconds: number;
  /**
   * At most N JSON-RPC requests a second of wall time (a batch counts as its requests); those
   * past it are answered HTTP 429 with `Retry-After: 1` (0: off).
   */
  rateLimitPerSecond: number;
  /**
   * `getRecentPrioritizationFees` reports at least this many micro-lamports per compute unit
   * for every slot, as a congested cluster does (0: off).
   */
  prioritizationFeeFloor: number;
  /**
   * `getSignaturesForAddress` answers at most this many signatures per call, whatever limit it
   * is asked for (0: off), as providers that cap pages, or hand over to long-term storage
   * mid-page, answer short pages that are not the end of the history.
   */
  signaturePageCap: number;
  /**
   * `getTransaction` answers null for these signatures (they are still listed, and their
   * statuses served), as a provider whose history store lags or lost them does. [] clears it.
   */
  unservedTransactions: string[];
}

export interface FaultState extends FaultSwitches {
  /** Delayed transactions neither executed nor dropped yet. */
  held: number;
}

/** Upper bounds of the numeric switches: far past any test's need, short of a typo's harm. */
export const FAULT_LIMITS = {
  dropSends: 1_000_000,
  delaySlots: 10_000,
  hideStatusesMs: 600_000,
  signaturePageCap: 1_000,
  maxBatch: 10_000,
  throttleNext: 1_000_000,
  retryAfterSeconds: 3_600,
  rateLimitPerSecond: 100_000,
  prioritizationFeeFloor: 1_000_000_000,
} as const satisfies Record<
  keyof Omit<FaultSwitches, 'refuseBatches' | 'unservedTransactions'>,
  number
>;

/** At most this many signatures in `unservedTransactions`. */
export const MAX_UNSERVED_TRANSACTIONS = 10_000;
/** A base58 signature (64 bytes: 88 characters at most, fewer with leading zero bytes). */
const SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{32,88}$/;

/**
 * Validates switches given from outside (JSON-RPC params or a test), field by field.
 * @throws LocalnetInputError for anything but an object of known switches with valid values
 */
export function faultSwitches(value: unknown): Partial<FaultSwitches> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LocalnetInputError(
      'expected an object of switches (dropSends, delaySlots, hideStatusesMs, refuseBatches, ' +
        'maxBatch, throttleNext, retryAfterSeconds, rateLimitPerSecond, ' +
        'prioritizationFeeFloor, signaturePageCap, unservedTransactions)',
    );
  }
  const switches: Partial<FaultSwitches> = {};
  for (const [name, given] of Object.entries(value as Record<string, unknown>)) {
    if (given === undefined) continue;
    if (name === 'refuseBatches') {
      if (typeof given !== 'boolean') throw new LocalnetInputError(`${name} must be a boolean`);
      switches.refuseBatches = given;
    } else if (name === 'unservedTransactions') {
      switches.unservedTransactions = signatureList(name, given);
    } else if (name in FAULT_LIMITS) {
      const key = name as keyof typeof FAULT_LIMITS;
      const max = FAULT_LIMITS[key];
      if (typeof given !== 'number' || !Number.isSafeInteger(given) || given < 0 || given > max) {
        throw new LocalnetInputError(`${name} must be a whole number from 0 to ${max}`);
      }
      switches[key] = given;
    } else {
      throw new LocalnetInputError(`unknown switch ${JSON.stringify(name)}`);
    }
  }
  return switches;
}

function signatureList(name: string, given: unknown): string[] {
  if (
    !Array.isArray(given) ||
    given.length > MAX_UNSERVED_TRANSACTIONS ||
    given.some((s) => typeof s !== 'string' || !SIGNATURE.test(s))
  ) {
    throw new LocalnetInputError(
      `${name} must be an array of at most ${MAX_UNSERVED_TRANSACTIONS} base58 signatures`,
    );
  }
  return [...(given as string[])];
}

interface HeldTransaction {
  signature: string;
  bytes: Buffer;
  /** The slot it lands in, if its blockhash is still valid then. */
  dueSlot: number;
}

/**
 * The fault switches of one localnet JSON-RPC server, and the transactions it holds back while
 * `delaySlots` is on. Everything is in memory: a restart of the server (or the chain) forgets
 * the switches and drops what is held, as a crashed leader forgets what it had not landed.
 */
export class LocalnetFaults {
  private dropSends = 0;
  private delaySlots = 0;
  /** Wall-clock ms (Date.now) until which statuses are hidden. */
  private hideStatusesUntil = 0;
  private refuseBatches = false;
  private maxBatch = 0;
  private throttleNext = 0;
  private retryAfterSeconds = 1;
  private rateLimitPerSecond = 0;
  /** The wall-clock second `rateLimitPerSecond` counts in, and what it counted. */
  private rateWindow = { second: 0, requests: 0 };
  private prioritizationFeeFloor = 0;
  private signaturePageCap = 0;
  private unserved = new Set<string>();
  /** By due slot, then by arrival. */
  private held: HeldTransaction[] = [];
  private readonly heldSignatures = new Set<string>();
  /** Armed only while something is held, for the earliest due slot. */
  private timer?: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly chain: LocalnetChain,
    private readonly log: (message: string) => void = () => undefined,
  ) {}

  /**
   * Replaces the switches given and leaves the others as they are. `hideStatusesMs` counts from
   * now; 0 turns it off. Turning `delaySlots` off does not release what is held: each still lands
   * at its slot. `unservedTransactions` replaces the whole list ([] clears it).
   * @returns the state afterwards, as {@link state} reports it
   * @throws LocalnetInputError for an unknown switch or a value out of range
   */
  set(switches: Partial<FaultSwitches>): FaultState {
    const valid = faultSwitches(switches);
    if (valid.dropSends !== undefined) this.dropSends = valid.dropSends;
    if (valid.delaySlots !== undefined) this.delaySlots = valid.delaySlots;
    if (valid.hideStatusesMs !== undefined) {
      this.hideStatusesUntil = valid.hideStatusesMs === 0 ? 0 : Date.now() + valid.hideStatusesMs;
    }
    if (valid.refuseBatches !== undefined) this.refuseBatches = valid.refuseBatches;
    if (valid.maxBatch !== undefined) this.maxBatch = valid.maxBatch;
    if (valid.throttleNext !== undefined) this.throttleNext = valid.throttleNext;
    if (valid.retryAfterSeconds !== undefined) this.retryAfterSeconds = valid.retryAfterSeconds;
    if (valid.rateLimitPerSecond !== undefined) {
      this.rateLimitPerSecond = valid.rateLimitPerSecond;
      this.rateWindow = { second: 0, requests: 0 };
    }
    if (valid.prioritizationFeeFloor !== undefined) {
      this.prioritizationFeeFloor = valid.prioritizationFeeFloor;
    }
    if (valid.signaturePageCap !== undefined) this.signaturePageCap = valid.signaturePageCap;
    if (valid.unservedTransactions !== undefined) {
      this.unserved = new Set(valid.unservedTransactions);
    }
    return this.state();
  }

  /** The switches now (`hideStatusesMs` is what remains, 0 when off) and the held count. */
  state(): FaultState {
    return {
      dropSends: this.dropSends,
      delaySlots: this.delaySlots,
      hideStatusesMs: Math.max(0, this.hideStatusesUntil - Date.now()),
      refuseBatches: this.refuseBatches,
      maxBatch: this.maxBatch,
      throttleNext: this.throttleNext,
      retryAfterSeconds: this.retryAfterSeconds,
      rateLimitPerSecond: this.rateLimitPerSecond,
      prioritizationFeeFloor: this.prioritizationFeeFloor,
      signaturePageCap: this.signaturePageCap,
      unservedTransactions: [...this.unserved],
      held: this.held.length,
    };
  }

  /** How many signatures `getSignaturesForAddress` may answer when asked for `limit`. */
  signaturePage(limit: number): number {
    return this.signaturePageCap === 0 ? limit : Math.min(limit, this.signaturePageCap);
  }

  /** Whether `getTransaction` is to answer null for `signature`. */
  isUnserved(signature: string): boolean {
    return this.unserved.has(signature);
  }

  /** Whether `getSignatureStatuses` should answer null for every signature now. */
  get statusesHidden(): boolean {
    return this.hideStatusesUntil > Date.now();
  }

  /** Whether a batch request is to be refused whole. */
  get batchesRefused(): boolean {
    return this.refuseBatches;
  }

  /** Whether a batch of `size` requests is past `maxBatch`. */
  batchTooLarge(size: number): boolean {
    return this.maxBatch > 0 && size > this.maxBatch;
  }

  /**
   * Whether an HTTP request carrying `requests` JSON-RPC requests is to be answered HTTP 429
   * now: `throttleNext` first (counting down), then `rateLimitPerSecond` (a request past the
   * second's budget is refused and not counted). Returns the `Retry-After` seconds to send
   * (null: no header), or undefined when the request is served.
   */
  throttle(requests: number): { retryAfter: number | null } | undefined {
    if (this.throttleNext > 0) {
      this.throttleNext--;
      return { retryAfter: this.retryAfterSeconds > 0 ? this.retryAfterSeconds : null };
    }
    if (this.rateLimitPerSecond === 0) return undefined;
    const second = Math.floor(Date.now() / 1000);
    if (second !== this.rateWindow.second) this.rateWindow = { second, requests: 0 };
    if (this.rateWindow.requests + requests > this.rateLimitPerSecond) return { retryAfter: 1 };
    this.rateWindow.requests += requests;
    return undefined;
  }

  /** A slot's prioritization fee as `getRecentPrioritizationFees` reports it. */
  prioritizationFee(fee: number): number {
    return Math.max(fee, this.prioritizationFeeFloor);
  }

  /**
   * `sendTransaction` as the JSON-RPC serves it. With no fault on, the chain's own. Otherwise the
   * transaction is checked as the chain checks it at receipt (refused the same way) and answered
   * with its signature, then lost (`dropSends`, which counts down) or held for `delaySlots`
   * slots. A transaction already held is not held twice: the duplicate gets its signature, as
   * a leader dedups what it already has.
   * @returns the signature (base58)
   * @throws what `LocalnetChain.sendTransaction` throws for a transaction refused at receipt
   */
  sendTransaction(bytes: Uint8Array, options: { skipPreflight?: boolean } = {}): string {
    if (this.dropSends === 0 && this.delaySlots === 0) {
      return this.chain.sendTransaction(bytes, options);
    }
    const signature = this.chain.checkTransaction(bytes, options);
    if (this.dropSends > 0) {
      this.dropSends--;
      return signature;
    }
    if (!this.heldSignatures.has(signature)) {
      this.hold({
        signature,
        bytes: Buffer.from(bytes),
        dueSlot: this.chain.slot() + this.delaySlots,
      });
    }
    return signature;
  }

  /** Stops the timer and drops what is held; the switches answer nothing afterwards. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.held = [];
    this.heldSignatures.clear();
  }

  private hold(entry: HeldTransaction): void {
    if (this.closed) return;
    // After the last one due no later: equal slots keep their order of arrival.
    let at = this.held.length;
    while (at > 0 && this.held[at - 1].dueSlot > entry.dueSlot) at--;
    this.held.splice(at, 0, entry);
    this.heldSignatures.add(entry.signature);
    if (at === 0) this.arm();
  }

  private arm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.closed || this.held.length === 0) return;
    this.timer = setTimeout(() => this.release(), this.chain.msUntilSlot(this.held[0].dueSlot));
    // Held transactions never keep a process alive that is otherwise done.
    this.timer.unref();
  }

  /** Lands every held transaction whose slot has come, then waits for the next one's. */
  private release(): void {
    this.timer = undefined;
    if (this.chain.isClosed) {
      this.close();
      return;
    }
    const slot = this.chain.slot();
    let due = 0;
    while (due < this.held.length && this.held[due].dueSlot <= slot) due++;
    for (const entry of this.held.splice(0, due)) {
      this.heldSignatures.delete(entry.signature);
      this.land(entry);
    }
    this.arm();
  }

  /**
   * Executes a held transaction as a cluster does one that reaches the leader: a failure while
   * running is recorded and charged (the `skipPreflight` path); an expired blockhash, a signature
   * processed meanwhile, lookups that no longer resolve or a fee payer without SOL drop it
   * without a trace. Never throws: it runs on a timer.
   */
  private land(entry: HeldTransaction): void {
    try {
      this.chain.sendTransaction(entry.bytes, { skipPreflight: true });
    } catch (error) {
      const dropped = error instanceof PreflightError || error instanceof InvalidTransactionError;
      this.log(
        `Localnet faults: delayed transaction ${entry.signature} ` +
          `${dropped ? 'dropped' : 'could not land'}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}
