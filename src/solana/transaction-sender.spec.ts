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
    getSignatureStatuses: (signatures: string[]) =>
      Promise.resolve({
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
