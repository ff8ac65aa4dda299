/**
 * What the payment scanner reads from the chain (`ChainPort.scanTokenAccount`, `scanReference`,
 * `receiptsInto`): receipts into a token account, the transfers that brought them, and the
 * signature pages a scan walks. Billing decides what any of it pays.
 */

/** One transfer instruction into a token account, in a successful transaction. */
export interface ScannedTransfer {
  /** Its index among the transaction's top-level instructions. */
  instruction: number;
  /** What the instruction sent. */
  gross: bigint;
  /** What the chain withheld of it (a Token-2022 transfer fee; 0 without one). */
  fee: bigint;
  /** What arrived in the account: `gross - fee`. */
  amount: bigint;
  /** Read-only non-signer accounts after the transfer's own accounts (Solana Pay references). */
  references: string[];
  /** Who signed it: the source's owner, or a delegate of it. */
  authority: string;
}

/**
 * A pull into a token account by the Subscriptions program, as the program's own
 * `SubscriptionTransferEvent` reports it (an event the program emitted by its self-CPI: see
 * `subscriptions-program-events.ts`), with what arrived of it.
 */
export interface ScannedPull {
  /** The index of the top-level instruction under which the program emitted the event. */
  instruction: number;
  /** The subscription (its PDA) pulled from. */
  subscription: string;
  plan: string;
  /** The subscriber's wallet. */
  delegator: string;
  /** Who signed the pull: one of the plan's pullers, or its owner. */
  puller: string;
  /** What the program transferred. */
  gross: bigint;
  /** What the chain withheld of it (the mint's transfer fee; 0 without one). */
  fee: bigint;
  /** What arrived in the account: `gross - fee`. */
  amount: bigint;
  /** The billing period the pull counts against, unix seconds. */
  periodStartTs: bigint;
  periodEndTs: bigint;
  /** What the subscription has pulled in that period, this pull included. */
  amountPulledInPeriod: bigint;
}

/**
 * Tokens that arrived in one token account in one successful transaction: what each transfer
 * instruction into it brought, and what arrived that none of them explains. What any of it pays
 * (an invoice, nothing known, a subscription charge) is the billing domain's decision.
 */
export interface ScannedReceipt {
  signature: string;
  slot: number;
  blockTime: number | null;
  /** Whether the block was finalized when scanned (else confirmed): settle later by signature. */
  finalized: boolean;
  /** The token account that received. */
  destination: string;
  /** Its owner (the merchant's wallet for an associated token account). */
  destinationOwner: string | null;
  /** The mint's address. */
  mint: string;
  /** What the account's balance rose by (every transfer's net, and anything else). */
  received: bigint;
  /**
   * The top-level transfer instructions into it, each with what arrived of it, in order. Empty
   * when they claim more than arrived (money left the account in the same transaction, or a fee
   * other than the mint's): then nothing is credited to an instruction.
   */
  transfers: ScannedTransfer[];
  /**
   * The Subscriptions program's pulls into it, from its transfer events, each with what arrived
   * of it: credited only when what the transfer instructions and the pulls brought does not
   * exceed what arrived (else empty, and what they claim stays `unexplained`).
   */
  pulls: ScannedPull[];
  /**
   * What arrived that neither a transfer instruction nor a program's pull event explains: an
   * inner transfer by another program, a mint, or everything that arrived when `transfers` is
   * empty.
   */
  unexplained: bigint;
  /** Every reference on the transfers into it. */
  references: string[];
  /** The wallet whose token account of this mint paid the most in the transaction. */
  payer: string | null;
  /** The text of the transaction's memo instructions, if any. */
  memo: string | null;
}

/** One forward scan: the receipts found, oldest first, and the cursor to store for the next. */
export interface PaymentScan {
  receipts: ScannedReceipt[];
  /** The newest signature processed (store it; pass it back next time). Unchanged when none. */
  cursor: string | null;
  /** How many signatures were read (spam makes this larger, never hides a payment). */
  signaturesScanned: number;
  /**
   * Whether every signature listed was read: false when the RPC listed one it did not serve yet
   * (the scan stopped there, and the next one starts from it). "Nothing found" means nothing
   * only when it is true.
   */
  complete: boolean;
}

/** A signature naming an address, as `getSignaturesForAddress` lists it. */
export interface SignatureEntry {
  signature: string;
  slot: number;
  /** It landed and failed: it moved nothing. */
  failed: boolean;
  finalized: boolean;
}

/** What a transaction brought a token account: nothing (null), or not served by the RPC yet. */
export type ReceiptRead = { served: true; receipt: ScannedReceipt | null } | { served: false };

/** The signatures naming an address after a cursor, oldest first, and the cursor to store. */
export interface SignatureScan {
  /** Successful transactions only (failed ones move nothing and authorise nothing). */
  signatures: string[];
  cursor: string | null;
}
