import type { FixedSizeDecoder } from '@solana/kit';
import { PublicKey } from '@solana/web3.js';
import {
  getFixedTransferEventDecoder,
  getPlanUpdatedEventDecoder,
  getRecurringTransferEventDecoder,
  getSubscriptionCancelledEventDecoder,
  getSubscriptionCreatedEventDecoder,
  getSubscriptionResumedEventDecoder,
  getSubscriptionTransferEventDecoder,
  SUBSCRIPTIONS_PROGRAM_ADDRESS,
  type FixedTransferEvent,
  type PlanUpdatedEvent,
  type RecurringTransferEvent,
  type SubscriptionCancelledEvent,
  type SubscriptionCreatedEvent,
  type SubscriptionResumedEvent,
  type SubscriptionTransferEvent,
} from './subscriptions-client/generated';

/*
 * The Subscriptions program (v0.4.0) reports what it did by invoking itself (`event_engine.rs`):
 * an inner instruction of the program whose only account is its `event_authority` PDA, signed by
 * the program (`invoke_signed` with the PDA's seeds), whose data is the 8-byte Anchor event tag
 * (`e445a52e51cb9a1d`), the event's number, then the event's fixed-size payload. The program's
 * `emit_event` handler refuses to run unless that account is the PDA and a signer, and only the
 * program can sign for its PDA; so such an instruction, inside a transaction that succeeded, was
 * emitted by the program. Bytes that only look like an event (in a top-level instruction, from
 * another program, naming another authority, cut short or padded) are not events.
 */

/** The program's `event_authority` PDA (seed "event_authority"). */
export const SUBSCRIPTIONS_EVENT_AUTHORITY = PublicKey.findProgramAddressSync(
  [Buffer.from('event_authority')],
  new PublicKey(SUBSCRIPTIONS_PROGRAM_ADDRESS),
)[0].toBase58();

/** An instruction with its program and accounts resolved to addresses. */
export interface ResolvedInstruction {
  programId: string;
  accounts: string[];
  data: Uint8Array;
}

/** An event the program emitted, by name. */
export type SubscriptionsProgramEvent =
  | { name: 'SubscriptionCreated'; event: SubscriptionCreatedEvent }
  | { name: 'SubscriptionCancelled'; event: SubscriptionCancelledEvent }
  | { name: 'SubscriptionTransfer'; event: SubscriptionTransferEvent }
  | { name: 'FixedTransfer'; event: FixedTransferEvent }
  | { name: 'RecurringTransfer'; event: RecurringTransferEvent }
  | { name: 'SubscriptionResumed'; event: SubscriptionResumedEvent }
  | { name: 'PlanUpdated'; event: PlanUpdatedEvent };

type EventOf<N extends SubscriptionsProgramEvent['name']> = Extract<
  SubscriptionsProgramEvent,
  { name: N }
>['event'];

/** Each event's decoder (which checks the tag and the event's number) by the event's number. */
const DECODERS: { [N in SubscriptionsProgramEvent['name']]: FixedSizeDecoder<EventOf<N>> } = {
  SubscriptionCreated: getSubscriptionCreatedEventDecoder(),
  SubscriptionCancelled: getSubscriptionCancelledEventDecoder(),
  SubscriptionTransfer: getSubscriptionTransferEventDecoder(),
  FixedTransfer: getFixedTransferEventDecoder(),
  RecurringTransfer: getRecurringTransferEventDecoder(),
  SubscriptionResumed: getSubscriptionResumedEventDecoder(),
  PlanUpdated: getPlanUpdatedEventDecoder(),
};
/** The events in the order of their numbers (`EventDiscriminators` in the program). */
const BY_NUMBER = [
  'SubscriptionCreated',
  'SubscriptionCancelled',
  'SubscriptionTransfer',
  'FixedTransfer',
  'RecurringTransfer',
  'SubscriptionResumed',
  'PlanUpdated',
] as const satisfies readonly SubscriptionsProgramEvent['name'][];

const EVENT_TAG = Uint8Array.from([0xe4, 0x45, 0xa5, 0x2e, 0x51, 0xcb, 0x9a, 0x1d]);

/**
 * The events the program emitted, in order, from a successful transaction's inner instructions
 * (every inner instruction of every top-level one, as the chain recorded them). Only the program's
 * self-CPI with its event authority as the one account counts; the payload must be exactly the
 * event's size (as the program's own `load` requires). Never give it top-level instructions:
 * anyone can put event bytes in those.
 */
export function programEvents(inner: readonly ResolvedInstruction[]): SubscriptionsProgramEvent[] {
  const events: SubscriptionsProgramEvent[] = [];
  for (const ix of inner) {
    const event = eventOf(ix);
    if (event) events.push(event);
  }
  return events;
}

/** The transfer events among `events`: each a pull by a puller of a subscription. */
export function subscriptionTransfers(
  events: readonly SubscriptionsProgramEvent[],
): SubscriptionTransferEvent[] {
  return events.flatMap((e) => (e.name === 'SubscriptionTransfer' ? [e.event] : []));
}

function eventOf(ix: ResolvedInstruction): SubscriptionsProgramEvent | null {
  if (ix.programId !== SUBSCRIPTIONS_PROGRAM_ADDRESS) return null;
  if (ix.accounts.length !== 1 || ix.accounts[0] !== SUBSCRIPTIONS_EVENT_AUTHORITY) return null;
  const data = ix.data;
  if (data.length <= EVENT_TAG.length) return null;
  if (EVENT_TAG.some((byte, i) => data[i] !== byte)) return null;
  const name = BY_NUMBER[data[EVENT_TAG.length]];
  if (name === undefined) return null;
  const decoder = DECODERS[name] as FixedSizeDecoder<EventOf<typeof name>>;
  if (data.length !== decoder.fixedSize) return null;
  return { name, event: decoder.decode(data) } as SubscriptionsProgramEvent;
}
