import type { UnexecutedEffects } from '@stablecoin-billing/localnet';
import { address } from '@solana/kit';
import {
  getSubscriptionTransferEventEncoder,
  SUBSCRIPTIONS_PROGRAM_ADDRESS,
} from '../../src/solana/subscriptions-client/generated';
import { SUBSCRIPTIONS_EVENT_AUTHORITY } from '../../src/solana/subscriptions-program-events';

type InnerInstruction = NonNullable<
  UnexecutedEffects['innerInstructions']
>[number]['instructions'][number];

/** A pull as the program's `SubscriptionTransferEvent` reports it. */
export interface PullEvent {
  subscription: string;
  plan: string;
  delegator: string;
  mint: string;
  amount: bigint;
  receiver: string;
  receiverTokenAccount: string;
  puller: string;
}

/** The event's bytes, by the encoder generated from the program's IDL. */
export function transferEventBytes(e: PullEvent): Uint8Array {
  return new Uint8Array(
    getSubscriptionTransferEventEncoder().encode({
      subscription: address(e.subscription),
      plan: address(e.plan),
      delegator: address(e.delegator),
      mint: address(e.mint),
      amount: e.amount,
      periodStartTs: 1_790_000_000n,
      periodEndTs: 1_792_592_000n,
      amountPulledInPeriod: e.amount,
      receiver: address(e.receiver),
      receiverTokenAccount: address(e.receiverTokenAccount),
      puller: address(e.puller),
    }),
  );
}

/**
 * The program's event self-CPI carrying the transfer event (v0.4.0 `emit_event`: the program
 * invoking itself, its `event_authority` PDA the one account), as `recordUnexecuted` records it.
 * `forge` changes what a forger would: the program or the account.
 */
export function eventSelfCpi(
  e: PullEvent,
  forge: { programId?: string; authority?: string } = {},
): InnerInstruction {
  return {
    programId: forge.programId ?? SUBSCRIPTIONS_PROGRAM_ADDRESS,
    accounts: [forge.authority ?? SUBSCRIPTIONS_EVENT_AUTHORITY],
    data: transferEventBytes(e),
  };
}
