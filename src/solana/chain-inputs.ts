import type { SubscriptionScheme } from '../config/app-config';
import type { MintSymbol } from './mints';

/*
 * What the chain port's builders and its charge take (chain.port.ts re-exports them all).
 */

export interface InvoiceRegistrationInput {
  merchantWallet: string;
  /** The invoice's mint: the registration also creates the merchant's receiving account of it. */
  mint: MintSymbol;
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

/** A merchant's refund: a transfer from its receiving account back to a payer's token account. */
export interface RefundInput {
  merchantWallet: string;
  /** The wallet the money goes back to: its associated token account of the mint receives. */
  recipient: string;
  mint: MintSymbol;
  /** What leaves the merchant's account (a mint's transfer fee is withheld from it). */
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
  /** The scheme to authorise under; absent: the scheme of new subscriptions (`ChainPort.scheme`). */
  scheme?: SubscriptionScheme;
  subscriber: string;
  merchantWallet: string;
  planId: string;
  mint: MintSymbol;
  amount: bigint;
  periodHours: number;
  /** Attached as a read-only account so the subscribe transaction can be found. */
  reference?: string;
  /**
   * Token-delegate scheme: what the service still needs from this token account for the
   * subscriber's OTHER live subscriptions in this mint. A token account has one delegate, so the
   * approval written here replaces the previous one and must cover them too. Default 0.
   */
  otherSubscriptionsAllowance?: bigint;
  /**
   * Program scheme, a move's subscriptions: one already running on-chain, bound to the wallet's
   * authority as it is (a move that landed earlier), is kept rather than refused.
   */
  keepRunning?: boolean;
}

/**
 * A wallet's move of its live token-delegate subscriptions in one mint to the Subscriptions
 * program (docs/solana.md, "Moving subscribers between schemes"). They move together: they
 * share the one approval on the wallet's token account, and the program's authority replaces
 * it as the account's one delegate.
 */
export interface MoveInput {
  subscriber: string;
  mint: MintSymbol;
  /**
   * The plans of those subscriptions, each registered on-chain under the program, and a new
   * one's, with its `reference`, when a checkout's subscribe carries them along. A carried one
   * (no `reference`) already running on-chain, bound to the wallet's authority as it is, is kept
   * rather than subscribed again (`SubscribeInput.keepRunning`).
   */
  plans: {
    merchantWallet: string;
    planId: string;
    amount: bigint;
    periodHours: number;
    reference?: string;
  }[];
  /**
   * What they still need of the approval: approved to the service key again in the move's first
   * step (the program's authority, which that step creates, takes the delegate), so they keep
   * being charged under it until the second step lands.
   */
  keepApproved: bigint;
}

/** The most subscriptions one move's transaction carries (its subscribes fit in one). */
export const MAX_MOVE_PLANS = 4;

/** The customer's withdrawal of one subscription's on-chain authorisation (signed by them). */
export interface RevokeInput {
  /**
   * The scheme the subscription was authorised under (`subscriptions.scheme`); absent: the
   * scheme of new subscriptions (`ChainPort.scheme`).
   */
  scheme?: SubscriptionScheme;
  subscriber: string;
  merchantWallet: string;
  planId: string;
  mint: MintSymbol;
  /**
   * Token-delegate scheme: what the service still needs for the subscriber's other live
   * subscriptions in this mint; the approval is reset to it (revoked when 0). Default 0.
   */
  remainingAllowance?: bigint;
}

export interface ChargeInput {
  /**
   * The charge attempt's id (one per subscription and period), written into the transaction's
   * memo. Two charges are then never the same bytes: otherwise two equal pulls within one
   * blockhash would be one transaction, and the chain would take only the first.
   */
  chargeId: string;
  /**
   * The scheme the subscription was authorised under (`subscriptions.scheme`); absent: the
   * scheme of new subscriptions (`ChainPort.scheme`).
   */
  scheme?: SubscriptionScheme;
  subscriber: string;
  merchantWallet: string;
  planId: string;
  mint: MintSymbol;
  amount: bigint;
  /**
   * Token-delegate scheme: what the subscriber's earlier live subscriptions in this mint still
   * need of the shared approval. They are covered first: an approval too small for all of them
   * ends exactly the newest ones it can no longer cover. Default 0. A function is called after
   * the token account was read, so charges landing meanwhile can only make it smaller. A
   * `ReservationBound` is an upper bound of it, with the exact sum read only when needed.
   */
  reservedForEarlier?: bigint | (() => Promise<bigint>) | ReservationBound;
}

/**
 * An upper bound of what the earlier subscriptions still need (what all the wallet's other live
 * ones need, kept with the wallet's approval), and how to read the exact sum. An approval that
 * covers the charge and the bound covers it with the exact sum too; only one that falls short
 * of the bound reads the exact sum (`reservedOf`) before judging.
 */
export interface ReservationBound {
  atMost: bigint;
  exactly: () => Promise<bigint>;
}
