import {
  AccountInfo,
  PublicKey,
  SystemProgram,
  SYSVAR_CLOCK_PUBKEY,
  TransactionInstruction,
} from '@solana/web3.js';
import {
  PlanTermsMismatchError,
  ResolvedMint,
  SubscribeInput,
  SubscribedOnChainError,
} from '../chain.port';
import { ataOf } from '../mint-resolver';
import { planMismatch } from './program-state';
import {
  closeAbandonedSubscriptionInstruction,
  closeSubscriptionInstruction,
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
} from '../subscriptions-program';
import { tokenAccountState } from '../token-account-state';
import { withReference } from '../transactions';
import { clockUnixTimestamp } from './program-period';
import type { SchemeContext, SchemeSubscribe } from './subscription-scheme';

/**
 * One wallet's subscribe to one or more plans in one mint under the Subscriptions program (a
 * customer's move of several subscriptions is one transaction: docs/solana.md, "Moving
 * subscribers between schemes").
 *
 * The subscriber's authority for the mint comes first, when it has none:
 * `initialize_subscription_authority` alone (step `authority`). The program stamps the authority
 * with the slot it lands in and `subscribe` must name that stamp, so the subscribe can only be
 * built once the authority is on-chain: asked again, this returns `subscribe` with each plan's
 * live terms and the authority's `init_id` as read (step `subscribe`). A plan PDA is derived
 * from the merchant's wallet and the plan id, but anyone who knows the id can create it first
 * with other terms: so each on-chain plan must equal the database's (mint, amount, period, no
 * end, pullers exactly the service key, destinations exactly the merchant's wallet), or nothing
 * is built.
 * @throws PlanTermsMismatchError; SubscribedOnChainError.
 */
export async function programSubscribe(
  ctx: SchemeContext,
  inputs: SubscribeInput[],
  mint: ResolvedMint,
): Promise<SchemeSubscribe> {
  const subscriber = inputs[0].subscriber;
  if (inputs.some((input) => input.subscriber !== subscriber)) {
    throw new RangeError('a subscribe transaction is one wallet’s');
  }
  const plans = await Promise.all(
    inputs.map((input) => planPda(input.merchantWallet, onchainPlanId(input.planId))),
  );
  const subscriptions = await Promise.all(plans.map((plan) => subscriptionPda(plan, subscriber)));
  const authority = await subscriptionAuthorityPda(subscriber, mint.address);
  const ata = ataOf(mint, subscriber);
  const infos = await ctx.connection.getMultipleAccountsInfo(
    [authority, ata.toBase58(), SYSVAR_CLOCK_PUBKEY.toBase58(), ...plans, ...subscriptions].map(
      (a) => new PublicKey(a),
    ),
    ctx.commitment,
  );
  const [authorityInfo, ataInfo, clockInfo] = infos;
  const planInfos = infos.slice(3, 3 + plans.length);
  const subscriptionInfos = infos.slice(3 + plans.length);
  const terms = inputs.map((input, i) => {
    const info = planInfos[i];
    if (!info || !info.owner.equals(SUBSCRIPTIONS_PROGRAM_ID)) {
      throw new PlanTermsMismatchError(
        `plan ${input.planId} is not registered on-chain (${plans[i]})`,
        'not_registered',
        input.planId,
      );
    }
    const onchain = decodePlanAccount(plans[i], info);
    const mismatch = planMismatch(onchain, {
      merchant: input.merchantWallet,
      mint: mint.address,
      amount: input.amount,
      periodHours: BigInt(input.periodHours),
      puller: ctx.signer.publicKey.toBase58(),
    });
    if (mismatch) {
      throw new PlanTermsMismatchError(
        `the on-chain plan ${plans[i]} does not match plan ${input.planId}: ${mismatch}`,
        'terms_differ',
        input.planId,
      );
    }
    return onchain.data.terms;
  });
  const authorityParams = {
    subscriber,
    mint: mint.address,
    tokenProgram: mint.tokenProgram,
    subscriberAta: ata.toBase58(),
  };
  if (!authorityInfo || !authorityInfo.owner.equals(SUBSCRIPTIONS_PROGRAM_ID)) {
    return { step: 'authority', instructions: [await initAuthorityInstruction(authorityParams)] };
  }
  const initId = decodeAuthorityAccount(authority, authorityInfo).initId;
  const instructions: TransactionInstruction[] = [];
  // The program's delegate on the token account was revoked or replaced since the authority
  // was made (a token account has one delegate: a move's first step gives it back to the
  // service key): initialising again approves it again and keeps the authority's init_id, so
  // it rides in the subscribe's transaction.
  const program = new PublicKey(mint.tokenProgram);
  const delegate = tokenAccountState(ata, ataInfo, program, new PublicKey(authority));
  const needed = inputs.reduce((sum, input) => sum + input.amount, 0n);
  if (!delegate.delegatedToService || delegate.delegatedAmount < needed) {
    instructions.push(await initAuthorityInstruction(authorityParams));
  }
  const now = clockUnixTimestamp(clockInfo) ?? 0n;
  let kept = 0;
  for (const [i, input] of inputs.entries()) {
    const ids = { subscriber, plan: plans[i], subscription: subscriptions[i] };
    if (input.keepRunning && running(ids, subscriptionInfos[i], initId, terms[i])) {
      kept++;
      continue;
    }
    instructions.push(...(await closeOld(ids, subscriptionInfos[i], initId, now, mint, input)));
    instructions.push(
      await subscribeInstruction({
        subscriber,
        merchant: input.merchantWallet,
        planId: onchainPlanId(input.planId),
        mint: mint.address,
        terms: terms[i],
        authorityInitId: initId,
      }),
    );
  }
  if (kept === inputs.length) {
    throw new SubscribedOnChainError(
      'Every one of these subscriptions runs under the Subscriptions program already: the move ' +
        'has landed; confirm it, or reload the page',
    );
  }
  // The program's subscribe takes no extra account (a trailing one is its optional payer), so
  // a plan's reference rides on a zero-lamport self-transfer: the reconciling watcher finds a
  // subscribe the page never confirmed (a phone wallet's) by it.
  for (const input of inputs) {
    if (!input.reference) continue;
    const self = new PublicKey(subscriber);
    instructions.push(
      withReference(
        SystemProgram.transfer({ fromPubkey: self, toPubkey: self, lamports: 0 }),
        input.reference,
      ),
    );
  }
  return { step: 'subscribe', instructions };
}

/**
 * Whether the wallet's subscription to the plan runs as a subscribe would leave it: not
 * cancelled, with the plan's terms, bound to the wallet's authority as it is.
 */
function running(
  ids: { subscription: string },
  info: AccountInfo<Buffer> | null,
  initId: bigint,
  terms: { amount: bigint; periodHours: bigint },
): boolean {
  if (!info?.owner.equals(SUBSCRIPTIONS_PROGRAM_ID)) return false;
  const sub = decodeSubscriptionAccount(ids.subscription, info);
  return (
    sub.header.initId === initId &&
    sub.expiresAtTs === 0n &&
    sub.terms.amount === terms.amount &&
    sub.terms.periodHours === terms.periodHours
  );
}

/**
 * An old subscription account of this wallet and plan still there: closed first when the program
 * allows it, else refused with what the customer can do.
 */
async function closeOld(
  ids: { subscriber: string; plan: string; subscription: string },
  info: AccountInfo<Buffer> | null,
  initId: bigint,
  now: bigint,
  mint: ResolvedMint,
  input: { planId: string },
): Promise<TransactionInstruction[]> {
  if (!info?.owner.equals(SUBSCRIPTIONS_PROGRAM_ID)) return [];
  const old = decodeSubscriptionAccount(ids.subscription, info);
  if (old.header.initId !== initId) {
    return [await closeAbandonedSubscriptionInstruction({ ...ids, mint: mint.address })];
  }
  if (old.expiresAtTs !== 0n && old.expiresAtTs <= now) return [closeSubscriptionInstruction(ids)];
  if (old.expiresAtTs !== 0n) {
    throw new SubscribedOnChainError(
      `This wallet's subscription to the plan was cancelled and runs until ` +
        `${new Date(Number(old.expiresAtTs) * 1000).toISOString()}: it can subscribe again after that`,
      input.planId,
    );
  }
  throw new SubscribedOnChainError(
    'This wallet already has a running subscription to the plan on-chain: cancel it ' +
      '(cancel_subscription) and subscribe again once it has run out',
    input.planId,
  );
}
