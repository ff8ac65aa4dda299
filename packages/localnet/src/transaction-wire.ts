/**
 * The Solana wire format of transactions (legacy and v0), read in JS before anything reaches
 * LiteSVM: its native binding aborts the whole process on bytes it cannot deserialize, so nothing
 * malformed may get that far. Also the message-derived facts the chain records (fee, memos,
 * writability).
 */
import bs58 from 'bs58';

/** The most a transaction may take on the wire (`PACKET_DATA_SIZE`). */
export const MAX_TRANSACTION_BYTES = 1232;

/** Lamports per signature, as LiteSVM (and every cluster today) charges. */
export const LAMPORTS_PER_SIGNATURE = 5000n;

const SIGNATURE_BYTES = 64;
const KEY_BYTES = 32;

/** Input a validator would refuse before simulating it (JSON-RPC -32602). */
export class InvalidTransactionError extends Error {
  override readonly name = 'InvalidTransactionError';
}

export interface MessageHeader {
  numRequiredSignatures: number;
  numReadonlySignedAccounts: number;
  numReadonlyUnsignedAccounts: number;
}

export interface CompiledInstruction {
  programIdIndex: number;
  accounts: number[];
  data: Buffer;
}

/** A v0 message's reference to accounts of an address lookup table, by index in the table. */
export interface AddressTableLookup {
  accountKey: Buffer;
  writableIndexes: number[];
  readonlyIndexes: number[];
}

export interface Message {
  version: 'legacy' | 0;
  header: MessageHeader;
  /** The static keys: 32-byte views into the transaction's bytes. */
  accountKeys: Buffer[];
  recentBlockhash: Buffer;
  instructions: CompiledInstruction[];
  /** Empty for legacy messages. */
  addressTableLookups: AddressTableLookup[];
}

export interface WireTransaction {
  signatures: Buffer[];
  message: Message;
}

/** A bounds-checked cursor over a byte buffer. */
class Reader {
  private offset = 0;

  constructor(private readonly bytes: Buffer) {}

  get remaining(): number {
    return this.bytes.length - this.offset;
  }

  u8(): number {
    this.need(1);
    return this.bytes[this.offset++];
  }

  peek(): number {
    this.need(1);
    return this.bytes[this.offset];
  }

  /** Solana's "compact-u16" (shortvec) length prefix: 1 to 3 bytes, 7 bits each. */
  shortVec(): number {
    let value = 0;
    for (let i = 0; i < 3; i++) {
      const byte = this.u8();
      value |= (byte & 0x7f) << (7 * i);
      if ((byte & 0x80) === 0) {
        if (i > 0 && byte === 0) throw new InvalidTransactionError('non-canonical length');
        if (value > 0xffff) throw new InvalidTransactionError('length overflows u16');
        return value;
      }
    }
    throw new InvalidTransactionError('length overflows u16');
  }

  take(length: number): Buffer {
    this.need(length);
    const slice = this.bytes.subarray(this.offset, this.offset + length);
    this.offset += length;
    return slice;
  }

  private need(length: number): void {
    if (this.offset + length > this.bytes.length) {
      throw new InvalidTransactionError('unexpected end of input');
    }
  }
}

/** The most accounts a message may name (indexes are one byte). */
const MAX_ACCOUNT_KEYS = 256;

function readMessage(reader: Reader): Message {
  let version: Message['version'] = 'legacy';
  // A versioned message starts with its version, high bit set; a legacy one with its header.
  if (reader.peek() & 0x80) {
    const number = reader.u8() & 0x7f;
    if (number !== 0) {
      throw new InvalidTransactionError(`Transaction version (${number}) is not supported`);
    }
    version = 0;
  }
  const header = {
    numRequiredSignatures: reader.u8(),
    numReadonlySignedAccounts: reader.u8(),
    numReadonlyUnsignedAccounts: reader.u8(),
  };
  const keyCount = reader.shortVec();
  const accountKeys: Buffer[] = [];
  for (let i = 0; i < keyCount; i++) accountKeys.push(reader.take(KEY_BYTES));
  const recentBlockhash = reader.take(KEY_BYTES);
  const instructionCount = reader.shortVec();
  const instructions: CompiledInstruction[] = [];
  for (let i = 0; i < instructionCount; i++) {
    const programIdIndex = reader.u8();
    const accounts = [...reader.take(reader.shortVec())];
    const data = reader.take(reader.shortVec());
    instructions.push({ programIdIndex, accounts, data });
  }
  const addressTableLookups: AddressTableLookup[] = [];
  if (version === 0) {
    const lookupCount = reader.shortVec();
    for (let i = 0; i < lookupCount; i++) {
      const accountKey = reader.take(KEY_BYTES);
      const writableIndexes = [...reader.take(reader.shortVec())];
      const readonlyIndexes = [...reader.take(reader.shortVec())];
      addressTableLookups.push({ accountKey, writableIndexes, readonlyIndexes });
    }
  }
  return { version, header, accountKeys, recentBlockhash, instructions, addressTableLookups };
}

/** How many accounts a v0 message loads from lookup tables (0 for legacy). */
export function loadedKeyCount(message: Message): number {
  return message.addressTableLookups.reduce(
    (sum, lookup) => sum + lookup.writableIndexes.length + lookup.readonlyIndexes.length,
    0,
  );
}

/** The sanitize rules of a message (`legacy::Message::sanitize`, `v0::Message::sanitize`). */
function sanitizeMessage(message: Message): void {
  const { header, accountKeys, instructions } = message;
  const staticKeys = accountKeys.length;
  const keys = staticKeys + loadedKeyCount(message);
  const ok =
    header.numRequiredSignatures + header.numReadonlyUnsignedAccounts <= staticKeys &&
    // At least one writable signer: the fee payer.
    header.numReadonlySignedAccounts < header.numRequiredSignatures &&
    keys <= MAX_ACCOUNT_KEYS &&
    // A lookup that loads nothing is refused.
    message.addressTableLookups.every(
      (lookup) => lookup.writableIndexes.length + lookup.readonlyIndexes.length > 0,
    ) &&
    instructions.every(
      (ix) =>
        ix.programIdIndex < staticKeys && // programs are never loaded from a table
        ix.programIdIndex !== 0 && // the fee payer cannot be a program
        ix.accounts.every((index) => index < keys),
    );
  if (!ok) {
    throw new InvalidTransactionError('Transaction failed to sanitize accounts offsets correctly');
  }
}

/**
 * Reads and sanitizes a serialized transaction (legacy or v0): exactly one signature per required
 * signer, no trailing bytes. Views into `bytes` are kept, not copied.
 */
export function parseTransaction(bytes: Buffer): WireTransaction {
  if (bytes.length > MAX_TRANSACTION_BYTES) {
    throw new InvalidTransactionError(
      `transaction too large: ${bytes.length} bytes (max: ${MAX_TRANSACTION_BYTES} bytes)`,
    );
  }
  const reader = new Reader(bytes);
  const signatureCount = reader.shortVec();
  const signatures: Buffer[] = [];
  for (let i = 0; i < signatureCount; i++) signatures.push(reader.take(SIGNATURE_BYTES));
  const message = readMessage(reader);
  if (reader.remaining !== 0) throw new InvalidTransactionError('trailing bytes after message');
  sanitizeMessage(message);
  if (signatures.length !== message.header.numRequiredSignatures) {
    throw new InvalidTransactionError('Transaction failed to sanitize accounts offsets correctly');
  }
  return { signatures, message };
}

/** Reads and sanitizes a serialized message (as `getFeeForMessage` receives it). */
export function parseMessage(bytes: Buffer): Message {
  const reader = new Reader(bytes);
  const message = readMessage(reader);
  if (reader.remaining !== 0) throw new InvalidTransactionError('trailing bytes after message');
  sanitizeMessage(message);
  return message;
}

/** Whether the header marks static account `index` writable (before the runtime's demotions). */
export function isWritable(header: MessageHeader, keyCount: number, index: number): boolean {
  if (index < header.numRequiredSignatures) {
    return index < header.numRequiredSignatures - header.numReadonlySignedAccounts;
  }
  return index < keyCount - header.numReadonlyUnsignedAccounts;
}

/**
 * Whether account `index` of the message's full list (static keys, then the writable and then
 * the read-only keys loaded from tables, as the runtime orders them) is writable.
 */
export function isWritableIndex(message: Message, index: number): boolean {
  const staticKeys = message.accountKeys.length;
  if (index < staticKeys) return isWritable(message.header, staticKeys, index);
  const loadedWritable = message.addressTableLookups.reduce(
    (sum, lookup) => sum + lookup.writableIndexes.length,
    0,
  );
  return index < staticKeys + loadedWritable;
}

const COMPUTE_BUDGET_PROGRAM = Buffer.from(
  bs58.decode('ComputeBudget111111111111111111111111111111'),
);
/** Memo v3 and v1. */
const MEMO_PROGRAMS = [
  Buffer.from(bs58.decode('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr')),
  Buffer.from(bs58.decode('Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo')),
];

/** Compute units a transaction may use when it does not say (per instruction, and at most). */
const DEFAULT_UNITS_PER_INSTRUCTION = 200_000n;
const MAX_COMPUTE_UNITS = 1_400_000n;

/** The compute-budget instructions of a message: unit price (micro-lamports) and unit limit. */
function computeBudget(message: Message): {
  price: bigint;
  limit: bigint | undefined;
  otherInstructions: bigint;
} {
  let price = 0n;
  let limit: bigint | undefined;
  let otherInstructions = 0n;
  for (const ix of message.instructions) {
    if (!message.accountKeys[ix.programIdIndex].equals(COMPUTE_BUDGET_PROGRAM)) {
      otherInstructions++;
      continue;
    }
    if (ix.data[0] === 2 && ix.data.length >= 5) limit = BigInt(ix.data.readUInt32LE(1));
    if (ix.data[0] === 3 && ix.data.length >= 9) price = ix.data.readBigUInt64LE(1);
  }
  return { price, limit, otherInstructions };
}

/** The compute-unit price a message bids, in micro-lamports (0 when it sets none). */
export function computeUnitPrice(message: Message): bigint {
  return computeBudget(message).price;
}

/**
 * The fee LiteSVM charges: 5000 lamports per signature plus the priority fee
 * (compute-unit price x limit). When a price is set without a limit, the limit is approximated
 * as 200k units per non-compute-budget instruction (the runtime counts builtins lower).
 */
export function transactionFee(message: Message): bigint {
  const { price, limit, otherInstructions } = computeBudget(message);
  const units = limit ?? DEFAULT_UNITS_PER_INSTRUCTION * otherInstructions;
  const capped = units > MAX_COMPUTE_UNITS ? MAX_COMPUTE_UNITS : units;
  const priority = (price * capped + 999_999n) / 1_000_000n;
  return LAMPORTS_PER_SIGNATURE * BigInt(message.header.numRequiredSignatures) + priority;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The `memo` field of `getSignaturesForAddress`, formatted as the real RPC does: each memo
 * instruction's text as `[byte length] text`, joined with "; "; null without memos.
 */
export function memoField(message: Message): string | null {
  const memos: string[] = [];
  for (const ix of message.instructions) {
    const program = message.accountKeys[ix.programIdIndex];
    if (!MEMO_PROGRAMS.some((memo) => memo.equals(program)) || ix.data.length === 0) continue;
    let memo: string;
    try {
      memo = UTF8.decode(ix.data);
    } catch {
      memo = '(unparseable)';
    }
    memos.push(`[${Buffer.byteLength(memo)}] ${memo}`);
  }
  return memos.length > 0 ? memos.join('; ') : null;
}
