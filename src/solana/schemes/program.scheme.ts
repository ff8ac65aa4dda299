import { Commitment, Connection, PublicKey, TransactionInstruction } from '@solana/web3.js';
import {
  SUBSCRIPTIONS_ERROR__DELEGATION_EXPIRED,
  SUBSCRIPTIONS_ERROR__PLAN_CLOSED,
  SUBSCRIPTIONS_ERROR__PLAN_EXPIRED,
  SUBSCRIPTIONS_ERROR__PLAN_SUNSET,
  SUBSCRIPTIONS_ERROR__SUBSCRIPTION_CANCELLED,
  ZERO_ADDRESS,
} from '@solana/subscriptions';
import {
  AuthorizationLeft,
  AuthorizedPlan,
  ChainTransaction,
  ChargeFailedError,
  ChargeFailure,
  ChargeInput,
  PlanRegistrationInput,
  PlanTermsMismatchError,
  ProgramSubscriptionState,
  ResolvedMint,
  RevokeInput,
  SubscribeInput,
} from '../chain.port';
import { ataOf } from '../mint-resolver';
import {
  createPlanInstruction,
  decodeAuthorityAccount,
  decodePlanAccount,
  decodeSubscriptionAccount,
  onchainPlanId,
  planPda,
  revokedIn,
  revokeSubscriptionInstruction,
  subscribeSignerIn,
  subscribeInstructions,
  subscriptionAuthorityPda,
  subscriptionPda,
  SUBSCRIPTIONS_PROGRAM_ID,
  transferSubscriptionInstruction,
} from '../subscriptions-program';
import { doomedCharge, tokenAccountState } from '../token-account-state';
import { customErrorCode } from '../transactions';
import { ChargeAccounts, SchemeContext, SubscriptionScheme } from './subscription-scheme';

/** Subscriptions-program refusals that mean the customer's authorisation is over. */
const AUTHORIZATION_GONE_CODES = new Set<number>([
  SUBSCRIPTIONS_ERROR__SUBSCRIPTION_CANCELLED,
  SUBSCRIPTIONS_ERROR__DELEGATION_EXPIRED,
  SUBSCRIPTIONS_ERROR__PLAN_EXPIRED,
  SUBSCRIPTIONS_ERROR__PLAN_CLOSED,
  SUBSCRIPTIONS_ERROR__PLAN_SUNSET,
]);
// Not in the set, on purpose: AMOUNT_EXCEEDS_LIMIT / PERIOD_NOT_ELAPSED (this period was already
// pulled, e.g. by a charge whose outcome was unknown) and UNAUTHORIZED (the service key is not
// an allowed puller: a key rotation, the operator's to fix) are not the subscriber's doing.

/**
 * The Solana Foundation Subscriptions program (devnet, mainnet-beta): a merchant-signed
 * `create_plan`, a subscriber-signed `subscribe`, service-signed `transfer_subscription` pulls.
 */
export class ProgramScheme implements SubscriptionScheme {
  readonly name = 'program' as const;
  /** The program keeps each subscription's terms: no approval for the service to budget. */
  readonly approval = null;
  /** The program pulls the plan's amount as its terms say. */
  readonly pullsTransferFee = false;

  constructor(private readonly ctx: SchemeContext) {}

  planAddress(merchantWallet: string, planId: string): Promise<string | null> {
    return planPda(merchantWallet, onchainPlanId(planId));
  }

  async subscriptionAddress(input: {
    merchantWallet: string;
    planId: string;
    subscriber: string;
  }): Promise<string> {
    const plan = await planPda(input.merchantWallet, onchainPlanId(input.planId));
    return subscriptionPda(plan, input.subscriber);
  }

  async planRegistration(
    input: PlanRegistrationInput,
    mint: ResolvedMint,
  ): Promise<TransactionInstruction[]> {
    return [
      await createPlanInstruction({
        merchant: input.merchantWallet,
        planId: onchainPlanId(input.planId),
        mint: mint.address,
        tokenProgram: mint.tokenProgram,
        amount: input.amount,
        periodHours: input.periodHours,
        puller: this.ctx.signer.publicKey.toBase58(),
      }),
    ];
  }

  /**
   * `initialize_subscription_authority` when the subscriber has none for the mint, then
   * `subscribe` with the plan's terms. The plan PDA is derived from the merchant's wallet and
   * the plan id, but anyone who knows the id can create it first with other terms: so the
   * on-chain plan must equal the database's (mint, amount, period, no end, pullers exactly the
   * service key, destinations exactly the merchant's wallet), or nothing is built.
   */
  async subscribe(input: SubscribeInput, mint: ResolvedMint): Promise<TransactionInstruction[]> {
    const planId = onchainPlanId(input.planId);
    const plan = await planPda(input.merchantWallet, planId);
    const authority = await subscriptionAuthorityPda(input.subscriber, mint.address);
    const [planInfo, authorityInfo] = await this.ctx.connection.getMultipleAccountsInfo(
      [new PublicKey(plan), new PublicKey(authority)],
      this.ctx.commitment,
    );
    if (!planInfo || !planInfo.owner.equals(SUBSCRIPTIONS_PROGRAM_ID)) {
      throw new PlanTermsMismatchError(
        `plan ${input.planId} is not registered on-chain (${plan})`,
        'not_registered',
      );
    }
    const onchain = decodePlanAccount(plan, planInfo);
    const mismatch = planMismatch(onchain, {
      merchant: input.merchantWallet,
      mint: mint.address,
      amount: input.amount,
      periodHours: BigInt(input.periodHours),
      puller: this.ctx.signer.publicKey.toBase58(),
    });
    if (mismatch) {
      throw new PlanTermsMismatchError(
        `the on-chain plan ${plan} does not match plan ${input.planId}: ${mismatch}`,
        'terms_differ',
      );
    }
    return subscribeInstructions({
      subscriber: input.subscriber,
      merchant: input.merchantWallet,
      planId,
      mint: mint.address,
      tokenProgram: mint.tokenProgram,
      subscriberAta: ataOf(mint, input.subscriber).toBase58(),
      terms: onchain.data.terms,
      authorityInitId: authorityInfo
        ? decodeAuthorityAccount(authority, authorityInfo).initId
        : null,
    });
  }

  async revoke(input: RevokeInput): Promise<TransactionInstruction[]> {
    const plan = await planPda(input.merchantWallet, onchainPlanId(input.planId));
    const subscription = await subscriptionPda(plan, input.subscriber);
    return [revokeSubscriptionInstruction({ subscriber: input.subscriber, plan, subscription })];
  }

  async charge(
    input: ChargeInput,
    mint: ResolvedMint,
    accounts: ChargeAccounts,
  ): Promise<TransactionInstruction[]> {
    const plan = await planPda(input.merchantWallet, onchainPlanId(input.planId));
    const subscription = await subscriptionPda(plan, input.subscriber);
    const program = new PublicKey(mint.tokenProgram);
    const service = this.ctx.signer.publicKey;
    const source = tokenAccountState(
      accounts.source.address,
      accounts.source.info,
      program,
      service,
    );
    const destination = tokenAccountState(
      accounts.destination.address,
      accounts.destination.info,
      program,
      service,
    );
    const doomed = doomedCharge(source, destination, input.amount, false);
    // A frozen account first (final whatever else holds), then the authorisation, then funds.
    if (doomed?.reason === 'account_frozen') {
      throw new ChargeFailedError(doomed.reason, doomed.message);
    }
    const info = await this.ctx.connection.getAccountInfo(
      new PublicKey(subscription),
      this.ctx.commitment,
    );
    if (!info) {
      throw new ChargeFailedError('authorization_gone', 'the subscription account is gone');
    }
    if (doomed) throw new ChargeFailedError(doomed.reason, doomed.message);
    return [
      await transferSubscriptionInstruction({
        caller: service.toBase58(),
        subscriber: input.subscriber,
        plan,
        subscription,
        receiverAta: accounts.destination.address,
        mint: mint.address,
        tokenProgram: mint.tokenProgram,
        amount: input.amount,
      }),
    ];
  }

  authorizationSigner(
    tx: ChainTransaction,
    plan: { merchantWallet: string; planId: string },
  ): Promise<string | null> {
    return subscribeSignerIn(tx.instructions, {
      merchant: plan.merchantWallet,
      planId: onchainPlanId(plan.planId),
    });
  }

  isRevocationBy(
    tx: ChainTransaction,
    plan: { merchantWallet: string; planId: string; subscriber: string },
  ): Promise<boolean> {
    return revokedIn(tx.instructions, {
      merchant: plan.merchantWallet,
      planId: onchainPlanId(plan.planId),
      subscriber: plan.subscriber,
    });
  }

  /** The program's subscription, running (never cancelled) with the plan's amount and period. */
  async authorizationLeft(
    plan: AuthorizedPlan,
    subscriber: string,
  ): Promise<AuthorizationLeft | null> {
    const state = await readProgramSubscription(
      this.ctx,
      plan.merchantWallet,
      plan.planId,
      subscriber,
    );
    if (
      !state ||
      state.terms.amount !== plan.amount ||
      state.terms.periodHours !== BigInt(plan.periodHours) ||
      state.expiresAtTs !== 0n
    ) {
      return null;
    }
    return { address: state.address, approved: null };
  }

  /** The program's subscription is gone, or cancelled (its expiry set). */
  async authorizationWithdrawn(plan: {
    merchantWallet: string;
    planId: string;
    subscriber: string;
  }): Promise<boolean> {
    const state = await readProgramSubscription(
      this.ctx,
      plan.merchantWallet,
      plan.planId,
      plan.subscriber,
    );
    return !state || state.expiresAtTs !== 0n;
  }

  classifyProgramError(_input: ChargeInput, error: string): Promise<ChargeFailure> {
    const code = customErrorCode(error);
    return Promise.resolve(
      code !== null && AUTHORIZATION_GONE_CODES.has(code) ? 'authorization_gone' : 'transient',
    );
  }
}

/** The subscription account of a plan and subscriber as the program holds it, or null when absent. */
export async function readProgramSubscription(
  chain: { connection: Connection; commitment: Commitment },
  merchantWallet: string,
  planId: string,
  subscriber: string,
): Promise<ProgramSubscriptionState | null> {
  const plan = await planPda(merchantWallet, onchainPlanId(planId));
  const address = await subscriptionPda(plan, subscriber);
  const info = await chain.connection.getAccountInfo(new PublicKey(address), chain.commitment);
  if (!info || !info.owner.equals(SUBSCRIPTIONS_PROGRAM_ID)) return null;
  const state = decodeSubscriptionAccount(address, info);
  return {
    address,
    terms: state.terms,
    amountPulledInPeriod: state.amountPulledInPeriod,
    currentPeriodStartTs: state.currentPeriodStartTs,
    expiresAtTs: state.expiresAtTs,
  };
}

/** What differs between an on-chain plan and the expected terms, or null when nothing does. */
export function planMismatch(
  onchain: ReturnType<typeof decodePlanAccount>,
  expected: { merchant: string; mint: string; amount: bigint; periodHours: bigint; puller: string },
): string | null {
  const used = (list: readonly string[]) => list.filter((a) => a !== ZERO_ADDRESS);
  const pullers = used(onchain.data.pullers);
  const destinations = used(onchain.data.destinations);
  if (onchain.owner !== expected.merchant) return `owner ${onchain.owner}`;
  if (onchain.data.mint !== expected.mint) return `mint ${onchain.data.mint}`;
  if (onchain.data.terms.amount !== expected.amount) return `amount ${onchain.data.terms.amount}`;
  if (onchain.data.terms.periodHours !== expected.periodHours) {
    return `period ${onchain.data.terms.periodHours} hours`;
  }
  if (onchain.data.endTs !== 0n) return `an end time (${onchain.data.endTs})`;
  if (pullers.length !== 1 || pullers[0] !== expected.puller) {
    return `pullers [${pullers.join(', ')}]`;
  }
  if (destinations.length !== 1 || destinations[0] !== expected.merchant) {
    return `destinations [${destinations.join(', ')}]`;
  }
  return null;
}
