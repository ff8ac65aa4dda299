import type { Connection } from '@solana/web3.js';
import { TransactionSender } from './transaction-sender';

interface Request {
  id: number;
  method: string;
  params: unknown[];
}

/**
 * A connection whose JSON-RPC client answers batches in reverse order (a server may), and whose
 * statuses say every transaction landed. `batches` false: the server refuses batches.
 */
function fakeConnection(options: { batches: boolean | 'items refused'; refuse?: string }) {
  let nextId = 0;
  const seen = { batchCalls: 0, singleCalls: 0, batchSizes: [] as number[] };
  const answer = (r: Request) =>
    (r.params[0] as string) === options.refuse
      ? { id: r.id, error: { code: -32003, message: 'Transaction signature verification failure' } }
      : { id: r.id, result: `sig-of-${r.params[0] as string}` };
  const connection = {
    _rpcClient: {
      request(method: string | Request[], params: unknown) {
        if (typeof method === 'string') return { id: nextId++, method, params } as Request;
        const callback = params as (error: unknown, answers?: unknown[]) => void;
        seen.batchCalls++;
        seen.batchSizes.push(method.length);
        setImmediate(() =>
          options.batches === 'items refused'
            ? callback(
                null,
                method.map((r) => ({
                  id: r.id,
                  error: { code: -32600, message: 'batch requests are not allowed on this plan' },
                })),
              )
            : options.batches
              ? callback(null, [...method].reverse().map(answer))
              : callback(new Error('400: batch requests are not supported')),
        );
        return undefined;
      },
    },
    _rpcRequest(method: string, params: unknown[]) {
      seen.singleCalls++;
      return Promise.resolve(answer({ id: nextId++, method, params }));
    },
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
  return { connection: connection as unknown as Connection, seen };
}

const tx = (name: string) => ({ signature: name, transaction: name, lastValidBlockHeight: 100 });

describe('TransactionSender: sends in flight together go in one batch', () => {
  it('matches each answer to its transaction by id, in whatever order the batch comes back', async () => {
    const { connection, seen } = fakeConnection({ batches: true, refuse: 'c-bad' });
    const sender = new TransactionSender(connection, 'confirmed', 5_000);
    const outcomes = await Promise.all(
      ['a', 'b', 'c-bad'].map((name) => sender.sendAndConfirm(tx(name))),
    );
    expect(outcomes[0]).toMatchObject({ state: 'succeeded', slot: 5 });
    expect(outcomes[1]).toMatchObject({ state: 'succeeded', slot: 5 });
    // Its own answer (signatures that do not verify), not a neighbour's.
    expect(outcomes[2]).toMatchObject({ state: 'rejected', replaceable: true });
    expect(seen).toMatchObject({ batchCalls: 1, singleCalls: 0, batchSizes: [3] });
  });

  it('sends one by one when the server refuses batches', async () => {
    const { connection, seen } = fakeConnection({ batches: false, refuse: 'b-bad' });
    const sender = new TransactionSender(connection, 'confirmed', 5_000);
    const outcomes = await Promise.all(
      ['a', 'b-bad'].map((name) => sender.sendAndConfirm(tx(name))),
    );
    expect(outcomes[0]).toMatchObject({ state: 'succeeded' });
    expect(outcomes[1]).toMatchObject({ state: 'rejected', replaceable: true });
    expect(seen).toMatchObject({ batchCalls: 1, singleCalls: 2 });
  });

  it('sends on its own each item the server refused as a request', async () => {
    const { connection, seen } = fakeConnection({ batches: 'items refused' });
    const sender = new TransactionSender(connection, 'confirmed', 5_000);
    const outcomes = await Promise.all(['a', 'b'].map((name) => sender.sendAndConfirm(tx(name))));
    expect(outcomes.map((o) => o.state)).toEqual(['succeeded', 'succeeded']);
    expect(seen).toMatchObject({ batchCalls: 1, singleCalls: 2 });
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

describe('TransactionSender: expired takes two answers from a node that has seen far enough', () => {
  it('a status read by a node behind the finalized tip says nothing: pending, not expired', async () => {
    const { connection, lookups } = silentNode(150);
    const sender = new TransactionSender(connection, 'confirmed');
    expect(await sender.outcome('sig', 100)).toEqual({ state: 'pending' });
    expect(lookups).toEqual([]);
  });

  it('a node past the tip that knows nothing, and a lookup that finds nothing: expired', async () => {
    const { connection, lookups } = silentNode(205);
    const sender = new TransactionSender(connection, 'confirmed');
    expect(await sender.outcome('sig', 100)).toEqual({ state: 'expired' });
    expect(lookups).toEqual(['sig']);
  });

  it('a status read that missed it, but the lookup finds it landed: succeeded (or failed)', async () => {
    const landed = new TransactionSender(
      silentNode(205, { slot: 90, err: null }).connection,
      'confirmed',
    );
    expect(await landed.outcome('sig', 100)).toEqual({
      state: 'succeeded',
      slot: 90,
      finalized: false,
    });
    const failed = new TransactionSender(
      silentNode(205, { slot: 91, err: { InstructionError: [0, 'Custom'] } }).connection,
      'confirmed',
    );
    expect(await failed.outcome('sig', 100)).toMatchObject({ state: 'failed', slot: 91 });
  });

  it('while the chain is not past its last valid height: pending, whatever the node saw', async () => {
    const { connection } = silentNode(205);
    const sender = new TransactionSender(connection, 'confirmed');
    expect(await sender.outcome('sig', 150)).toEqual({ state: 'pending' });
  });
});
