import { address } from '@solana/kit';
import {
  AccountInfo,
  Commitment,
  Connection,
  PublicKey,
  SYSVAR_CLOCK_PUBKEY,
  TransactionInstruction,
} from '@solana/web3.js';
import {
  SUBSCRIPTIONS_ERROR__DELEGATION_EXPIRED,
  SUBSCRIPTIONS_ERROR__PLAN_CLOSED,
  SUBSCRIPTIONS_ERROR__PLAN_EXPIRED,
  SUBSCRIPTIONS_ERROR__PLAN_SUNSET,
  SUBSCRIPTIONS_ERROR__STALE_SUBSCRIPTION_AUTHORITY,
  SUBSCRIPTIONS_ERROR__SUBSCRIPTION_CANCELLED,
} from '../subscriptions-client/generated';
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
  cancelSubscriptionInstruction,
  createPlanInstruction,
  decodeAuthorityAccount,
  decodePlanAccount,
  decodeSubscriptionAccount,
  initAuthorityInstruction,
  onchainPlanId,
  planPda,
  subscribeInstruction,
  subscriptionAuthorityPda,
  subscriptionPda,
  SUBSCRIPTIONS_PROGRAM_ID,
  transferSubscriptionInstruction,
  ZERO_ADDRESS,
} from '../subscriptions-program';
import { revokedIn, subscribeSignerIn } from '../subscriptions-program-parse';
import { doomedCharge, tokenAccountState } from '../token-account-state';
import { customErrorCode } from '../transactions';
import { clockUnixTimestamp, periodAllowanceTaken } from './program-period';
import {
  ChargeAccounts,
  SchemeContext,
  SchemeSubscribe,
  SubscriptionScheme,
} from './subscription-scheme';

/** Subscriptions-program refusals that mean the customer's authorisation is over. */
const AUTHORIZATION_GONE_CODES = new Set<number>([
  SUBSCRIPTIONS_ERROR__SUBSCRIPTION_CANCELLED,
  SUBSCRIPTIONS_ERROR__DELEGATION_EXPIRED,
  SUBSCRIPTIONS_ERROR__PLAN_EXPIRED,
  SUBSCRIPTIONS_ERROR__PLAN_CLOSED,
  SUBSCRIPTIONS_ERROR__PLAN_SUNSET,
  // The subscriber closed or re-initialised its authority for the mint: every subscription bound
  // to the old one is over.
  SUBSCRIPTIONS_ERROR__STALE_SUBSCRIPTION_AUTHORITY,
]);
// Not in the set, on purpose: AMOUNT_EXCEEDS_LIMIT / PERIOD_NOT_ELAPSED (this period was already
// pulled: by the plan's owner or another puller, which `charge` notices before signing, or by a
// charge whose outcome was unknown) and UNAUTHORIZED (the service key is not
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
   * The subscriber's authority for the mint first, when it has none: `initialize_subscription_authority`
   * alone (step `authority`). The program stamps the authority with the slot it lands in and
   * `subscribe` must name that stamp, so the subscribe can only be built once the authority is
   * on-chain: asked again, this returns `subscribe` with the plan's live terms and the authority's
   * `init_id` as read (step `subscribe`). The plan PDA is derived from the merchant's wallet and
   * the plan id, but anyone who knows the id can create it first with other terms: so the
   * on-chain plan must equal the database's (mint, amount, period, no end, pullers exactly the
   * service key, destinations exactly the merchant's wallet), or nothing is built.
   */
  async subscribe(input: SubscribeInput, mint: ResolvedMint): Promise<SchemeSubscribe> {
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
    if (!authorityInfo || !authorityInfo.owner.equals(SUBSCRIPTIONS_PROGRAM_ID)) {
      return {
        step: 'authority',
        instructions: [
          await initAuthorityInstruction({
            subscriber: input.subscriber,
            mint: mint.address,
            tokenProgram: mint.tokenProgram,
            subscriberAta: ataOf(mint, input.subscriber).toBase58(),
          }),
        ],
      };
    }
    return {
      step: 'subscribe',
      instructions: [
        await subscribeInstruction({
          subscriber: input.subscriber,
          merchant: input.merchantWallet,
          planId,
          mint: mint.address,
          terms: onchain.data.terms,
          authorityInitId: decodeAuthorityAccount(authority, authorityInfo).initId,
        }),
      ],
    };
  }

  /** `cancel_subscription`: the paid period runs out, then nothing more can be pulled. */
  async revoke(input: RevokeInput): Promise<TransactionInstruction[]> {
    const plan = await planPda(input.merchantWallet, onchainPlanId(input.planId));
    const subscription = await subscriptionPda(plan, input.subscriber);
    return [
      await cancelSubscriptionInstruction({ subscriber: input.subscriber, plan, subscription }),
    ];
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
    const authority = await subscriptionAuthorityPda(input.subscriber, mint.address);
    const [subscriptionInfo, authorityInfo, planInfo, clockInfo] =
      await this.ctx.connection.getMultipleAccountsInfo(
        [
          new PublicKey(subscription),
          new PublicKey(authority),
          new PublicKey(plan),
          SYSVAR_CLOCK_PUBKEY,
        ],
        this.ctx.commitment,
      );
    const gone = authorizationGone(
      { subscription, authority, plan },
      { subscription: subscriptionInfo, authority: authorityInfo, plan: planInfo },
      service.toBase58(),
    );
    if (gone) throw new ChargeFailedError(gone.reason, gone.message);
    const now = clockUnixTimestamp(clockInfo);
    const taken =
      now === null
        ? null
        : periodAllowanceTaken(
            decodeSubscriptionAccount(subscription, subscriptionInfo!),
            input.amount,
            now,
          );
    if (taken) throw new ChargeFailedError('transient', taken);
    if (doomed) throw new ChargeFailedError(doomed.reason, doomed.message);
    return [
      await transferSubscriptionInstruction({
        caller: service.toBase58(),
        subscriber: input.subscriber,
        subscriberAta: accounts.source.address,
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
    mint: ResolvedMint,
  ): Promise<boolean> {
    return revokedIn(tx.instructions, {
      merchant: plan.merchantWallet,
      planId: onchainPlanId(plan.planId),
      subscriber: plan.subscriber,
      mint: mint.address,
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

/**
 * Why a pull of the subscription would be refused for the subscriber's (or the plan owner's)
 * doing, read from the accounts the program would check, or null when nothing says so:
 * - the subscription account is gone, or cancelled (its expiry set: the paid period runs out
 *   and nothing more may be pulled);
 * - the subscriber's authority for the mint is gone, or was re-initialised (its `init_id` is no
 *   longer the one the subscription was bound to): `authorization_gone`;
 * - the plan is gone or no longer lets the service key pull (its owner removed it): `transient`,
 *   the operator's or merchant's to fix, never the customer's fault.
 */
export function authorizationGone(
  at: { subscription: string; authority: string; plan: string },
  infos: {
    subscription: AccountInfo<Buffer> | null;
    authority: AccountInfo<Buffer> | null;
    plan: AccountInfo<Buffer> | null;
  },
  puller: string,
): { reason: 'authorization_gone' | 'transient'; message: string } | null {
  const ours = (info: AccountInfo<Buffer> | null): info is AccountInfo<Buffer> =>
    info !== null && info.owner.equals(SUBSCRIPTIONS_PROGRAM_ID);
  if (!ours(infos.subscription)) {
    return { reason: 'authorization_gone', message: 'the subscription account is gone' };
  }
  const subscription = decodeSubscriptionAccount(at.subscription, infos.subscription);
  if (subscription.expiresAtTs !== 0n) {
    return {
      reason: 'authorization_gone',
      message: `the subscriber cancelled the subscription (it expires at ${subscription.expiresAtTs})`,
    };
  }
  if (!ours(infos.authority)) {
    return {
      reason: 'authorization_gone',
      message: "the subscriber's authority for the mint is closed",
    };
  }
  const authority = decodeAuthorityAccount(at.authority, infos.authority);
  if (authority.initId !== subscription.header.initId) {
    return {
      reason: 'authorization_gone',
      message: `the subscriber re-initialised its authority (init_id ${authority.initId}, the subscription's ${subscription.header.initId})`,
    };
  }
  if (!ours(infos.plan)) {
    return { reason: 'authorization_gone', message: 'the plan account is gone' };
  }
  const plan = decodePlanAccount(at.plan, infos.plan);
  if (!plan.data.pullers.includes(address(puller))) {
    return {
      reason: 'transient',
      message: `the plan's owner removed the service key ${puller} from the plan's pullers`,
    };
  }
  return null;
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
