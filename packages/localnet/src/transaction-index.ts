import type { TransactionErrorJson } from './transaction-errors';
import { parseTransaction } from './transaction-wire';

/**
 * A token balance in a transaction's metadata. The RPC shape nests `uiTokenAmount`; it is built
 * when asked for, which keeps the index (and its log file) about half as large.
 */
export interface TokenBalance {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  /** Base units, decimal string. */
  amount: string;
  decimals: number;
}

/** An instruction a program invoked (a CPI), as `getTransaction` writes it in `json`. */
export interface CompiledInnerInstruction {
  /** Indexes into the transaction's keys (static, then loaded). */
  programIdIndex: number;
  accounts: number[];
  /** Base58. */
  data: string;
  /** 2 for an instruction a top-level one invoked, 3 for one that invoked, and so on. */
  stackHeight: number;
}

/** The instructions invoked under one top-level instruction (`index`), in order. */
export interface InnerInstructionSet {
  index: number;
  instructions: CompiledInnerInstruction[];
}

/** What the chain keeps of a transaction it processed: the data of `getTransaction`. */
export interface TransactionRecord {
  signature: string;
  /** Position in the index, which orders `getSignaturesForAddress`. */
  seq: number;
  slot: number;
  blockTime: number;
  err: TransactionErrorJson | null;
  fee: number;
  preBalances: number[];
  postBalances: number[];
  preTokenBalances: TokenBalance[];
  postTokenBalances: TokenBalance[];
  logMessages: string[];
  /** What the programs invoked, per top-level instruction that invoked anything. */
  innerInstructions: InnerInstructionSet[];
  unitsConsumed: number;
  /** The wire bytes, as sent. */
  raw: Buffer;
  /** Base58: the message's static keys, then those it loaded from lookup tables. */
  accountKeys: string[];
  /** What a v0 message loaded from its address lookup tables; null when it used none. */
  loadedAddresses: LoadedAddresses | null;
}

export interface LoadedAddresses {
  writable: string[];
  readonly: string[];
}

/**
 * A record as one line of the persisted log: the same, the bytes in base64, no derived fields;
 * `loadedAddresses` and `innerInstructions` only when there are some (logs written before inner
 * instructions were recorded have none).
 */
export interface StoredTransaction extends Omit<
  TransactionRecord,
  'seq' | 'raw' | 'accountKeys' | 'loadedAddresses' | 'innerInstructions'
> {
  transaction: string;
  loadedAddresses?: LoadedAddresses;
  innerInstructions?: InnerInstructionSet[];
}

export interface SignaturePage {
  /** Only older than this signature's transaction. */
  before?: string;
  /** Only newer than this signature's transaction. */
  until?: string;
  limit?: number;
}

/**
 * Every transaction the chain recorded, by signature and by each address it names (LiteSVM keeps
 * neither). Append-only; positions (`seq`) give the order.
 */
export class TransactionIndex {
  private readonly records: TransactionRecord[] = [];
  private readonly bySignature = new Map<string, TransactionRecord>();
  /** Address -> `seq` of the transactions that name it, ascending. */
  private readonly byAddress = new Map<string, number[]>();

  get count(): number {
    return this.records.length;
  }

  has(signature: string): boolean {
    return this.bySignature.has(signature);
  }

  get(signature: string): TransactionRecord | undefined {
    return this.bySignature.get(signature);
  }

  add(entry: Omit<TransactionRecord, 'seq'>): TransactionRecord {
    // Spelled out rather than spread: every record then shares one V8 hidden class (a spread
    // here gave each its own, some 2 KB apiece).
    const record: TransactionRecord = {
      signature: entry.signature,
      seq: this.records.length,
      slot: entry.slot,
      blockTime: entry.blockTime,
      err: entry.err,
      fee: entry.fee,
      preBalances: entry.preBalances,
      postBalances: entry.postBalances,
      preTokenBalances: entry.preTokenBalances,
      postTokenBalances: entry.postTokenBalances,
      logMessages: entry.logMessages,
      innerInstructions: entry.innerInstructions,
      unitsConsumed: entry.unitsConsumed,
      raw: entry.raw,
      accountKeys: entry.accountKeys,
      loadedAddresses: entry.loadedAddresses,
    };
    this.records.push(record);
    this.bySignature.set(record.signature, record);
    for (const key of record.accountKeys) {
      const seqs = this.byAddress.get(key);
      if (seqs) seqs.push(record.seq);
      else this.byAddress.set(key, [record.seq]);
    }
    return record;
  }

  /**
   * The transactions processed in `slot`, in order. Records are appended as slots advance, so
   * their slots ascend: a binary search finds them.
   */
  inSlot(slot: number): TransactionRecord[] {
    const found: TransactionRecord[] = [];
    for (let i = this.firstAtOrAfter(slot); i < this.records.length; i++) {
      if (this.records[i].slot !== slot) break;
      found.push(this.records[i]);
    }
    return found;
  }

  /** The last transaction of a slot before `slot`, if any. */
  lastBefore(slot: number): TransactionRecord | undefined {
    return this.records[this.firstAtOrAfter(slot) - 1];
  }

  /** The first transaction of a slot after `slot`, if any. */
  firstAfter(slot: number): TransactionRecord | undefined {
    return this.records[this.firstAtOrAfter(slot + 1)];
  }

  /** The position of the first record whose slot is >= `slot`. */
  private firstAtOrAfter(slot: number): number {
    let low = 0;
    let high = this.records.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.records[mid].slot < slot) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /**
   * The transactions naming `address`, newest first, paged as `getSignaturesForAddress` pages:
   * an unknown `before` gives nothing, an unknown `until` is ignored (both as the RPC does).
   */
  forAddress(address: string, page: SignaturePage = {}): TransactionRecord[] {
    const seqs = this.byAddress.get(address) ?? [];
    let end = seqs.length; // exclusive
    if (page.before !== undefined) {
      const before = this.bySignature.get(page.before);
      if (!before) return [];
      end = lowerBound(seqs, before.seq);
    }
    const until = page.until !== undefined ? this.bySignature.get(page.until) : undefined;
    const limit = page.limit ?? 1000;
    const found: TransactionRecord[] = [];
    for (let i = end - 1; i >= 0 && found.length < limit; i--) {
      if (until && seqs[i] <= until.seq) break;
      found.push(this.records[seqs[i]]);
    }
    return found;
  }
}

export function toStored(record: TransactionRecord): StoredTransaction {
  const {
    seq: _seq,
    raw,
    accountKeys: _keys,
    loadedAddresses,
    innerInstructions,
    ...rest
  } = record;
  return {
    ...rest,
    transaction: raw.toString('base64'),
    ...(loadedAddresses ? { loadedAddresses } : {}),
    ...(innerInstructions.length > 0 ? { innerInstructions } : {}),
  };
}

/**
 * A stored record back in memory (its static keys re-read from the bytes, with `address` as
 * encoder, then the keys it loaded).
 */
export function fromStored(
  stored: StoredTransaction,
  address: (key: Buffer) => string,
): Omit<TransactionRecord, 'seq'> {
  const { transaction, loadedAddresses, innerInstructions, ...rest } = stored;
  const raw = Buffer.from(transaction, 'base64');
  const { message } = parseTransaction(raw);
  const loaded = loadedAddresses ? [...loadedAddresses.writable, ...loadedAddresses.readonly] : [];
  return {
    ...rest,
    raw,
    accountKeys: [...message.accountKeys.map(address), ...loaded],
    loadedAddresses: loadedAddresses ?? null,
    innerInstructions: innerInstructions ?? [],
  };
}

/** The first index of ascending `values` whose value is >= `target`. */
function lowerBound(values: number[], target: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (values[mid] < target) low = mid + 1;
    else high = mid;
  }
  return low;
}
