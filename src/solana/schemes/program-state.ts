import { address } from '@solana/kit';
import { AccountInfo, Commitment, Connection, PublicKey } from '@solana/web3.js';
import type { ProgramSubscriptionState } from '../chain.port';
import {
  decodeAuthorityAccount,
  decodePlanAccount,
  decodeSubscriptionAccount,
  onchainPlanId,
  planPda,
  subscriptionPda,
  SUBSCRIPTIONS_PROGRAM_ID,
  ZERO_ADDRESS,
} from '../subscriptions-program';

/**
 * What the Subscriptions program's accounts say, read as the program checks them: the
 * subscription as it holds it, whether a pull would be refused, whether an on-chain plan is ours.
 */

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
 * - the plan is gone, ended, or deleted and created again with other terms (a ghost the
 *   subscription can no longer pull from): `authorization_gone`;
 * - the plan no longer lets the service key pull (its owner removed it): `transient`, the
 *   operator's or merchant's to fix, never the customer's fault (the charge waits).
 */
export function authorizationGone(
  at: { subscription: string; authority: string; plan: string },
  infos: {
    subscription: AccountInfo<Buffer> | null;
    authority: AccountInfo<Buffer> | null;
    plan: AccountInfo<Buffer> | null;
  },
  puller: string,
  /** The chain's unix time (its Clock sysvar). */
  now: bigint,
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
  const { terms } = subscription;
  if (
    plan.data.terms.createdAt !== terms.createdAt ||
    plan.data.terms.amount !== terms.amount ||
    plan.data.terms.periodHours !== terms.periodHours
  ) {
    return {
      reason: 'authorization_gone',
      message:
        'the plan was deleted and created again with other terms: the subscription is a ghost',
    };
  }
  if (plan.data.endTs !== 0n && now > plan.data.endTs) {
    return { reason: 'authorization_gone', message: `the plan ended at ${plan.data.endTs}` };
  }
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
