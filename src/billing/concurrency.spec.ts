import { drainBatches } from './concurrency';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('drainBatches', () => {
  it('works through every batch once, at most `limit` at a time, until a fetch is empty', async () => {
    const batches = [[1, 2, 3, 4, 5], [6, 7, 8], [9], []];
    let fetches = 0;
    let running = 0;
    let peak = 0;
    const done: number[] = [];
    await drainBatches(
      3,
      () => Promise.resolve(batches[fetches++] ?? []),
      async (item) => {
        running++;
        peak = Math.max(peak, running);
        await tick();
        done.push(item);
        running--;
      },
    );
    expect(done.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(peak).toBe(3);
    expect(fetches).toBe(4); // the empty one ends it; nothing is fetched after
  });

  it('fetches the next batch while the current one is still being worked on', async () => {
    // Item 1 ends only once item 3, of the next batch, has started: batch after batch (the next
    // fetched only when the slowest item of the last is done) would never get there.
    let started3!: () => void;
    const third = new Promise<void>((resolve) => (started3 = resolve));
    let fetches = 0;
    const outcome: string[] = [];
    await drainBatches(
      2,
      () => Promise.resolve([[1, 2], [3], []][fetches++] ?? []),
      async (item) => {
        if (item === 3) started3();
        if (item !== 1) return;
        const waited = await Promise.race([
          third.then(() => 'item 3 started meanwhile'),
          new Promise((resolve) => setTimeout(() => resolve('item 3 never started'), 2000)),
        ]);
        outcome.push(String(waited));
      },
    );
    expect(outcome).toEqual(['item 3 started meanwhile']);
  });

  it('works on what it fetched, then rejects with a failed fetch', async () => {
    const done: number[] = [];
    let fetches = 0;
    await expect(
      drainBatches(
        2,
        () =>
          fetches++ === 0 ? Promise.resolve([1, 2, 3]) : Promise.reject(new Error('database down')),
        async (item) => {
          await tick();
          done.push(item);
        },
      ),
    ).rejects.toThrow('database down');
    expect(done.sort()).toEqual([1, 2, 3]);
  });

  it('does nothing when the first fetch is empty', async () => {
    const work = jest.fn();
    await drainBatches(4, () => Promise.resolve([]), work);
    expect(work).not.toHaveBeenCalled();
  });
});
