import { AccountRole, address } from '@solana/kit';
import type { ChainInstruction } from './chain.port';
import {
  identifySubscriptionsInstruction,
  parseCancelSubscriptionInstruction,
  parseRevokeDelegationInstruction,
  parseRevokeSubscriptionAuthorityInstruction,
  parseSubscribeInstruction,
  SubscriptionsInstruction,
  SUBSCRIPTIONS_PROGRAM_ADDRESS,
} from './subscriptions-client/generated';
import { planPda, subscriptionPda } from './subscriptions-program';

/**
 * What a transaction a customer signed says to the Subscriptions program (v0.4.0), read by the
 * parsers generated from its IDL: the confirm's subscribe and the portal's withdrawal.
 */

/** A recorded instruction as kit's instruction, which the official parsers take. */
function asKitInstruction(ix: ChainInstruction) {
  return {
    programAddress: address(ix.programId),
    accounts: ix.accounts.map((a) => ({
      address: address(a.address),
      role: a.signer
        ? a.writable
          ? AccountRole.WRITABLE_SIGNER
          : AccountRole.READONLY_SIGNER
        : a.writable
          ? AccountRole.WRITABLE
          : AccountRole.READONLY,
    })),
    data: ix.data,
  };
}

/** The program's instructions of a transaction, identified by the official client. */
function programInstructions(instructions: ChainInstruction[]) {
  const found: { kind: SubscriptionsInstruction; ix: ReturnType<typeof asKitInstruction> }[] = [];
  for (const ix of instructions) {
    if (ix.programId !== SUBSCRIPTIONS_PROGRAM_ADDRESS) continue;
    try {
      found.push({ kind: identifySubscriptionsInstruction(ix.data), ix: asKitInstruction(ix) });
    } catch {
      // not an instruction of this program's interface
    }
  }
  return found;
}

const signs = (role: AccountRole) =>
  role === AccountRole.READONLY_SIGNER || role === AccountRole.WRITABLE_SIGNER;

/**
 * The subscriber of a signed `subscribe` of the plan (merchant, plan id) among the instructions,
 * parsed by the official client: the subscriber signs, and the merchant, the plan PDA and the
 * subscription PDA are this plan's and this subscriber's. Null when there is none.
 */
/** The plan accounts of the signed `subscribe` instructions among `instructions`. */
export function subscribedPlansIn(instructions: ChainInstruction[]): string[] {
  const plans: string[] = [];
  for (const { kind, ix } of programInstructions(instructions)) {
    if (kind !== SubscriptionsInstruction.Subscribe) continue;
    try {
      const { accounts } = parseSubscribeInstruction(ix);
      if (signs(accounts.subscriber.role)) plans.push(accounts.planPda.address);
    } catch {
      continue; // too few accounts: the program refused it
    }
  }
  return plans;
}

export async function subscribeSignerIn(
  instructions: ChainInstruction[],
  plan: { merchant: string; planId: bigint },
): Promise<string | null> {
  const planAddress = await planPda(plan.merchant, plan.planId);
  for (const { kind, ix } of programInstructions(instructions)) {
    if (kind !== SubscriptionsInstruction.Subscribe) continue;
    let accounts: ReturnType<typeof parseSubscribeInstruction>['accounts'];
    try {
      accounts = parseSubscribeInstruction(ix).accounts;
    } catch {
      continue; // too few accounts: the program refused it
    }
    const subscriber = accounts.subscriber;
    if (!signs(subscriber.role)) continue;
    if (accounts.merchant.address !== plan.merchant || accounts.planPda.address !== planAddress) {
      continue;
    }
    if (
      accounts.subscriptionPda.address !== (await subscriptionPda(planAddress, subscriber.address))
    ) {
      continue;
    }
    return subscriber.address;
  }
  return null;
}

/**
 * Whether the instructions hold the subscriber's signed withdrawal of its subscription to the
 * plan: `cancel_subscription` of it (what the portal builds), the close of its subscription
 * account (`revoke_delegation`, possible once a cancelled subscription expired), or
 * `revoke_subscription_authority` of the plan's mint (which ends every subscription of that
 * wallet in the mint).
 */
export async function revokedIn(
  instructions: ChainInstruction[],
  plan: { merchant: string; planId: bigint; subscriber: string; mint: string },
): Promise<boolean> {
  const planAddress = await planPda(plan.merchant, plan.planId);
  const subscription = await subscriptionPda(planAddress, plan.subscriber);
  for (const { kind, ix } of programInstructions(instructions)) {
    try {
      if (kind === SubscriptionsInstruction.RevokeDelegation) {
        const { accounts } = parseRevokeDelegationInstruction(ix);
        if (
          signs(accounts.authority.role) &&
          accounts.authority.address === plan.subscriber &&
          accounts.delegationAccount.address === subscription
        ) {
          return true;
        }
      }
      if (kind === SubscriptionsInstruction.CancelSubscription) {
        const { accounts } = parseCancelSubscriptionInstruction(ix);
        if (
          signs(accounts.subscriber.role) &&
          accounts.subscriber.address === plan.subscriber &&
          accounts.planPda.address === planAddress &&
          accounts.subscriptionPda.address === subscription
        ) {
          return true;
        }
      }
      if (kind === SubscriptionsInstruction.RevokeSubscriptionAuthority) {
        const { accounts } = parseRevokeSubscriptionAuthorityInstruction(ix);
        if (
          signs(accounts.user.role) &&
          accounts.user.address === plan.subscriber &&
          accounts.tokenMint.address === plan.mint
        ) {
          return true;
        }
      }
    } catch {
      // too few accounts for the instruction: the program refused it, nothing was withdrawn
    }
  }
  return false;
}
