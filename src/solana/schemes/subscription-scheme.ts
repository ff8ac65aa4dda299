import { AccountInfo, Commitment, Connection, TransactionInstruction } from '@solana/web3.js';
import type { SubscriptionScheme as SchemeName } from '../../config/app-config';
import type {
  AuthorizationLeft,
  AuthorizedPlan,
  ChainTransaction,
  ChargeFailure,
  ChargeInput,
  PlanRegistrationInput,
  ResolvedMint,
  RevokeInput,
  SharedApproval,
  SubscribeInput,
  SubscribeTx,
} from '../chain.port';
import type { MintResolver } from '../mint-resolver';
import type { ServiceSigner, UnsignedTxBuilder } from '../transactions';
import type { TransferHooks } from '../transfer-hook';

/** What both schemes share: the connection, the mints and the service key's public side. */
export interface SchemeContext {
  connection: Connection;
  commitment: Commitment;
  mints: MintResolver;
  signer: ServiceSigner;
  unsigned: UnsignedTxBuilder;
  /** Token-delegate scheme: one subscription's share of the approval covers this many periods. */
  approvalPeriods: number;
  /**
   * The mints' transfer hooks: the accounts every transfer the scheme builds must carry
   * (`extraAccounts`). The adapter has already refused a charge whose hook program is absent.
   */
  hooks: TransferHooks;
}

/** The accounts a charge reads before it is signed, in one round trip. */
export interface ChargeAccounts {
  source: { address: string; info: AccountInfo<Buffer> | null };
  destination: { address: string; info: AccountInfo<Buffer> | null };
}

/**
 * How a customer authorises recurring pulls and how the service pulls (DESIGN section 6): the
 * token-delegate scheme (SPL `approve` of the service key; localnet) or the Subscriptions program
 * (devnet and mainnet-beta). Everything scheme-specific lives behind this interface, so the
 * adapter never asks which scheme it runs.
 */
/** A subscribe transaction's instructions, and which step of the subscribe they are. */
export interface SchemeSubscribe {
  step: SubscribeTx['step'];
  instructions: TransactionInstruction[];
}

export interface SubscriptionScheme {
  readonly name: SchemeName;
  /** The scheme's shared approval (`ChainPort.approval`), or null when it keeps terms on-chain. */
  readonly approval: SharedApproval | null;
  /** Whether a pull is the price plus the mint's transfer fee (`ChainPort.pullAmount`). */
  readonly pullsTransferFee: boolean;

  /** The plan's on-chain account (program scheme: its PDA), or null when the scheme has none. */
  planAddress(merchantWallet: string, planId: string): Promise<string | null>;
  /**
   * Where a subscription's authorisation lives: the delegation PDA (program scheme) or the
   * subscriber's token account that carries the approval (token-delegate scheme).
   */
  subscriptionAddress(input: {
    merchantWallet: string;
    planId: string;
    subscriber: string;
    mint: ResolvedMint;
  }): Promise<string>;

  /** The merchant-signed registration of a plan. */
  planRegistration(
    input: PlanRegistrationInput,
    mint: ResolvedMint,
  ): Promise<TransactionInstruction[]>;
  /**
   * The subscriber-signed authorisation, or the step before it (`SubscribeStep`).
   * @throws PlanTermsMismatchError (program scheme).
   */
  subscribe(input: SubscribeInput, mint: ResolvedMint): Promise<SchemeSubscribe>;
  /** The subscriber-signed withdrawal of one subscription's authorisation. */
  revoke(input: RevokeInput, mint: ResolvedMint): Promise<TransactionInstruction[]>;

  /**
   * The pull itself (without the memo and the merchant token account creation, which the
   * adapter adds). @throws ChargeFailedError when the charge is doomed.
   */
  charge(
    input: ChargeInput,
    mint: ResolvedMint,
    accounts: ChargeAccounts,
  ): Promise<TransactionInstruction[]>;

  /**
   * The wallet whose signed authorisation of the plan the transaction holds (see
   * `ChainPort.authorizationSigner`), or null.
   */
  authorizationSigner(
    tx: ChainTransaction,
    plan: { merchantWallet: string; planId: string },
    mint: ResolvedMint,
  ): Promise<string | null>;
  /** Whether the transaction holds the subscriber's signed withdrawal of that authorisation. */
  isRevocationBy(
    tx: ChainTransaction,
    plan: { merchantWallet: string; planId: string; subscriber: string },
    mint: ResolvedMint,
  ): Promise<boolean>;

  /** What the subscriber's authorisation of the plan left on-chain (`ChainPort`'s). */
  authorizationLeft(
    plan: AuthorizedPlan,
    subscriber: string,
    mint: ResolvedMint,
  ): Promise<AuthorizationLeft | null>;
  /** Whether the chain holds that authorisation withdrawn (`ChainPort`'s). */
  authorizationWithdrawn(
    plan: { merchantWallet: string; planId: string; subscriber: string },
    mint: ResolvedMint,
  ): Promise<boolean>;

  /** Classifies a failed charge whose account states did not already explain it. */
  classifyProgramError(input: ChargeInput, error: string): Promise<ChargeFailure>;
}
