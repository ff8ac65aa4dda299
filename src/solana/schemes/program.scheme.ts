import {
  PublicKey,
  SystemProgram,
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
  ResolvedMint,
  RevokeInput,
  SubscribeInput,
  SubscribedOnChainError,
} from '../chain.port';
import { ataOf } from '../mint-resolver';
import { hookRefusal } from '../transfer-hook';
import { authorizationGone, planMismatch } from './program-state';
import {
  cancelSubscriptionInstruction,
  closeAbandonedSubscriptionInstruction,
  closeSubscriptionInstruction,
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
} from '../subscriptions-program';
import { revokedIn, subscribeSignerIn } from '../subscriptions-program-parse';
import { doomedCharge, tokenAccountState } from '../token-account-state';
import { customErrorCode, withReference } from '../transactions';
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
    const subscription = await subscriptionPda(plan, input.subscriber);
    const ata = ataOf(mint, input.subscriber);
    const [planInfo, authorityInfo, ataInfo, subscriptionInfo, clockInfo] =
      await this.ctx.connection.getMultipleAccountsInfo(
        [plan, authority, ata.toBase58(), subscription, SYSVAR_CLOCK_PUBKEY.toBase58()].map(
          (a) => new PublicKey(a),
        ),
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
    const authorityParams = {
      subscriber: input.subscriber,
      mint: mint.address,
      tokenProgram: mint.tokenProgram,
      subscriberAta: ata.toBase58(),
    };
    if (!authorityInfo || !authorityInfo.owner.equals(SUBSCRIPTIONS_PROGRAM_ID)) {
      return { step: 'authority', instructions: [await initAuthorityInstruction(authorityParams)] };
    }
    const initId = decodeAuthorityAccount(authority, authorityInfo).initId;
    const before: TransactionInstruction[] = [];
    // The program's delegate on the token account was revoked or replaced since the authority
    // was made (a token account has one delegate): initialising again approves it again and
    // keeps the authority's init_id, so it rides in the subscribe's transaction.
    const program = new PublicKey(mint.tokenProgram);
    const delegate = tokenAccountState(ata, ataInfo, program, new PublicKey(authority));
    if (!delegate.delegatedToService || delegate.delegatedAmount < input.amount) {
      before.push(await initAuthorityInstruction(authorityParams));
    }
    // An old subscription account of this wallet and plan is still there: closed first when the
    // program allows it, else refused with what the customer can do.
    if (subscriptionInfo?.owner.equals(SUBSCRIPTIONS_PROGRAM_ID)) {
      const old = decodeSubscriptionAccount(subscription, subscriptionInfo);
      const now = clockUnixTimestamp(clockInfo) ?? 0n;
      const ids = { subscriber: input.subscriber, plan, subscription };
      if (old.header.initId !== initId) {
        before.push(await closeAbandonedSubscriptionInstruction({ ...ids, mint: mint.address }));
      } else if (old.expiresAtTs !== 0n && old.expiresAtTs <= now) {
        before.push(closeSubscriptionInstruction(ids));
      } else if (old.expiresAtTs !== 0n) {
        throw new SubscribedOnChainError(
          `This wallet's subscription to the plan was cancelled and runs until ` +
            `${new Date(Number(old.expiresAtTs) * 1000).toISOString()}: it can subscribe again after that`,
        );
      } else {
        throw new SubscribedOnChainError(
          'This wallet already has a running subscription to the plan on-chain: cancel it ' +
            '(cancel_subscription) and subscribe again once it has run out',
        );
      }
    }
    const subscribe = await subscribeInstruction({
      subscriber: input.subscriber,
      merchant: input.merchantWallet,
      planId,
      mint: mint.address,
      terms: onchain.data.terms,
      authorityInitId: initId,
    });
    // The program's subscribe takes no extra account (a trailing one is its optional payer), so
    // the plan's reference rides on a zero-lamport self-transfer: the reconciling watcher finds
    // a subscribe the page never confirmed (a phone wallet's) by it.
    const referenced = input.reference
      ? [
          withReference(
            SystemProgram.transfer({
              fromPubkey: new PublicKey(input.subscriber),
              toPubkey: new PublicKey(input.subscriber),
              lamports: 0,
            }),
            input.reference,
          ),
        ]
      : [];
    return { step: 'subscribe', instructions: [...before, subscribe, ...referenced] };
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
