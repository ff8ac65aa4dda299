import { address } from '@solana/kit';
import { Keypair } from '@solana/web3.js';
import {
  findEventAuthorityPda,
  getPlanUpdatedEventEncoder,
  getSubscriptionCancelledEventEncoder,
  getSubscriptionCreatedEventEncoder,
  getSubscriptionTransferEventEncoder,
  SUBSCRIPTIONS_PROGRAM_ADDRESS,
} from './subscriptions-client/generated';
import {
  programEvents,
  ResolvedInstruction,
  SUBSCRIPTIONS_EVENT_AUTHORITY,
  subscriptionTransfers,
} from './subscriptions-program-events';

const key = () => address(Keypair.generate().publicKey.toBase58());

const transfer = {
  subscription: key(),
  plan: key(),
  delegator: key(),
  mint: key(),
  amount: 10_000_000n,
  periodStartTs: 1_790_000_000n,
  periodEndTs: 1_792_592_000n,
  amountPulledInPeriod: 10_000_000n,
  receiver: key(),
  receiverTokenAccount: key(),
  puller: key(),
};
const transferBytes = new Uint8Array(getSubscriptionTransferEventEncoder().encode(transfer));

/** The program's event self-CPI carrying `data`, as the chain records it. */
const emitted = (data: Uint8Array): ResolvedInstruction => ({
  programId: SUBSCRIPTIONS_PROGRAM_ADDRESS,
  accounts: [SUBSCRIPTIONS_EVENT_AUTHORITY],
  data,
});

describe('programEvents: the Subscriptions program self-CPI events', () => {
  it('the event authority is the PDA the generated client derives', async () => {
    const [pda] = await findEventAuthorityPda();
    expect(SUBSCRIPTIONS_EVENT_AUTHORITY).toBe(pda);
  });

  it('the transfer event on the wire: the Anchor tag, event number 2, then 256 bytes', () => {
    expect(Buffer.from(transferBytes.subarray(0, 9)).toString('hex')).toBe('e445a52e51cb9a1d02');
    expect(transferBytes.length).toBe(9 + 4 * 32 + 4 * 8 + 3 * 32);
  });

  it('decodes a transfer, a created and a cancelled event in order, each with its fields', () => {
    const created = {
      plan: key(),
      subscriber: key(),
      mint: key(),
      createdTs: 1_790_000_000n,
      payer: key(),
    };
    const cancelled = { plan: key(), subscriber: key(), expiresAtTs: 1_792_592_000n };
    const events = programEvents([
      emitted(new Uint8Array(getSubscriptionCreatedEventEncoder().encode(created))),
      emitted(transferBytes),
      emitted(new Uint8Array(getSubscriptionCancelledEventEncoder().encode(cancelled))),
    ]);
    expect(events).toEqual([
      { name: 'SubscriptionCreated', event: created },
      { name: 'SubscriptionTransfer', event: transfer },
      { name: 'SubscriptionCancelled', event: cancelled },
    ]);
    expect(subscriptionTransfers(events)).toEqual([transfer]);
  });

  it('decodes a plan update (the event v0.4.0 emits from update_plan)', () => {
    const pullers = [key(), key(), key(), key()];
    const updated = { plan: key(), owner: key(), status: 1, endTs: 0n, pullers };
    const events = programEvents([
      emitted(new Uint8Array(getPlanUpdatedEventEncoder().encode(updated))),
    ]);
    expect(events).toEqual([{ name: 'PlanUpdated', event: updated }]);
  });

  it('ignores the same bytes from another program (a forged event)', () => {
    expect(programEvents([{ ...emitted(transferBytes), programId: key() }])).toEqual([]);
  });

  it('ignores the program with an account other than its event authority', () => {
    expect(programEvents([{ ...emitted(transferBytes), accounts: [key()] }])).toEqual([]);
  });

  it('ignores the program with the authority and another account', () => {
    const both = [SUBSCRIPTIONS_EVENT_AUTHORITY, key()];
    expect(programEvents([{ ...emitted(transferBytes), accounts: both }])).toEqual([]);
    expect(programEvents([{ ...emitted(transferBytes), accounts: [] }])).toEqual([]);
  });

  it('ignores a payload cut short or padded (the program emits the exact size)', () => {
    expect(programEvents([emitted(transferBytes.subarray(0, transferBytes.length - 1))])).toEqual(
      [],
    );
    expect(programEvents([emitted(Uint8Array.from([...transferBytes, 0]))])).toEqual([]);
    expect(programEvents([emitted(transferBytes.subarray(0, 9))])).toEqual([]);
    expect(programEvents([emitted(new Uint8Array())])).toEqual([]);
  });

  it('ignores another tag or an unknown event number', () => {
    const badTag = Uint8Array.from(transferBytes);
    badTag[3] ^= 0xff;
    const unknown = Uint8Array.from(transferBytes);
    unknown[8] = 7;
    expect(programEvents([emitted(badTag), emitted(unknown)])).toEqual([]);
  });

  it('an instruction of the program that is not an event (a transfer_subscription) is no event', () => {
    expect(programEvents([emitted(Uint8Array.from([8, ...transferBytes.subarray(1)]))])).toEqual(
      [],
    );
  });
});
