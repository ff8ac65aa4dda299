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

  it('asks each fetch for no more than the lanes free at that moment', async () => {
    // 3 lanes; each fetch hands out what it is asked for, 7 items in all, and records the ask.
    let next = 1;
    const asked: number[] = [];
    const done: number[] = [];
    await drainBatches(
      3,
      (room) => {
        asked.push(room);
        const items: number[] = [];
        while (items.length < room && next <= 7) items.push(next++);
        return Promise.resolve(items);
      },
      async (item) => {
        await tick();
        done.push(item);
      },
    );
    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(asked[0]).toBe(3); // every lane free at the start
    expect(Math.max(...asked)).toBe(3);
    expect(asked.slice(1).some((room) => room < 3)).toBe(true); // later, only the lanes set free
  });

  it('counts a lane as busy from the moment it is handed an item', async () => {
    // 2 lanes; the first fetch finds one item. The lane that takes it is working, so the
    // next fetch is for the one other lane, never for two (more leases than lanes).
    const asked: number[] = [];
    let fetches = 0;
    await drainBatches(
      2,
      (room) => {
        asked.push(room);
        return Promise.resolve(fetches++ === 0 ? [1] : []);
      },
      async () => {
        await tick();
      },
    );
    expect(asked[0]).toBe(2);
    expect(asked[1]).toBe(1);
  });

  it('with repollMs, once one lane finds the work done the others stop too: no fetch for lanes that are gone', async () => {
    // 2 lanes. One works on the only item while the other, finding nothing, waits to look
    // again; the first finishes, finds nothing more and stops. The waiting lane must not then
    // fetch for two (it would claim an item no lane is left to work on at once).
    const batches: number[][] = [[1], [], [], [2, 3]];
    const asked: number[] = [];
    const done: number[] = [];
    await drainBatches(
      2,
      (room) => {
        asked.push(room);
        return Promise.resolve(batches.shift() ?? []);
      },
      async (item) => {
        await tick();
        done.push(item);
      },
      { repollMs: 50 },
    );
    expect(done).toEqual([1]);
    expect(asked).toEqual([2, 1, 2]);
  });

  it('with minBatch, a free lane fetches only once that many lanes are free (or all are)', async () => {
    let next = 1;
    const asked: number[] = [];
    const done: number[] = [];
    await drainBatches(
      4,
      (room) => {
        asked.push(room);
        const items: number[] = [];
        while (items.length < room && next <= 12) items.push(next++);
        return Promise.resolve(items);
      },
      async (item) => {
        for (let i = 0; i < item % 3; i++) await tick(); // items finish at different times
        done.push(item);
      },
      { minBatch: 2 },
    );
    expect(done.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(asked.length).toBeGreaterThan(2);
    expect(Math.min(...asked)).toBeGreaterThanOrEqual(2);
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

  it('with repollMs, free lanes keep looking while a slow item runs: what comes later is worked on meanwhile', async () => {
    let finishSlow!: () => void;
    const slowDone = new Promise<void>((resolve) => (finishSlow = resolve));
    // Item 1 is slow; the fetches after it find nothing, then item 2 (due later), then nothing.
    const answers: number[][] = [[1], [], [], [2]];
    let fetches = 0;
    const done: number[] = [];
    const drained = drainBatches(
      2,
      () => Promise.resolve(answers[fetches++] ?? []),
      async (item) => {
        if (item === 1) await slowDone;
        done.push(item);
        if (item === 2) finishSlow(); // item 2 was worked on while item 1 still ran
      },
      { repollMs: 5 },
    );
    await drained;
    expect(done).toEqual([2, 1]);
    expect(fetches).toBeGreaterThanOrEqual(5); // it ended on an empty fetch after both
  });

  it('with repollMs, it still ends once every lane is idle and a fetch is empty', async () => {
    let fetches = 0;
    const done: number[] = [];
    await drainBatches(
      3,
      () => Promise.resolve([[1, 2], []][fetches++] ?? []),
      async (item) => {
        await tick();
        done.push(item);
      },
      { repollMs: 5 },
    );
    expect(done.sort()).toEqual([1, 2]);
  });

  it('with repollMs, it ends only on a fetch issued after the last item was done: finishing one can make more work', async () => {
    // Item 2 becomes available only once item 1 is done (a wallet's next charge after its
    // last one settled). The other lane's fetch, issued meanwhile, finds nothing and sleeps.
    let oneDone = false;
    let gave = 0;
    const done: number[] = [];
    await drainBatches(
      2,
      () => {
        if (gave === 0) return Promise.resolve([++gave]);
        if (gave === 1 && oneDone) return Promise.resolve([++gave]);
        return Promise.resolve([]);
      },
      async (item) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        done.push(item);
        if (item === 1) oneDone = true;
      },
      { repollMs: 200 },
    );
    expect(done).toEqual([1, 2]);
  });
});
