import { RpcBatcher } from './rpc-batcher';

describe('RpcBatcher', () => {
  it('answers keys asked for at once with one call, each key once, in chunks of maxBatch', async () => {
    const calls: string[][] = [];
    const batcher = new RpcBatcher((keys) => {
      calls.push(keys);
      return Promise.resolve(keys.map((k) => `value of ${k}`));
    }, 3);
    const keys = ['a', 'b', 'a', 'c', 'd'];
    const values = await Promise.all(keys.map((k) => batcher.load(k)));
    expect(values).toEqual(keys.map((k) => `value of ${k}`));
    expect(calls).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('takes keys asked for during a call in the next call', async () => {
    const calls: string[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const batcher = new RpcBatcher(async (keys) => {
      calls.push(keys);
      if (calls.length === 1) await gate;
      return keys.map((k) => k.toUpperCase());
    }, 10);
    const first = batcher.load('a');
    await new Promise((resolve) => setImmediate(resolve)); // the first call is under way
    const later = [batcher.load('b'), batcher.load('c')];
    release();
    expect(await first).toBe('A');
    expect(await Promise.all(later)).toEqual(['B', 'C']);
    expect(calls).toEqual([['a'], ['b', 'c']]);
  });

  it('rejects every caller of a failed call, and calls again for the next keys', async () => {
    let fail = true;
    const batcher = new RpcBatcher(
      (keys) => (fail ? Promise.reject(new Error('rpc down')) : Promise.resolve(keys)),
      10,
    );
    const failed = await Promise.allSettled([batcher.load('a'), batcher.load('b')]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await batcher.load('c')).toBe('c');
  });
});
