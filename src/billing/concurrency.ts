/**
 * Works through items fetched in batches, `limit` at a time, keeping the lanes full: whenever a
 * lane is free, `fetch(room)` is asked for at most as many items as there are lanes with nothing
 * to do (`room`), while the other lanes are still working, not after the slowest item of the
 * last batch. What is fetched is worked on at once: items (charge attempts, each with a lease)
 * never wait in a queue for a lane. Ends when a fetch returns nothing and every item fetched has
 * been worked on. A failed fetch ends it too: the items already fetched are worked on, then it
 * rejects with the fetch's error. `work` handles its own errors.
 *
 * `minBatch`: while other lanes are working, a free lane fetches only once at least this many
 * lanes are free (a fetch costs about the same whatever its size: a claim scans past every
 * attempt in flight); with every lane idle it fetches at once.
 *
 * `repollMs`: after a fetch returned nothing, lanes that are free look again every `repollMs`
 * for as long as another lane is still working, rather than waiting for it idle: one slow item
 * (a charge waiting a minute for its transaction's fate) then never holds up what became due,
 * or was left by a dead instance, meanwhile. And it ends only on a fetch that found nothing
 * although it was issued after the last item was done (work can make more work).
 */
export async function drainBatches<T>(
  limit: number,
  fetch: (room: number) => Promise<T[]>,
  work: (item: T) => Promise<void>,
  options: { repollMs?: number; minBatch?: number } = {},
): Promise<void> {
  const minBatch = Math.min(Math.max(options.minBatch ?? 1, 1), limit);
  let busy = 0;
  /** Items worked on so far, and how many had been when the last empty fetch was issued. */
  let done = 0;
  let emptyAt = -1;
  const waiting: T[] = [];
  let exhausted = false;
  let failure: { error: unknown } | undefined;
  let fetching: Promise<void> | undefined;
  /** A lane found the work done: the others stop too, rather than fetch for lanes now gone. */
  let finished = false;
  /** One timer for every lane looking again: they wake together and share one fetch. */
  let pause: Promise<void> | undefined;
  /** Settles when a lane next finishes an item. */
  let freed = signal();
  const repoll = (ms: number): Promise<void> =>
    (pause ??= new Promise<void>((resolve) => setTimeout(resolve, ms)).finally(
      () => (pause = undefined),
    ));
  const refill = (room: number): Promise<void> => {
    if (fetching) return fetching;
    const issuedAt = done;
    fetching = fetch(room)
      .then(
        (items) => {
          if (items.length === 0) {
            exhausted = true;
            emptyAt = issuedAt;
          }
          waiting.push(...items);
        },
        (error: unknown) => {
          failure = { error };
          exhausted = true;
        },
      )
      .finally(() => (fetching = undefined));
    return fetching;
  };

  const next = async (): Promise<T | undefined> => {
    for (;;) {
      if (finished && waiting.length === 0) return undefined;
      // This lane is free (not counted in `busy`), so there is room for one item at least.
      const room = limit - busy - waiting.length;
      if (!exhausted && room > 0) {
        if (room < minBatch && busy > 0 && waiting.length === 0 && !fetching) {
          // Too few lanes free to be worth a fetch (each costs the same whatever its size):
          // wait until another lane is done.
          await freed.promise;
          continue;
        }
        // Fetch for the free lanes; wait for it only when nothing is left to work on.
        const fetched = refill(room);
        if (waiting.length === 0) await fetched;
      }
      if (waiting.length > 0) {
        // Counted as busy the moment it is handed out, so no other lane sees this one as free.
        busy++;
        return waiting.shift();
      }
      if (!exhausted) continue;
      if (failure || options.repollMs === undefined) return undefined;
      if (busy === 0) {
        // Nothing is being worked on. Done, unless an item finished after the fetch that found
        // nothing was issued: what it settled may have made more work (a wallet's next charge).
        if (emptyAt === done) {
          finished = true;
          return undefined;
        }
        exhausted = false;
        continue;
      }
      // Others are still working: look again in a moment rather than stop.
      await repoll(options.repollMs);
      exhausted = failure !== undefined;
    }
  };

  await Promise.all(
    Array.from({ length: limit }, async () => {
      for (let item = await next(); item !== undefined; item = await next()) {
        try {
          await work(item);
        } finally {
          busy--;
          done++;
          const was = freed;
          freed = signal();
          was.resolve();
        }
      }
    }),
  );
  if (failure) throw failure.error;
}

function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
