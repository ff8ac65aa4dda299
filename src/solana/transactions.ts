import { Keypair, Message, PublicKey, TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import { createPrivateKey, KeyObject, sign as cryptoSign } from 'node:crypto';
import type { RecentBlockhash } from './blockhash-cache';
import type { SignedTx, UnsignedTx } from './chain.port';
import { TransactionTooLargeError } from './chain-errors';

/** DER (PKCS #8) wrapping of a 32-byte Ed25519 seed, as node:crypto takes a private key. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** A transaction's signature count when it is one (a compact-u16). */
const ONE_SIGNATURE = Buffer.from([1]);

/** SPL Memo v2: every account passed to it must sign. */
export const MEMO_PROGRAM_ID = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');

export function memo(text: string, signers: PublicKey[] = []): TransactionInstruction {
  return new TransactionInstruction({
    programId: MEMO_PROGRAM_ID,
    keys: signers.map((pubkey) => ({ pubkey, isSigner: true, isWritable: false })),
    data: Buffer.from(text, 'utf8'),
  });
}

/** Appends `reference` to an instruction as a read-only non-signer account (Solana Pay's way). */
export function withReference(
  instruction: TransactionInstruction,
  reference: string | undefined,
): TransactionInstruction {
  if (reference) {
    instruction.keys.push({ pubkey: new PublicKey(reference), isSigner: false, isWritable: false });
  }
  return instruction;
}

/**
 * The custom error code in a transaction error, in either form it arrives in: a status's JSON
 * (`{"InstructionError":[1,{"Custom":508}]}`) or a preflight message
 * (`… custom program error: 0x1fc`).
 */
export function customErrorCode(error: string): number | null {
  const json = /"Custom":\s*(\d+)/.exec(error);
  if (json) return Number(json[1]);
  const hex = /custom program error: 0x([0-9a-f]+)/i.exec(error);
  return hex ? parseInt(hex[1], 16) : null;
}

/** A legacy message compiled: its header, its accounts in order, its instructions by index. */
interface CompiledLegacy {
  header: {
    numRequiredSignatures: number;
    numReadonlySignedAccounts: number;
    numReadonlyUnsignedAccounts: number;
  };
  keys: PublicKey[];
  instructions: { programIdIndex: number; accounts: number[]; data: Buffer }[];
}

/**
 * The accounts in `Message.compile`'s order (fee payer, then each instruction's program and
 * accounts as first seen; grouped writable signers, read-only signers, writable, read-only), each
 * instruction's accounts as indexes. `Message.compile` keys its accounts by base58 and decodes
 * each address back to a public key, and `Transaction.serialize` sorts them with a
 * `localeCompare` per comparison: ~0.1 and ~0.3 ms of CPU per invoice (profiled). A handful of
 * accounts is compared here with `equals`.
 */
function compileLegacy(
  feePayer: PublicKey,
  instructions: TransactionInstruction[],
): CompiledLegacy {
  const metas: { pubkey: PublicKey; isSigner: boolean; isWritable: boolean }[] = [];
  const meta = (pubkey: PublicKey) => {
    let found = metas.find((m) => m.pubkey.equals(pubkey));
    if (!found) {
      found = { pubkey, isSigner: false, isWritable: false };
      metas.push(found);
    }
    return found;
  };
  Object.assign(meta(feePayer), { isSigner: true, isWritable: true });
  for (const ix of instructions) {
    meta(ix.programId);
    for (const key of ix.keys) {
      const m = meta(key.pubkey);
      m.isSigner ||= key.isSigner;
      m.isWritable ||= key.isWritable;
    }
  }
  const group = (signer: boolean, writable: boolean) =>
    metas.filter((m) => m.isSigner === signer && m.isWritable === writable);
  const readonlySigners = group(true, false);
  const readonlyNonSigners = group(false, false);
  const ordered = [
    ...group(true, true),
    ...readonlySigners,
    ...group(false, true),
    ...readonlyNonSigners,
  ];
  const index = (pubkey: PublicKey) => ordered.findIndex((m) => m.pubkey.equals(pubkey));
  return {
    header: {
      numRequiredSignatures: ordered.filter((m) => m.isSigner).length,
      numReadonlySignedAccounts: readonlySigners.length,
      numReadonlyUnsignedAccounts: readonlyNonSigners.length,
    },
    keys: ordered.map((m) => m.pubkey),
    instructions: instructions.map((ix) => ({
      programIdIndex: index(ix.programId),
      accounts: ix.keys.map((key) => index(key.pubkey)),
      data: ix.data,
    })),
  };
}

/**
 * The legacy message `Message.compile` makes, byte for byte (a test holds them equal), as
 * web3.js's `Message` (see `compileLegacy`). Where only its bytes are needed,
 * `legacyMessageBytes` writes them without it.
 */
export function compileLegacyMessage(
  feePayer: PublicKey,
  instructions: TransactionInstruction[],
  recentBlockhash: string,
): Message {
  const { header, keys, instructions: compiled } = compileLegacy(feePayer, instructions);
  return new Message({
    header,
    accountKeys: keys,
    recentBlockhash,
    instructions: compiled.map((ix) => ({ ...ix, data: bs58.encode(ix.data) })),
  });
}

/**
 * `compileLegacyMessage(…).serialize()`, byte for byte (a test holds them equal), written
 * directly: web3.js's `Message` holds each instruction's data in base58 and its `serialize`
 * decodes it again, through buffer-layout (~0.1 ms of CPU per charge signed, profiled).
 */
export function legacyMessageBytes(
  feePayer: PublicKey,
  instructions: TransactionInstruction[],
  recentBlockhash: string,
): Buffer {
  const { header, keys, instructions: compiled } = compileLegacy(feePayer, instructions);
  const parts: Buffer[] = [
    Buffer.from([
      header.numRequiredSignatures,
      header.numReadonlySignedAccounts,
      header.numReadonlyUnsignedAccounts,
    ]),
    compactU16(keys.length),
    ...keys.map((key) => key.toBuffer()),
    blockhashBytes(recentBlockhash),
    compactU16(compiled.length),
  ];
  for (const ix of compiled) {
    parts.push(
      Buffer.from([ix.programIdIndex]),
      compactU16(ix.accounts.length),
      Buffer.from(ix.accounts),
      compactU16(ix.data.length),
      ix.data,
    );
  }
  return Buffer.concat(parts);
}

/**
 * A transaction's wire form with its signature slots empty (zeroed), as
 * `new VersionedTransaction(message).serialize()` writes a legacy message.
 */
export function unsignedWire(message: Buffer): Buffer {
  const signatures = message[0];
  return Buffer.concat([compactU16(signatures), Buffer.alloc(64 * signatures), message]);
}

/** A length as Solana's compact-u16 ("shortvec"): 7 bits a byte, the high bit for more. */
function compactU16(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value;
  for (;;) {
    const byte = rest & 0x7f;
    rest >>= 7;
    if (rest === 0) {
      bytes.push(byte);
      return Buffer.from(bytes);
    }
    bytes.push(byte | 0x80);
  }
}

/** The last blockhash decoded: every transaction signed at a moment shares it. */
let lastBlockhash: { text: string; bytes: Buffer } | undefined;

function blockhashBytes(blockhash: string): Buffer {
  if (lastBlockhash?.text !== blockhash) {
    const bytes = Buffer.from(bs58.decode(blockhash));
    if (bytes.length !== 32) throw new RangeError('A blockhash is 32 bytes');
    lastBlockhash = { text: blockhash, bytes };
  }
  return lastBlockhash.bytes;
}

/**
 * Builds transactions for wallets to sign: a recent blockhash (from the cache: no round trip),
 * no signatures.
 */
/** What one transaction may weigh on the wire (a packet's data: 1,280 less headers). */
export const MAX_TRANSACTION_BYTES = 1232;

export class UnsignedTxBuilder {
  constructor(private readonly blockhashes: { get(): Promise<RecentBlockhash> }) {}

  /**
   * @throws ChainUnavailableError when no recent blockhash can be had; TransactionTooLargeError
   *   when the transaction would not fit in a packet (no wallet could send it).
   */
  async build(feePayer: PublicKey, instructions: TransactionInstruction[]): Promise<UnsignedTx> {
    const { blockhash, lastValidBlockHeight, slot } = await this.blockhashes.get();
    // A legacy message, written with zeroed signatures.
    const wire = unsignedWire(legacyMessageBytes(feePayer, instructions, blockhash));
    if (wire.length > MAX_TRANSACTION_BYTES) {
      throw new TransactionTooLargeError(
        `The transaction would be ${wire.length} bytes; a Solana transaction holds at most ` +
          `${MAX_TRANSACTION_BYTES}`,
      );
    }
    return {
      transaction: wire.toString('base64'),
      blockhash,
      lastValidBlockHeight,
      slot,
    };
  }
}

/**
 * The service key, kept here: the rest of the service sees its public key and asks for
 * signatures over transactions it built, never for the secret itself.
 */
export class ServiceSigner {
  readonly #key: KeyObject;
  readonly publicKey: PublicKey;

  constructor(keypair: Keypair) {
    // The same Ed25519 key as node:crypto's (OpenSSL's): a signature in ~0.04 ms instead of
    // web3.js's pure-JS ~0.5 ms, which every charge pays.
    this.#key = createPrivateKey({
      key: Buffer.concat([ED25519_PKCS8_PREFIX, keypair.secretKey.subarray(0, 32)]),
      format: 'der',
      type: 'pkcs8',
    });
    this.publicKey = keypair.publicKey;
  }

  /** Signs as the service key, fee payer and sole signer, over the given blockhash. */
  sign(
    instructions: TransactionInstruction[],
    latest: { blockhash: string; lastValidBlockHeight: number },
  ): SignedTx {
    // Compiled and written once (`legacyMessageBytes`: web3.js's bytes, without its per-call
    // sorting and its base58 round trips): the wire form is the signature count (one, as a
    // compact-u16), the signature and the very bytes signed, as `VersionedTransaction` writes it.
    const message = legacyMessageBytes(this.publicKey, instructions, latest.blockhash);
    if (message[0] !== 1) throw new Error('The service key signs only what it alone must sign');
    const signature = cryptoSign(null, message, this.#key);
    return {
      signature: bs58.encode(signature),
      transaction: Buffer.concat([ONE_SIGNATURE, signature, message]).toString('base64'),
      lastValidBlockHeight: latest.lastValidBlockHeight,
    };
  }

  /** The service key's signature of message bytes someone else built (an x402 payment it pays for). */
  signMessage(message: Uint8Array): Buffer {
    return cryptoSign(null, message, this.#key);
  }

  /** No secret in logs or `util.inspect` output. */
  toJSON(): { publicKey: string } {
    return { publicKey: this.publicKey.toBase58() };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `ServiceSigner(${this.publicKey.toBase58()})`;
  }
}
