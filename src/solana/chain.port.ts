import type { SolanaCluster, SubscriptionScheme } from '../config/app-config';
import type { MintExtensions } from './mint-extensions';
import type { MintSymbol } from './mints';
import type { PaymentScan, ReceiptRead, SignatureEntry, SignatureScan } from './payment-scan';
import type { ChargeFailure } from './chain-errors';
import type {
  ChargeInput,
  InvoicePaymentInput,
  InvoiceRegistrationInput,
  MoveInput,
  PlanRegistrationInput,
  RefundInput,
  RevokeInput,
  SubscribeInput,
} from './chain-inputs';

export * from './chain-errors';
export * from './chain-inputs';

/** A transaction for someone else to sign: base64 wire bytes with no signatures yet. */
export interface UnsignedTx {
  /** Base64 of the serialized transaction (signatures zeroed). */
  transaction: string;
  blockhash: string;
  /** The block height after which the transaction can no longer land. */
  lastValidBlockHeight: number;
  /** A slot at or before the moment it was built: it cannot land before it. */
  slot: number;
}

/** A subscribe to sign, and its step (docs/solana.md, "Subscribing under the program"). */
export interface SubscribeTx extends UnsignedTx {
  /** `subscribe`: confirm it once sent; `authority` (program): send it, then ask again. */
  step: 'authority' | 'subscribe';
}

/** A mint as the service uses it: its token program and extensions are read from the chain. */
export interface ResolvedMint {
  symbol: MintSymbol;
  address: string;
  tokenProgram: string;
  decimals: number;
  /** As read at resolution (`NO_EXTENSIONS` under SPL Token); a pause is read at each use. */
  extensions: MintExtensions;
}

/** A signed transaction not yet sent: its signature is known, so its fate can always be looked up. */
export interface SignedTx {
  signature: string;
  /** Base64 wire bytes. */
  transaction: string;
  lastValidBlockHeight: number;
}

/** What an x402 payment must be: the resource server's requirements, as the facilitator holds them. */
export interface ExactTerms {
  /** Base64 wire bytes, partially signed by the payer. */
  transaction: string;
  mint: ResolvedMint;
  amount: bigint;
  payTo: string;
  /** `extra.memo`: when set, exactly one Memo instruction carrying it. */
  memo?: string | null;
  maxComputeUnitPriceMicroLamports: bigint;
}

/** A payment that holds: co-signed by the service key, ready to send. */
export interface ExactPayment {
  valid: true;
  /** The transfer's authority: the wallet that pays. */
  payer: string;
  /** The transaction with the fee payer's signature (its id is that signature). */
  signed: SignedTx;
  /** What the transaction costs the fee payer, landed or failed (signatures and priority fee). */
  networkFee: bigint;
}

/** A payment that holds, or x402's reason it does not (`ExactReason`). */
export type ExactVerdict = ExactPayment | { valid: false; reason: string; payer: string };

/**
 * The x402 `exact` scheme on the cluster, as its facilitator serves it (docs/x402.md): the
 * service key pays the network fee of payments it checked strictly, simulated and co-signed.
 */
export interface ExactPayments {
  /** The cluster's CAIP-2 id, as x402 names it. */
  readonly network: string;
  readonly feePayer: string;
  /** x402's reason this facilitator does not serve a kind of payment, or null when it does. */
  unserved(scheme: string, network: string): string | null;
  /**
   * The scheme's checks, and the service key's signature. `simulate` (verify): the chain must
   * run it as well; settle sends it with the node's preflight instead.
   */
  check(terms: ExactTerms, simulate?: boolean): Promise<ExactVerdict>;
}

/** What became of a sent transaction. */
export type TxOutcome =
  | { state: 'succeeded'; slot: number; finalized: boolean }
  | { state: 'failed'; slot: number; error: string }
  /**
   * Refused by the node: this send put nothing on the chain. `replaceable` says whether a new
   * transaction for the same charge may be built now: true when no copy of these bytes can ever
   * land (the signatures do not verify); false after a failed simulation, because a copy of the
   * same bytes sent earlier (before a crash) may still be on its way until the blockhash expires,
   * so the charge is settled with `outcome` until it says `expired` before anything replaces it.
   * The failure itself (`error`, `classifyChargeFailure`) is known at once either way.
   */
  | { state: 'rejected'; error: string; replaceable: boolean }
  /** Not seen yet, and its blockhash can still land it. */
  | { state: 'pending' }
  /** Not seen and its blockhash has expired: it never landed and never will. */
  | { state: 'expired' }
  /** No answer before the deadline (the RPC is down): settle it later with `outcome`. */
  | { state: 'unknown' };

export type {
  PaymentScan,
  ReceiptRead,
  ScannedPull,
  ScannedReceipt,
  ScannedTransfer,
  SignatureEntry,
  SignatureScan,
} from './payment-scan';

/** A top-level instruction of a transaction as the chain recorded it. */
export interface ChainInstruction {
  programId: string;
  accounts: { address: string; signer: boolean; writable: boolean }[];
  data: Uint8Array;
}

/** A transaction as the chain holds it, read by signature (verifying a customer's subscribe). */
export interface ChainTransaction {
  signature: string;
  slot: number;
  /** The chain's error when it landed and failed; null when it succeeded. */
  error: string | null;
  /** The fee payer: the first signer. */
  feePayer: string;
  signers: string[];
  /** The text of its memo instructions. */
  memos: string[];
  /** Its top-level instructions, in order (inner ones are not recorded). */
  instructions: ChainInstruction[];
}

/** Which plan an authorisation or its withdrawal is about. */
export interface PlanRef {
  /**
   * The scheme the subscription was authorised under (`subscriptions.scheme`); absent: the
   * scheme of new subscriptions (`ChainPort.scheme`).
   */
  scheme?: SubscriptionScheme;
  merchantWallet: string;
  planId: string;
  mint: MintSymbol;
}

/** A plan's terms as a subscriber's authorisation must hold them. */
export interface AuthorizedPlan extends PlanRef {
  /** What each period pulls (`ChainPort.pullAmount`). */
  amount: bigint;
  periodHours: number;
}

/**
 * What a subscriber's authorisation of a plan left on-chain (`ChainPort.authorizationLeft`), read
 * before the service records the subscription.
 */
export interface AuthorizationLeft {
  /** Where the authorisation lives (`ChainPort.subscriptionAddress`). */
  address: string;
  /**
   * Under a shared approval (`ChainPort.approval`): what the service key is approved for on the
   * subscriber's token account now (0 without an approval), for the caller to judge against the
   * wallet's other subscriptions. Null where the chain keeps the subscription's own terms.
   */
  approved: bigint | null;
}

/**
 * A customer's authorisation as one approval of the service key on their token account, shared
 * by all of the wallet's subscriptions in that mint (the token-delegate scheme). It is a finite
 * amount the service keeps books of: each subscription authorises its share, charges are judged
 * one of a wallet's at a time against what the others still need, and the customer re-authorises
 * when it runs low. `ChainPort.approval` is null under a scheme that keeps each subscription's
 * terms on-chain (the Subscriptions program), where none of this applies.
 */
export interface SharedApproval {
  /** How many periods one authorisation covers. */
  readonly periods: number;
  /** One subscription's share of the approval: its pull for `periods` periods. */
  share(pull: bigint): bigint;
}

/** The on-chain authorisation a subscriber gave the service (token-delegate scheme). */
export interface AuthorizationState {
  tokenAccount: string;
  exists: boolean;
  /** Frozen by the mint's freeze authority: nothing moves in or out until it is thawed. */
  frozen: boolean;
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
 * against any JSON-RPC endpoint: the embedded localnet, devnet or mainnet-beta. The service key's
 * secret never leaves the adapter: consumers see its public key.
 */
export abstract class ChainPort {
  abstract readonly cluster: SolanaCluster;
  /**
   * The scheme new subscriptions are authorised under (`SUBSCRIPTION_SCHEME`). A subscription
   * keeps the scheme it was authorised under (`subscriptions.scheme`), which the inputs below
   * name; the adapter speaks both.
   */
  abstract readonly scheme: SubscriptionScheme;
  /**
   * How new subscriptions' authorisations are budgeted: `approvalOf(scheme)`.
   */
  abstract readonly approval: SharedApproval | null;
  /**
   * How a scheme's authorisations are budgeted: one approval shared by a wallet's subscriptions
   * in a mint (the token-delegate scheme), or null where the chain keeps each subscription's
   * terms (the Subscriptions program). Billing and the portal ask this of a subscription's
   * scheme, and branch on nothing else.
   */
  abstract approvalOf(scheme: SubscriptionScheme): SharedApproval | null;
  /**
   * Where subscriptions authorised under a shared approval move when their customers
   * re-authorise: the scheme new subscriptions are taken under when it keeps each
   * subscription's terms on-chain (the Subscriptions program), else null: nothing moves
   * (docs/solana.md, "Moving subscribers between schemes").
   */
  abstract readonly moveTo: SubscriptionScheme | null;
  /** Whether a subscription under `scheme` is to move (to `moveTo`). */
  abstract movable(scheme: SubscriptionScheme): boolean;
  /** The service key (base58): fee payer of its pulls and the puller plans authorise. */
  abstract readonly servicePublicKey: string;
  /**
   * The x402 `exact` payments the service pays the network fee of, as facilitator: checked
   * strictly, simulated, and co-signed by the service key (docs/x402.md).
   */
  abstract readonly exactPayments: ExactPayments;

  abstract mint(symbol: MintSymbol): Promise<ResolvedMint>;
  /** Stops background work (the blockhash refresh). */
  abstract close(): void;
  /** The wallet's associated token account for the mint: where a merchant receives. */
  abstract tokenAccount(wallet: string, mint: MintSymbol): Promise<string>;
  /** The plan's on-chain account: the plan PDA (program scheme), null (token-delegate). */
  abstract planAddress(merchantWallet: string, planId: string): Promise<string | null>;
  /**
   * Where a subscription's authorisation lives: the subscription delegation PDA (program scheme)
   * or the subscriber's token account that carries the approval (token-delegate scheme).
   */
  abstract subscriptionAddress(input: {
    scheme?: SubscriptionScheme;
    merchantWallet: string;
    planId: string;
    subscriber: string;
    mint: MintSymbol;
  }): Promise<string>;
  /**
   * What each period's charge of a plan priced `price` pulls from the subscriber: under a shared
   * approval, the price plus the mint's Token-2022 transfer fee in force (the price arrives
   * whole, the rule invoices follow too; one RPC read, cached); under the Subscriptions program,
   * the plan's amount as it holds it (no RPC). `scheme`: the subscription's (default: new ones').
   */
  abstract pullAmount(
    mint: MintSymbol,
    price: bigint,
    scheme?: SubscriptionScheme,
  ): Promise<bigint>;

  /**
   * The builders of unsigned transactions take a recent blockhash from a cache refreshed in the
   * background (no round trip); with the RPC down they throw `ChainUnavailableError` (a 503).
   */
  abstract buildInvoiceRegistration(input: InvoiceRegistrationInput): Promise<UnsignedTx>;
  abstract buildInvoicePayment(input: InvoicePaymentInput): Promise<UnsignedTx>;
  /**
   * The merchant-signed refund: its receiving account to `recipient`'s token account (created,
   * at the merchant's expense, when missing), carrying the refund's reference.
   */
  abstract buildRefund(input: RefundInput): Promise<UnsignedTx>;
  abstract buildPlanRegistration(input: PlanRegistrationInput): Promise<UnsignedTx>;
  /** @throws PlanTermsMismatchError (program scheme) when the on-chain plan is not ours. */
  abstract buildSubscribe(input: SubscribeInput): Promise<SubscribeTx>;
  /** The customer-signed revoke of one subscription's authorisation. */
  abstract buildRevoke(input: RevokeInput): Promise<UnsignedTx>;
  /**
   * The customer-signed move of a wallet's token-delegate subscriptions in a mint to the
   * program, in two steps as a first subscribe there (`SubscribeTx.step`).
   * @throws PlanTermsMismatchError when a plan is not registered under the program as it is.
   */
  abstract buildMove(input: MoveInput): Promise<SubscribeTx>;

  /**
   * Builds and signs a charge (a pull by the service key), with its compute budget (a limit from
   * simulation, a priority fee capped by configuration). Classifies doomed charges first.
   */
  abstract signCharge(input: ChargeInput): Promise<SignedTx>;
  /**
   * What a signed transaction (base64) costs its fee payer when it lands, succeeded or failed:
   * 5,000 lamports per signature plus its priority fee (compute-unit price x limit), read from
   * its own bytes. What the service key pays for a charge that landed.
   */
  abstract networkFee(transaction: string): bigint;
  /**
   * Sends signed bytes once and waits for the outcome until the blockhash expires (or, with the
   * RPC unreachable, a deadline: `unknown`). `rejected` only for bytes the chain never saw, and
   * `replaceable` only when no copy of them can ever land.
   */
  abstract sendAndConfirm(tx: SignedTx): Promise<TxOutcome>;
  /** The fate of a transaction from its signature alone: never sends anything. */
  abstract outcome(signature: string, lastValidBlockHeight: number): Promise<TxOutcome>;
  /** The fates of many transactions (256 signatures per RPC call): never sends anything. */
  abstract outcomes(
    txs: { signature: string; lastValidBlockHeight: number }[],
  ): Promise<Map<string, TxOutcome>>;
  /** Classifies a failed or doomed charge by reading the token accounts. */
  abstract classifyChargeFailure(input: ChargeInput, error: string): Promise<ChargeFailure>;

  /** Every receipt of a token account after `cursor` (a signature), oldest first. */
  abstract scanTokenAccount(tokenAccount: string, cursor: string | null): Promise<PaymentScan>;
  /** Every receipt carrying `reference` after `cursor`, oldest first (reconciles one invoice). */
  abstract scanReference(reference: string, cursor: string | null): Promise<PaymentScan>;
  /**
   * One page of the signatures naming `address`, newest first: older than `before`, newer than
   * `until` (each optional), at most `limit` (1..1000). A bounded step of a scan that saves its
   * progress, however long the address's history.
   */
  abstract signaturePage(
    address: string,
    range: { before?: string; until?: string; limit: number },
  ): Promise<SignatureEntry[]>;
  /**
   * The newest finalized block height: a transaction whose last valid block height is below it
   * can no longer land, and one that landed is in the finalized history.
   */
  abstract finalizedBlockHeight(): Promise<number>;
  /** The chain's current slot (at the configured commitment). */
  abstract currentSlot(): Promise<number>;
  /** The service key's SOL balance, in lamports (what pays the network fees of its pulls). */
  abstract serviceKeyBalance(): Promise<bigint>;
  /** What each transaction brought `tokenAccount`, in the order given. */
  abstract receiptsInto(tokenAccount: string, entries: SignatureEntry[]): Promise<ReceiptRead[]>;
  /**
   * What to ask a payer to send so that `net` arrives (a Token-2022 transfer fee in force is
   * added; without one, `net` itself).
   */
  abstract grossAmount(mint: MintSymbol, net: bigint): Promise<bigint>;
  /**
   * What the mint's Token-2022 transfer fee withholds of a transfer of `gross`: the fee in
   * force at `slot` (a transfer that landed there), or now.
   */
  abstract feeOn(mint: MintSymbol, gross: bigint, slot?: number): Promise<bigint>;

  /** The transaction by signature at `confirmed`, or null when the chain has not seen it. */
  abstract readTransaction(signature: string): Promise<ChainTransaction | null>;
  /**
   * The wallet whose signed authorisation of the plan `tx` holds, read from its instructions
   * (never from the fee payer or an account's existence): the subscriber's `subscribe` of this
   * plan (program scheme), or the subscriber's approval of the service key on their token
   * account of the plan's mint, with this plan's subscribe memo (token-delegate). Null when it
   * holds none. Whether it succeeded and what it left on-chain are the caller's to check.
   */
  abstract authorizationSigner(tx: ChainTransaction, plan: PlanRef): Promise<string | null>;
  /**
   * The plan accounts whose Subscriptions-program `subscribe` `tx` holds, signed (a move's or a
   * checkout's: `planAddress` names a plan's under the program).
   */
  abstract subscribedPlans(tx: ChainTransaction): string[];
  /** Whether `tx` holds `subscriber`'s signed withdrawal of its authorisation of the plan. */
  abstract isRevocationBy(
    tx: ChainTransaction,
    plan: PlanRef & { subscriber: string },
  ): Promise<boolean>;
  /**
   * What `subscriber`'s authorisation of `plan` left on-chain: the Subscriptions program's
   * running subscription with the plan's terms (else null), or the approval on their token
   * account of the plan's mint (see `AuthorizationLeft.approved`).
   */
  abstract authorizationLeft(
    plan: AuthorizedPlan,
    subscriber: string,
  ): Promise<AuthorizationLeft | null>;
  /**
   * Whether the chain holds `subscriber`'s authorisation of the plan withdrawn, after a revoke
   * was read from a transaction (`isRevocationBy`): the program's subscription cancelled or
   * gone. Under a shared approval the revoke itself reset it: true.
   */
  abstract authorizationWithdrawn(plan: PlanRef & { subscriber: string }): Promise<boolean>;
  /** Every transaction naming `address` after `cursor` (a signature), oldest first. */
  abstract signaturesAfter(address: string, cursor: string | null): Promise<SignatureScan>;

  abstract readAuthorization(subscriber: string, mint: MintSymbol): Promise<AuthorizationState>;
  /** Which of these accounts exist (one `getMultipleAccounts` per 100). */
  abstract existingAccounts(addresses: string[]): Promise<Set<string>>;
}

/**
 * `ChargeInput.reservedForEarlier`, resolved (call after reading the token account). `room` is
 * what the approved allowance leaves past the charge: a `ReservationBound` within it is as good
 * as the exact sum (the charge is covered either way), so the exact sum is read only when the
 * bound does not fit.
 */
export async function reservedOf(input: ChargeInput, room: bigint): Promise<bigint> {
  const reserved = input.reservedForEarlier;
  if (typeof reserved === 'function') return reserved();
  if (typeof reserved === 'object') {
    return reserved.atMost <= room ? reserved.atMost : reserved.exactly();
  }
  return reserved ?? 0n;
}
