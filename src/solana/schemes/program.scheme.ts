import { PublicKey, SYSVAR_CLOCK_PUBKEY, TransactionInstruction } from '@solana/web3.js';
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
  ResolvedMint,
  RevokeInput,
  SubscribeInput,
} from '../chain.port';
import { hookRefusal } from '../transfer-hook';
import { authorizationGone } from './program-state';
import {
  cancelSubscriptionInstruction,
  createPlanInstruction,
  decodeAuthorityAccount,
  decodeSubscriptionAccount,
  onchainPlanId,
  planPda,
  subscriptionAuthorityPda,
  subscriptionPda,
  SUBSCRIPTIONS_PROGRAM_ID,
  transferSubscriptionInstruction,
} from '../subscriptions-program';
import { revokedIn, subscribeSignerIn } from '../subscriptions-program-parse';
import { doomedCharge, tokenAccountState } from '../token-account-state';
import { customErrorCode } from '../transactions';
import { clockUnixTimestamp, periodAllowanceTaken } from './program-period';
import { programSubscribe } from './program-subscribe';
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
// Not in the set, on purpose: AMOUNT_EXCEEDS_PERIOD_LIMIT (400: the program's period was already
// pulled: by the plan's owner or another puller, which `charge` notices before signing, or by a
// charge whose outcome was unknown) and UNAUTHORIZED (130: the service key is not an allowed
// puller: a key rotation, the operator's to fix) are not the subscriber's doing. (At v0.4.0 a
// subscription's pull raises 400 for both "too much" and "too soon"; 300 belongs to fixed
// delegations and 401 is not raised.)

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

  /** `programSubscribe` of one plan: the authority first, when the wallet has none. */
  subscribe(input: SubscribeInput, mint: ResolvedMint): Promise<SchemeSubscribe> {
    return programSubscribe(this.ctx, [input], mint);
  }

  /**
   * A wallet's subscribe to several plans in one mint in one transaction (`programSubscribe`):
   * a customer's move of the subscriptions that shared its token-delegate approval.
   */
  subscribeAll(inputs: SubscribeInput[], mint: ResolvedMint): Promise<SchemeSubscribe> {
    return programSubscribe(this.ctx, inputs, mint);
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
    if (doomed?.reason === 'account_frozen' || doomed?.reason === 'merchant_account_frozen') {
      throw new ChargeFailedError(doomed.reason, doomed.message);
    }
    const authority = await subscriptionAuthorityPda(input.subscriber, mint.address);
    const [subscriptionInfo, authorityInfo, planInfo, clockInfo] =
      await this.ctx.connection.getMultipleAccountsInfo(
        [subscription, authority, plan, SYSVAR_CLOCK_PUBKEY.toBase58()].map(
          (a) => new PublicKey(a),
        ),
        this.ctx.commitment,
      );
    const gone = authorizationGone(
      { subscription, authority, plan },
      { subscription: subscriptionInfo, authority: authorityInfo, plan: planInfo },
      service.toBase58(),
      clockUnixTimestamp(clockInfo) ?? 0n,
    );
    if (gone) throw new ChargeFailedError(gone.reason, gone.message);
    // The program pulls as the authority, the token account's delegate: one the subscriber
    // revoked or replaced (a token account has one delegate) leaves nothing to pull with.
    if (source.exists) {
      const delegated = tokenAccountState(
        accounts.source.address,
        accounts.source.info,
        program,
        new PublicKey(authority),
      );
      if (!delegated.delegatedToService || delegated.delegatedAmount < input.amount) {
        throw new ChargeFailedError(
          'authorization_gone',
          delegated.delegatedToService
            ? `the delegation to the subscriber's authority (${delegated.delegatedAmount}) no longer covers the charge`
            : "the subscriber revoked or replaced its token account's delegation to its authority",
        );
      }
    }
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
    // A hooked mint: the accounts its hook needs, for the transfer the program makes (the
    // subscriber's authority PDA is the delegate that signs it); v0.4.0 forwards them.
    const hookAccounts = await this.ctx.hooks
      .extraAccounts(mint, {
        source: new PublicKey(accounts.source.address),
        destination: new PublicKey(accounts.destination.address),
        authority: new PublicKey(authority),
        amount: input.amount,
        signers: [service],
      })
      .catch(hookRefusal);
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
        hookAccounts,
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

  /**
   * The program's subscription, running (never cancelled) with the plan's amount and period, and
   * bound to the subscriber's authority as it is now (a closed or re-initialised authority leaves
   * a subscription no pull can use).
   */
  async authorizationLeft(
    plan: AuthorizedPlan,
    subscriber: string,
    mint: ResolvedMint,
  ): Promise<AuthorizationLeft | null> {
    const read = await this.readBound(plan.merchantWallet, plan.planId, subscriber, mint);
    if (
      !read?.bound ||
      read.state.terms.amount !== plan.amount ||
      read.state.terms.periodHours !== BigInt(plan.periodHours) ||
      read.state.expiresAtTs !== 0n
    ) {
      return null;
    }
    return { address: read.state.address, approved: null };
  }

  /** The program's subscription is gone, cancelled (its expiry set), or its authority is. */
  async authorizationWithdrawn(
    plan: { merchantWallet: string; planId: string; subscriber: string },
    mint: ResolvedMint,
  ): Promise<boolean> {
    const read = await this.readBound(plan.merchantWallet, plan.planId, plan.subscriber, mint);
    return !read?.bound || read.state.expiresAtTs !== 0n;
  }

  /**
   * The subscription and the subscriber's authority for the mint, in one read: whether the
   * authority is still the one the subscription was bound to (its `init_id`).
   */
  private async readBound(
    merchantWallet: string,
    planId: string,
    subscriber: string,
    mint: ResolvedMint,
  ) {
    const plan = await planPda(merchantWallet, onchainPlanId(planId));
    const address = await subscriptionPda(plan, subscriber);
    const authority = await subscriptionAuthorityPda(subscriber, mint.address);
    const [info, authorityInfo] = await this.ctx.connection.getMultipleAccountsInfo(
      [new PublicKey(address), new PublicKey(authority)],
      this.ctx.commitment,
    );
    if (!info || !info.owner.equals(SUBSCRIPTIONS_PROGRAM_ID)) return null;
    const state = decodeSubscriptionAccount(address, info);
    const bound =
      authorityInfo !== null &&
      authorityInfo.owner.equals(SUBSCRIPTIONS_PROGRAM_ID) &&
      decodeAuthorityAccount(authority, authorityInfo).initId === state.header.initId;
    return { state: { address, terms: state.terms, expiresAtTs: state.expiresAtTs }, bound };
  }

  classifyProgramError(_input: ChargeInput, error: string): Promise<ChargeFailure> {
    const code = customErrorCode(error);
    return Promise.resolve(
      code !== null && AUTHORIZATION_GONE_CODES.has(code) ? 'authorization_gone' : 'transient',
    );
  }
}
