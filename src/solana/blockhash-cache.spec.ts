import type { Connection } from '@solana/web3.js';
import { BlockhashCache, ChainUnavailableError } from './blockhash-cache';

/** A connection that answers `getLatestBlockhashAndContext` as told: a value, a failure, or never. */
function rpc() {
  const state = { calls: 0, mode: 'ok' as 'ok' | 'down' | 'silent', n: 0 };
  const connection = {
    getLatestBlockhashAndContext: () => {
      state.calls++;
      if (state.mode === 'down') return Promise.reject(new Error('ECONNREFUSED'));
      if (state.mode === 'silent') return new Promise(() => undefined);
      state.n++;
      return Promise.resolve({
        context: { slot: 50 + state.n },
        value: { blockhash: `hash-${state.n}`, lastValidBlockHeight: 100 + state.n },
      });
    },
  } as unknown as Connection;
  return { connection, state };
}

describe('BlockhashCache', () => {
  let now = 1_000_000;
  const clock = () => now;
  const caches: BlockhashCache[] = [];
  const make = (connection: Connection) => {
    const cache = new BlockhashCache(connection, 'confirmed', {
      refreshMs: 60_000,
      maxAgeMs: 20_000,
      fetchTimeoutMs: 50,
      now: clock,
    });
    caches.push(cache);
    return cache;
  };
  afterEach(() => caches.splice(0).forEach((c) => c.close()));

  it('fetches once, then answers from the cache until the blockhash is 20 s old', async () => {
    const { connection, state } = rpc();
    const cache = make(connection);
    expect(await cache.get()).toEqual({ blockhash: 'hash-1', lastValidBlockHeight: 101, slot: 51 });
    now += 19_000;
    await cache.get();
    await cache.get();
    expect(state.calls).toBe(1);
    now += 2_000;
    expect((await cache.get()).blockhash).toBe('hash-2');
    expect(state.calls).toBe(2);
  });

  it('concurrent callers share one fetch', async () => {
    const { connection, state } = rpc();
    const cache = make(connection);
    await Promise.all(Array.from({ length: 10 }, () => cache.get()));
    expect(state.calls).toBe(1);
  });

  it.each(['down', 'silent'] as const)(
    'with the RPC %s: a clear ChainUnavailableError (503), and the next caller fails at once',
    async (mode) => {
      const { connection, state } = rpc();
      state.mode = mode;
      const cache = make(connection);
      await expect(cache.get()).rejects.toBeInstanceOf(ChainUnavailableError);
      await expect(cache.get()).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
      expect(state.calls).toBe(1);
      // A moment later it tries again, and recovers when the RPC does.
      now += 5_000;
      state.mode = 'ok';
      expect((await cache.get()).blockhash).toBe('hash-1');
    },
  );
});
