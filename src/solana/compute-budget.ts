import {
  Commitment,
  ComputeBudgetProgram,
  PublicKey,
  TransactionInstruction,
} from '@solana/web3.js';
import { RpcBatcher } from './rpc-batcher';
import type { RpcTransport } from './rpc-transport';
import { legacyMessageBytes, unsignedWire } from './transactions';

/** The base fee: lamports per signature. */
export const LAMPORTS_PER_SIGNATURE = 5_000n;
/** The most compute units a transaction may ask for. */
export const MAX_COMPUTE_UNITS = 1_400_000;
/** The least limit the service's transactions get, whatever their simulation consumed. */
export const MIN_COMPUTE_UNITS = 10_000;
/** What a transaction may use per instruction when it sets no limit (the runtime's default). */
const DEFAULT_UNITS_PER_INSTRUCTION = 200_000;
/** The price is this percentile of the recent slots' prioritization fees. */
export const PRIORITY_FEE_PERCENTILE = 75;
/** How long a price estimate is reused (for the same account). */
export const PRIORITY_FEE_CACHE_MS = 10_000;
/** The ceiling of the compute-unit price when none is configured (micro-lamports per unit). */
export const DEFAULT_PRIORITY_FEE_MAX_MICRO_LAMPORTS = 1_000_000;
/** Estimates kept (one per account asked about); the oldest goes first. */
const MAX_CACHED_PRICES = 10_000;
/** How long what a shape of transaction consumed is reused before it is simulated again. */
export const UNITS_CACHE_MS = 60_000;
/** Shapes whose units are kept; the oldest goes first. */
const MAX_CACHED_SHAPES = 10_000;
/** Fee reads and simulations that wait together go in one batch, at most this many. */
const MAX_READ_BATCH = 64;

export interface ComputeBudgetOptions {
  /** Ceiling of the compute-unit price in micro-lamports; 0 sets no price at all. */
  maxMicroLamports: number;
  commitment: Commitment;
  now?: () => number;
}

/**
 * The compute budget of the service's own transactions (its charges): a compute-unit price from
 * `getRecentPrioritizationFees` and a compute-unit limit from a simulation (docs/solana.md,
 * "Priority fees").
 *
 * - **Price**: the {@link PRIORITY_FEE_PERCENTILE}th percentile of the fees the RPC reports for
 *   the last 150 slots for the account asked about (the merchant's receiving account: the one a
 *   charge writes that others write too), at most `maxMicroLamports`, reused for
 *   {@link PRIORITY_FEE_CACHE_MS} per account; the reads of the charges being signed at once go
 *   in one batch. A failed read (or one that reports no slot) keeps the account's last
 *   estimate, else the latest of any account (the cluster's level), else bids the ceiling: a
 *   charge that cannot see the fee market bids what the operator allowed, not nothing.
 * - **Limit**: what a simulation of the transaction consumed, plus 10%, at least
 *   {@link MIN_COMPUTE_UNITS}; the simulations of the charges being signed at once go in one
 *   batch, and a shape of transaction (a plan's charges) is simulated once a minute, not once
 *   per charge. A simulation that fails (the program refuses, the RPC is down) gives the runtime's
 *   own default (200,000 a instruction), stated explicitly so that the fee stays exact.
 */
export class ComputeBudget {
  private readonly prices = new Map<string, { value: number; at: number }>();
  /** What one simulation of each shape of transaction consumed (`unitLimit`), and when. */
  private readonly units = new Map<string, { consumed: number; at: number }>();
  /** The latest estimate read, of any account. */
  private latest: number | undefined;
  private readonly feeReads: RpcBatcher<number | null>;
  private readonly simulations: RpcBatcher<number | null>;
  private readonly maxMicroLamports: number;
  private readonly now: () => number;

  constructor(rpc: Pick<RpcTransport, 'batch'>, options: ComputeBudgetOptions) {
    this.maxMicroLamports = options.maxMicroLamports;
    this.now = options.now ?? Date.now;
    this.feeReads = new RpcBatcher(async (accounts) => {
      const answers = await rpc.batch(
        accounts.map((account) => ({ method: 'getRecentPrioritizationFees', params: [[account]] })),
      );
      return answers.map((a) => (a.error ? null : percentileFee(a.result)));
    }, MAX_READ_BATCH);
    this.simulations = new RpcBatcher(async (transactions) => {
      const answers = await rpc.batch(
        transactions.map((transaction) => ({
          method: 'simulateTransaction',
          params: [
            transaction,
            {
              encoding: 'base64',
              sigVerify: false,
              replaceRecentBlockhash: true,
              commitment: options.commitment,
            },
          ],
        })),
      );
      return answers.map((a) => unitsConsumed(a.result));
    }, MAX_READ_BATCH);
  }

  /** Whether the service's transactions set a compute-unit price at all. */
  get pricesEnabled(): boolean {
    return this.maxMicroLamports > 0;
  }

  /** The compute-unit price, in micro-lamports, for a transaction that writes `account`. */
  async price(account: string): Promise<number> {
    if (!this.pricesEnabled) return 0;
    const cached = this.prices.get(account);
    if (cached && this.now() - cached.at < PRIORITY_FEE_CACHE_MS) return cached.value;
    const estimate = await this.feeReads.load(account).catch(() => null);
    if (estimate === null) return cached?.value ?? this.latest ?? this.maxMicroLamports;
    const value = Math.min(estimate, this.maxMicroLamports);
    this.latest = value;
    this.prices.delete(account);
    if (this.prices.size >= MAX_CACHED_PRICES) {
      this.prices.delete(this.prices.keys().next().value!);
    }
    this.prices.set(account, { value, at: this.now() });
    return value;
  }

  /**
   * The compute-unit limit for `instructions` paid by `feePayer`: simulated with the largest
   * limit (and, when prices are on, a price, as the transaction will carry one).
   *
   * `shape` names what decides the units a transaction consumes (the same programs on accounts
   * laid out alike: the charges of one plan in one mint, from token accounts of one size): what
   * one simulation of a shape consumed is reused for its transactions for
   * {@link UNITS_CACHE_MS}, rather than a simulation per transaction (the chain runs each one
   * as it would the transaction). The 10% margin covers what varies within a shape; a
   * transaction that ran out of units anyway makes its caller forget them (`forgetUnits`). A
   * simulation that fails is not reused.
   */
  async unitLimit(
    feePayer: PublicKey,
    instructions: TransactionInstruction[],
    blockhash: string,
    shape?: string,
  ): Promise<number> {
    const known = shape === undefined ? undefined : this.units.get(shape);
    let consumed = known && this.now() - known.at < UNITS_CACHE_MS ? known.consumed : null;
    if (consumed === null) {
      const probe = [...this.instructions(MAX_COMPUTE_UNITS, 1), ...instructions];
      const transaction = unsignedWire(legacyMessageBytes(feePayer, probe, blockhash)).toString(
        'base64',
      );
      consumed = await this.simulations.load(transaction).catch(() => null);
      if (consumed === null) {
        return Math.min(MAX_COMPUTE_UNITS, DEFAULT_UNITS_PER_INSTRUCTION * instructions.length);
      }
      if (shape !== undefined) {
        this.units.delete(shape);
        if (this.units.size >= MAX_CACHED_SHAPES) {
          this.units.delete(this.units.keys().next().value!);
        }
        this.units.set(shape, { consumed, at: this.now() });
      }
    }
    return Math.min(MAX_COMPUTE_UNITS, Math.max(MIN_COMPUTE_UNITS, Math.ceil(consumed * 1.1)));
  }

  /** Forgets what every shape consumed: the next transaction of each is simulated again. */
  forgetUnits(): void {
    this.units.clear();
  }

  /** The compute-budget instructions that go first: the limit, and the price when above 0. */
  instructions(units: number, microLamports: number): TransactionInstruction[] {
    const limit = ComputeBudgetProgram.setComputeUnitLimit({ units });
    if (!this.pricesEnabled || microLamports <= 0) return [limit];
    return [limit, ComputeBudgetProgram.setComputeUnitPrice({ microLamports })];
  }
}

/** Whether a transaction's error says it ran out of compute units (in a status or a log). */
export function computeExhausted(error: string): boolean {
  return /ComputationalBudgetExceeded|exceeded CUs meter/.test(error);
}

/**
 * The nearest-rank {@link PRIORITY_FEE_PERCENTILE}th percentile of a
 * `getRecentPrioritizationFees` answer; null when it is not one or reports no slot (nothing known).
 */
export function percentileFee(result: unknown): number | null {
  if (!Array.isArray(result)) return null;
  const fees = (result as { prioritizationFee?: unknown }[]).map(
    (entry) => entry.prioritizationFee,
  );
  if (fees.some((fee) => typeof fee !== 'number' || !Number.isSafeInteger(fee) || fee < 0)) {
    return null;
  }
  if (fees.length === 0) return null;
  const sorted = (fees as number[]).sort((a, b) => a - b);
  return sorted[Math.ceil((PRIORITY_FEE_PERCENTILE / 100) * sorted.length) - 1];
}

/** The units a `simulateTransaction` answer says were consumed; null when it failed. */
function unitsConsumed(result: unknown): number | null {
  const value = (result as { value?: { err?: unknown; unitsConsumed?: unknown } } | undefined)
    ?.value;
  if (!value || value.err !== null || typeof value.unitsConsumed !== 'number') return null;
  return value.unitsConsumed;
}

/**
 * What a signed transaction costs its fee payer when it lands, succeeded or failed: 5,000
 * lamports per signature plus its compute-unit price times its compute-unit limit (in
 * micro-lamports, rounded up to a lamport), read from its own compute-budget instructions.
 * Without a limit the runtime's default applies (200,000 units per other instruction).
 *
 * Read from the wire form as it is (legacy or versioned: signatures, header, static keys,
 * blockhash, instructions), without decoding it into web3.js's objects: every charge settled
 * reads it (a test holds it equal to what `VersionedTransaction.deserialize` gives).
 */
export function networkFee(transaction: string): bigint {
  const bytes = Buffer.from(transaction, 'base64');
  let at = 0;
  const take = (n: number) => {
    if (at + n > bytes.length) throw new RangeError('Not a transaction: too short');
    const start = at;
    at += n;
    return start;
  };
  const compactU16 = () => {
    let value = 0;
    for (let shift = 0; shift <= 14; shift += 7) {
      const byte = bytes[take(1)];
      value |= (byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value;
    }
    throw new RangeError('Not a transaction: a length too long');
  };
  take(64 * compactU16()); // the signatures
  if (bytes[at] & 0x80) take(1); // a versioned message's prefix
  const numRequiredSignatures = bytes[take(3)];
  const keyCount = compactU16();
  const keys = take(32 * keyCount);
  take(32); // the blockhash
  let price = 0n;
  let limit: bigint | undefined;
  let others = 0n;
  for (let n = compactU16(); n > 0; n--) {
    const program = bytes[take(1)];
    take(compactU16()); // its accounts
    const length = compactU16();
    const data = bytes.subarray(take(length), at);
    const budget =
      program < keyCount &&
      COMPUTE_BUDGET_PROGRAM.equals(bytes.subarray(keys + 32 * program, keys + 32 * program + 32));
    if (!budget) {
      others++;
      continue;
    }
    if (data[0] === 2 && data.length >= 5) limit = BigInt(data.readUInt32LE(1));
    if (data[0] === 3 && data.length >= 9) price = data.readBigUInt64LE(1);
  }
  let units = limit ?? BigInt(DEFAULT_UNITS_PER_INSTRUCTION) * others;
  if (units > BigInt(MAX_COMPUTE_UNITS)) units = BigInt(MAX_COMPUTE_UNITS);
  const priority = (price * units + 999_999n) / 1_000_000n;
  return LAMPORTS_PER_SIGNATURE * BigInt(numRequiredSignatures) + priority;
}

/** The compute-budget program's address, as bytes. */
const COMPUTE_BUDGET_PROGRAM = ComputeBudgetProgram.programId.toBuffer();
