import type { Keypair } from '@solana/web3.js';
import type { SolanaCluster, SubscriptionScheme } from '../config/app-config';
import type { MintSymbol } from './mints';

/** A transaction for someone else to sign: base64 wire bytes with no signatures yet. */
export interface UnsignedTx {
  /** Base64 of the serialized transaction (signatures zeroed). */
  transaction: string;
  blockhash: string;
  /** The block height after which the transaction can no longer land. */
  lastValidBlockHeight: number;
}

/** A mint as the service uses it: its token program is read from the chain (the mint's owner). */
export interface ResolvedMint {
  symbol: MintSymbol;
  address: string;
  tokenProgram: string;
  decimals: number;
}

export interface InvoiceRegistrationInput {
  merchantWallet: string;
  /** The invoice's reference key (its `onchainId`), attached so the registration is searchable. */
  reference: string;
  /** SHA-256 commitment to the invoice's terms (32 bytes). */
  commitment: Uint8Array;
}

export interface InvoicePaymentInput {
  payer: string;
  merchantWallet: string;
  mint: MintSymbol;
  amount: bigint;
  reference: string;
  memo?: string;
}

export interface PlanRegistrationInput {
  merchantWallet: string;
  planId: string;
  mint: MintSymbol;
  amount: bigint;
  periodHours: number;
}

export interface SubscribeInput {
  subscriber: string;
  merchantWallet: string;
  planId: string;
  mint: MintSymbol;
  amount: bigint;
  periodHours: number;
  /** Attached as a read-only account so the subscribe transaction can be found. */
  reference?: string;
}

export interface ChargeInput {
  /**
   * The charge attempt's id (one per subscription and period), written into the transaction's
   * memo. Two charges are then never the same bytes: otherwise two equal pulls within one
   * blockhash would be one transaction, and the chain would take only the first.
   */
  chargeId: string;
  subscriber: string;
  merchantWallet: string;
  planId: string;
  mint: MintSymbol;
  amount: bigint;
}

/**
 * Why a charge did not happen. `insufficient_funds` and `authorization_gone` are the customer's
 * side and final for this attempt; `transient` (RPC down, blockhash expired) may be retried.
 */
export type ChargeFailure = 'insufficient_funds' | 'authorization_gone' | 'transient';

export class ChargeFailedError extends Error {
  constructor(
    readonly reason: ChargeFailure,
    message: string,
    /** Set when a transaction was sent and failed on-chain. */
    readonly signature?: string,
  ) {
    super(message);
    this.name = 'ChargeFailedError';
  }
}

/** A signed transaction not yet sent: its signature is known, so its fate can always be looked up. */
export interface SignedTx {
  signature: string;
  /** Base64 wire bytes. */
  transaction: string;
  lastValidBlockHeight: number;
}

/** What became of a sent transaction. */
export type TxOutcome =
  | { state: 'succeeded'; slot: number; finalized: boolean }
  | { state: 'failed'; slot: number; error: string }
  /** Refused at preflight (simulation failed): never forwarded, so it cannot land. */
  | { state: 'rejected'; error: string }
  /** Not seen yet, and its blockhash can still land it. */
  | { state: 'pending' }
  /** Not seen and its blockhash has expired: it never landed and never will. */
  | { state: 'expired' }
  /** No answer before the deadline (the RPC is down): settle it later with `outcome`. */
  | { state: 'unknown' };

/** A payment found by its reference key, checked against what was asked for. */
export interface FoundPayment {
  signature: string;
  slot: number;
  blockTime: number | null;
  payer: string | null;
  /** Base units received by the merchant's token account in that transaction. */
  amount: bigint;
  finalized: boolean;
}

export interface PaymentExpectation {
  reference: string;
  merchantWallet: string;
  mint: MintSymbol;
  amount: bigint;
}

export type PaymentCheck =
  | { valid: true; payment: FoundPayment; overpaid: bigint }
  | { valid: false; signature: string; reason: string };

/** The on-chain authorisation a subscriber gave the service (token-delegate scheme). */
export interface AuthorizationState {
  tokenAccount: string;
  exists: boolean;
  balance: bigint;
  /** Whether the service key is the token account's delegate. */
  delegatedToService: boolean;
  delegatedAmount: bigint;
}

/** A subscription's state as the Subscriptions program holds it (program scheme). */
export interface ProgramSubscriptionState {
  /** The subscription delegation PDA. */
  address: string;
  terms: { amount: bigint; periodHours: bigint; createdAt: bigint };
  amountPulledInPeriod: bigint;
  currentPeriodStartTs: bigint;
  /** 0 while the subscription runs; set when the subscriber cancels (end of the paid period). */
  expiresAtTs: bigint;
}

/**
 * Everything the service does on-chain, behind one port (DESIGN section 6). One adapter works
 * against any JSON-RPC endpoint: the embedded localnet, devnet or mainnet-beta.
 */
export abstract class ChainPort {
  abstract readonly cluster: SolanaCluster;
  abstract readonly scheme: SubscriptionScheme;
  abstract readonly serviceKey: Keypair;

  abstract mint(symbol: MintSymbol): Promise<ResolvedMint>;

  abstract buildInvoiceRegistration(input: InvoiceRegistrationInput): Promise<UnsignedTx>;
  abstract buildInvoicePayment(input: InvoicePaymentInput): Promise<UnsignedTx>;
  abstract buildPlanRegistration(input: PlanRegistrationInput): Promise<UnsignedTx>;
  abstract buildSubscribe(input: SubscribeInput): Promise<UnsignedTx>;

  /** Builds and signs a charge (a pull by the service key). Classifies doomed charges first. */
  abstract signCharge(input: ChargeInput): Promise<SignedTx>;
  /**
   * Sends signed bytes once and waits for the outcome until the blockhash expires (or, with the
   * RPC unreachable, a deadline: `unknown`).
   */
  abstract sendAndConfirm(tx: SignedTx): Promise<TxOutcome>;
  /** The fate of a transaction from its signature alone: never sends anything. */
  abstract outcome(signature: string, lastValidBlockHeight: number): Promise<TxOutcome>;
  /** Classifies a failed or doomed charge by reading the subscriber's token account. */
  abstract classifyChargeFailure(input: ChargeInput, error: string): Promise<ChargeFailure>;

  abstract findPayment(expectation: PaymentExpectation): Promise<PaymentCheck | null>;
  abstract readAuthorization(subscriber: string, mint: MintSymbol): Promise<AuthorizationState>;
  /** Program scheme: the subscription account of a plan and subscriber, or null when absent. */
  abstract readProgramSubscription(
    merchantWallet: string,
    planId: string,
    subscriber: string,
  ): Promise<ProgramSubscriptionState | null>;
}
