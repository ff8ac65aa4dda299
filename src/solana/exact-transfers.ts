/**
 * The x402 `exact` scheme on Solana, as a facilitator checks and co-signs it (docs/x402.md;
 * x402's `specs/schemes/exact/scheme_exact_svm.md`). The client sends a transaction it built and
 * partially signed: a compute-unit limit, a compute-unit price, one `TransferChecked` of the
 * asset to `payTo`'s associated token account, and up to three Memo or Lighthouse instructions.
 * The service is its fee payer: it signs only bytes that cannot spend anything of its own.
 */
import { Commitment, Connection, PublicKey, VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { createPublicKey, verify as cryptoVerify } from 'node:crypto';
import type { SolanaCluster } from '../config/app-config';
import type { BlockhashCache } from './blockhash-cache';
import type { ExactPayments, ExactTerms, ExactVerdict } from './chain.port';
import { networkFee } from './compute-budget';
import { ataOf } from './mint-resolver';
import { MEMO_PROGRAM_ID, ServiceSigner } from './transactions';

const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
const LIGHTHOUSE_PROGRAM = 'L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95';
const SET_COMPUTE_UNIT_LIMIT = 2;
const SET_COMPUTE_UNIT_PRICE = 3;
const TRANSFER_CHECKED = 12;
/** The most compute units a payment may ask the fee payer to buy (a transfer uses ~6-30k). */
export const EXACT_MAX_COMPUTE_UNITS = 200_000;
/** A blockhash lives 150 blocks (and one). */
const BLOCKHASH_LIFETIME = 151;
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * Why a payment is not valid, in the x402 vocabulary (the reference facilitator's reasons, so a
 * resource server reads ours as it reads theirs).
 */
export const ExactReason = {
  undecodable: 'invalid_exact_svm_payload_transaction_could_not_be_decoded',
  lookupTables: 'invalid_exact_svm_payload_transaction_address_lookup_tables',
  feePayerMismatch: 'invalid_exact_svm_fee_payer_mismatch',
  excessiveSigners: 'invalid_exact_svm_payload_excessive_signers',
  signatureInvalid: 'invalid_exact_svm_payload_signature_invalid',
  instructionsLength: 'invalid_exact_svm_payload_transaction_instructions_length',
  computeLimit: 'invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction',
  computeLimitTooHigh:
    'invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction_too_high',
  computePrice: 'invalid_exact_svm_payload_transaction_instructions_compute_price_instruction',
  computePriceTooHigh:
    'invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high',
  noTransfer: 'invalid_exact_svm_payload_no_transfer_instruction',
  unknownInstruction: 'invalid_exact_svm_payload_unknown_optional_instruction',
  feePayerTransferring: 'invalid_exact_svm_payload_transaction_fee_payer_transferring_funds',
  mintMismatch: 'invalid_exact_svm_payload_mint_mismatch',
  recipientMismatch: 'invalid_exact_svm_payload_recipient_mismatch',
  amountMismatch: 'invalid_exact_svm_payload_amount_mismatch',
  memoCount: 'invalid_exact_svm_payload_memo_count',
  memoMismatch: 'invalid_exact_svm_payload_memo_mismatch',
  insufficientFunds: 'insufficient_funds',
  simulationFailed: 'invalid_exact_svm_transaction_simulation_failed',
} as const;
export type ExactReasonCode = (typeof ExactReason)[keyof typeof ExactReason];

interface Instruction {
  program: string;
  accounts: string[];
  data: Buffer;
}

/** A statically checked transaction, before the chain is asked. */
type Shape =
  | { ok: false; reason: ExactReasonCode; payer: string }
  | { ok: true; tx: VersionedTransaction; payer: string };

/**
 * Checks a client's payment strictly (every rule of the scheme document, and stricter where it
 * lets a facilitator be: no address lookup tables, exactly two signers), then simulates it with
 * the service key's signature: a payment is valid only when the chain would run it.
 */
export class ExactTransfers implements ExactPayments {
  readonly network: string;
  private readonly commitment: Commitment;

  constructor(
    private readonly connection: Connection,
    private readonly signer: ServiceSigner,
    options: { commitment: Commitment; cluster: SolanaCluster },
    private readonly blockhashes: BlockhashCache,
  ) {
    this.commitment = options.commitment;
    this.network = X402_NETWORKS[options.cluster];
  }

  get feePayer(): string {
    return this.signer.publicKey.toBase58();
  }

  unserved(scheme: string, network: string): string | null {
    if (scheme !== 'exact') return 'unsupported_scheme';
    return network === this.network ? null : 'invalid_network';
  }

  async check(terms: ExactTerms, simulate = true): Promise<ExactVerdict> {
    const shape = this.shape(terms);
    if (!shape.ok) return { valid: false, reason: shape.reason, payer: shape.payer };
    const { tx, payer } = shape;
    if (simulate) {
      // Without the service key's signature (the payer's was verified above): bytes it signed
      // leave the process only to be sent, by settle.
      const simulated = await this.connection.simulateTransaction(tx, {
        sigVerify: false,
        replaceRecentBlockhash: false,
        commitment: this.commitment,
      });
      const error = simulated.value.err;
      if (error) {
        return { valid: false, reason: simulationReason(error, simulated.value.logs), payer };
      }
    }
    // The transaction's blockhash is at most as new as the chain's newest: it cannot land past
    // the newest's last valid height, read from the cache (plus its lifetime again, in case the
    // client's blockhash is newer than the cache's): a bound, never an expiry declared early.
    const { lastValidBlockHeight } = await this.blockhashes.get();
    tx.signatures[0] = this.signer.signMessage(Buffer.from(tx.message.serialize()));
    const transaction = Buffer.from(tx.serialize()).toString('base64');
    return {
      valid: true,
      payer,
      signed: {
        signature: bs58.encode(tx.signatures[0]),
        transaction,
        lastValidBlockHeight: lastValidBlockHeight + BLOCKHASH_LIFETIME,
      },
      networkFee: networkFee(transaction),
    };
  }

  private shape(terms: ExactTerms): Shape {
    let tx: VersionedTransaction;
    try {
      tx = VersionedTransaction.deserialize(Buffer.from(terms.transaction, 'base64'));
    } catch {
      return { ok: false, reason: ExactReason.undecodable, payer: '' };
    }
    const message = tx.message;
    if (message.addressTableLookups.length > 0) {
      return { ok: false, reason: ExactReason.lookupTables, payer: '' };
    }
    const keys = message.staticAccountKeys.map((key) => key.toBase58());
    const indexes = message.compiledInstructions.flatMap((ix) => [
      ix.programIdIndex,
      ...ix.accountKeyIndexes,
    ]);
    if (indexes.some((index) => index >= keys.length)) {
      return { ok: false, reason: ExactReason.undecodable, payer: '' };
    }
    const instructions: Instruction[] = message.compiledInstructions.map((ix) => ({
      program: keys[ix.programIdIndex],
      accounts: ix.accountKeyIndexes.map((index) => keys[index]),
      data: Buffer.from(ix.data),
    }));
    const transfer = instructions[2];
    const payer = transfer && isTransferChecked(transfer) ? transfer.accounts[3] : '';
    const refuse = (reason: ExactReasonCode): Shape => ({ ok: false, reason, payer });
    if (keys[0] !== this.feePayer) return refuse(ExactReason.feePayerMismatch);
    if (message.header.numRequiredSignatures !== 2) return refuse(ExactReason.excessiveSigners);
    if (instructions.length < 3 || instructions.length > 6) {
      return refuse(ExactReason.instructionsLength);
    }
    const budget = computeBudgetReason(instructions, terms.maxComputeUnitPriceMicroLamports);
    if (budget) return refuse(budget);
    // The fee payer is named by no instruction: it signs for the fee, and for nothing else.
    if (instructions.some((ix) => ix.accounts.includes(this.feePayer))) {
      return refuse(ExactReason.feePayerTransferring);
    }
    if (!isTransferChecked(transfer)) return refuse(ExactReason.noTransfer);
    const optional = instructions.slice(3);
    // Instructions 4 and 5: Lighthouse (wallets' own guards) or Memo; 6: Memo only.
    const memo = MEMO_PROGRAM_ID.toBase58();
    const allowed = (ix: Instruction, i: number) =>
      ix.program === memo || (i < 2 && ix.program === LIGHTHOUSE_PROGRAM);
    if (!optional.every(allowed)) {
      return refuse(ExactReason.unknownInstruction);
    }
    const [source, mint, destination, authority] = transfer.accounts;
    if (transfer.program !== terms.mint.tokenProgram || mint !== terms.mint.address) {
      return refuse(ExactReason.mintMismatch);
    }
    if (destination !== ataOf(terms.mint, terms.payTo).toBase58()) {
      return refuse(ExactReason.recipientMismatch);
    }
    if (source === ataOf(terms.mint, this.feePayer).toBase58()) {
      return refuse(ExactReason.feePayerTransferring);
    }
    if (transfer.data.readBigUInt64LE(1) !== terms.amount)
      return refuse(ExactReason.amountMismatch);
    if (transfer.data[9] !== terms.mint.decimals) return refuse(ExactReason.mintMismatch);
    if (terms.memo) {
      const memos = optional.filter((ix) => ix.program === MEMO_PROGRAM_ID.toBase58());
      if (memos.length !== 1) return refuse(ExactReason.memoCount);
      if (memos[0].data.toString('utf8') !== terms.memo) return refuse(ExactReason.memoMismatch);
    }
    // The second signer is the transfer's authority, and its signature is over these bytes.
    if (keys[1] !== authority) return refuse(ExactReason.signatureInvalid);
    if (!verifies(authority, Buffer.from(message.serialize()), tx.signatures[1])) {
      return refuse(ExactReason.signatureInvalid);
    }
    return { ok: true, tx, payer: authority };
  }
}

function isTransferChecked(ix: Instruction | undefined): ix is Instruction {
  return (
    ix !== undefined &&
    ix.data.length === 10 &&
    ix.data[0] === TRANSFER_CHECKED &&
    // Source, mint, destination, authority: nothing more (an extra account would ride along
    // as, say, an invoice's reference).
    ix.accounts.length === 4 &&
    (ix.program === 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA' ||
      ix.program === 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb')
  );
}

/** Instructions 1 and 2: a compute-unit limit, then a bounded price. */
function computeBudgetReason(
  instructions: Instruction[],
  maxPrice: bigint,
): ExactReasonCode | null {
  const [limit, price] = instructions;
  if (
    limit.program !== COMPUTE_BUDGET_PROGRAM ||
    limit.data.length !== 5 ||
    limit.data[0] !== SET_COMPUTE_UNIT_LIMIT
  ) {
    return ExactReason.computeLimit;
  }
  if (limit.data.readUInt32LE(1) > EXACT_MAX_COMPUTE_UNITS) return ExactReason.computeLimitTooHigh;
  if (
    price.program !== COMPUTE_BUDGET_PROGRAM ||
    price.data.length !== 9 ||
    price.data[0] !== SET_COMPUTE_UNIT_PRICE
  ) {
    return ExactReason.computePrice;
  }
  if (price.data.readBigUInt64LE(1) > maxPrice) return ExactReason.computePriceTooHigh;
  return null;
}

function verifies(signer: string, message: Buffer, signature: Uint8Array | undefined): boolean {
  if (!signature || signature.every((byte) => byte === 0)) return false;
  const key = createPublicKey({
    key: Buffer.concat([ED25519_SPKI_PREFIX, new PublicKey(signer).toBuffer()]),
    format: 'der',
    type: 'spki',
  });
  return cryptoVerify(null, message, key, signature);
}

/** A token program's `InsufficientFunds` (custom error 1 of the transfer) reads as such. */
function simulationReason(error: unknown, logs: string[] | null): ExactReasonCode {
  const text = JSON.stringify(error);
  if (/"Custom":1\b/.test(text) || logs?.some((line) => /insufficient funds/i.test(line))) {
    return ExactReason.insufficientFunds;
  }
  return ExactReason.simulationFailed;
}

/**
 * The CAIP-2 network id x402 names each cluster by (genesis hash prefixes). The official x402
 * packages accept only mainnet's, devnet's and testnet's: localnet answers to devnet's (its
 * transactions carry localnet blockhashes, which no other cluster would take; docs/x402.md).
 */
export const X402_NETWORKS: Record<SolanaCluster, string> = {
  'mainnet-beta': 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
  devnet: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
  localnet: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
};
