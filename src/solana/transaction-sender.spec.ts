import type { Connection } from '@solana/web3.js';
import { RpcUnavailableError } from './rpc-transport';
import { TransactionSender } from './transaction-sender';

/**
 * A transport whose batches of sends are answered per transaction (`refuse`: signatures that do
 * not verify), or fail whole (`down`: no URL answered), and a connection whose statuses say every
 * transaction landed.
 */
function fakeChain(options: { refuse?: string; down?: boolean }) {
  const batches: string[][] = [];
  const rpc = {
    batch(calls: { method: string; params: unknown[] }[]) {
      batches.push(calls.map((c) => `${c.method}:${c.params[0] as string}`));
      if (options.down) {
        return Promise.reject(new RpcUnavailableError(['URL 1: ECONNREFUSED']));
      }
      return Promise.resolve(
        calls.map((c, id) =>
          c.params[0] === options.refuse
            ? {
                id,
                error: { code: -32003, message: 'Transaction signature verification failure' },
              }
            : { id, result: `sig-of-${c.params[0] as string}` },
        ),
      );
    },
  };
  const connection = {
    getBlockHeight: () => Promise.resolve(10),
    getEpochInfo: () => Promise.resolve({ absoluteSlot: 10, blockHeight: 10 }),
    getSignatureStatuses: (signatures: string[]) =>
      Promise.resolve({
        context: { slot: 12 },
        value: signatures.map((s) =>
          s.endsWith('bad')
            ? null
            : { slot: 5, confirmations: 1, err: null, confirmationStatus: 'confirmed' },
        ),
      }),
  };
  return { connection: connection as unknown as Connection, rpc, batches };
}

const tx = (name: string) => ({ signature: name, transaction: name, lastValidBlockHeight: 100 });

describe('TransactionSender: sends in flight together go in one batch', () => {
  it('sends them in one batch and reads each its own answer', async () => {
    const { connection, rpc, batches } = fakeChain({ refuse: 'c-bad' });
    const sender = new TransactionSender(connection, rpc, 'confirmed', 5_000);
    const outcomes = await Promise.all(
      ['a', 'b', 'c-bad'].map((name) => sender.sendAndConfirm(tx(name))),
    );
    expect(outcomes[0]).toMatchObject({ state: 'succeeded', slot: 5 });
    expect(outcomes[1]).toMatchObject({ state: 'succeeded', slot: 5 });
    // Its own answer (signatures that do not verify), not a neighbour's.
    expect(outcomes[2]).toMatchObject({ state: 'rejected', replaceable: true });
    expect(batches).toEqual([['sendTransaction:a', 'sendTransaction:b', 'sendTransaction:c-bad']]);
  });

  it('settles by signature each send of a batch no RPC URL took, and never sends it again', async () => {
    const { connection, rpc, batches } = fakeChain({ down: true });
    const sender = new TransactionSender(connection, rpc, 'confirmed', 5_000);
    const outcomes = await Promise.all(['a', 'b'].map((name) => sender.sendAndConfirm(tx(name))));
    // The node may have them: their statuses say they landed.
    expect(outcomes.map((o) => o.state)).toEqual(['succeeded', 'succeeded']);
    expect(batches).toEqual([['sendTransaction:a', 'sendTransaction:b']]);
  });
});

/**
 * A node that knows nothing of a transaction: the finalized tip is at slot 200 (height 150, past
 * the transaction's last valid height 100); the node answering statuses has reached `seenThrough`;
 * `getTransaction` finds `landed` (or nothing).
 */
function silentNode(seenThrough: number, landed: { slot: number; err: unknown } | null = null) {
  const lookups: string[] = [];
  const connection = {
    getEpochInfo: () => Promise.resolve({ absoluteSlot: 200, blockHeight: 150 }),
    getBlockHeight: () => Promise.resolve(150),
    getSignatureStatuses: (signatures: string[]) =>
      Promise.resolve({ context: { slot: seenThrough }, value: signatures.map(() => null) }),
    getTransaction: (signature: string) => {
      lookups.push(signature);
      return Promise.resolve(landed && { slot: landed.slot, meta: { err: landed.err } });
    },
  };
  return { connection: connection as unknown as Connection, lookups };
}

/** Expiry reads never send: a transport that would fail the test if asked. */
const noSends = {
  batch: () => Promise.reject(new Error('nothing is sent to settle a transaction')),
};

describe('TransactionSender: expired takes two answers from a node that has seen far enough', () => {
  it('a status read by a node behind the finalized tip says nothing: pending, not expired', async () => {
    const { connection, lookups } = silentNode(150);
    const sender = new TransactionSender(connection, noSends, 'confirmed');
    expect(await sender.outcome('sig', 100)).toEqual({ state: 'pending' });
    expect(lookups).toEqual([]);
  });

  it('a node past the tip that knows nothing, and a lookup that finds nothing: expired', async () => {
    const { connection, lookups } = silentNode(205);
    const sender = new TransactionSender(connection, noSends, 'confirmed');
    expect(await sender.outcome('sig', 100)).toEqual({ state: 'expired' });
    expect(lookups).toEqual(['sig']);
  });

  it('a status read that missed it, but the lookup finds it landed: succeeded (or failed)', async () => {
    const landed = new TransactionSender(
      silentNode(205, { slot: 90, err: null }).connection,
      noSends,
      'confirmed',
    );
    expect(await landed.outcome('sig', 100)).toEqual({
      state: 'succeeded',
      slot: 90,
      finalized: false,
    });
    const failed = new TransactionSender(
      silentNode(205, { slot: 91, err: { InstructionError: [0, 'Custom'] } }).connection,
      noSends,
      'confirmed',
    );
    expect(await failed.outcome('sig', 100)).toMatchObject({ state: 'failed', slot: 91 });
  });

  it('while the chain is not past its last valid height: pending, whatever the node saw', async () => {
    const { connection } = silentNode(205);
    const sender = new TransactionSender(connection, noSends, 'confirmed');
    expect(await sender.outcome('sig', 150)).toEqual({ state: 'pending' });
  });
});
