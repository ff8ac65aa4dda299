/**
 * Works through items fetched in batches, `limit` at a time, keeping the lanes full: the next
 * batch is fetched while the current one is still being worked on (once fewer than `limit` are
 * waiting), not after its slowest item. Ends when a fetch returns nothing and every item
 * fetched has been worked on. A failed fetch ends it too: the items already fetched are worked
 * on, then it rejects with the fetch's error. `work` handles its own errors.
 */
export async function drainBatches<T>(
  limit: number,
  fetch: () => Promise<T[]>,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const waiting: T[] = [];
  let exhausted = false;
  let failure: { error: unknown } | undefined;
  let fetching: Promise<void> | undefined;
  const refill = (): Promise<void> =>
    (fetching ??= fetch()
      .then(
        (items) => {
          if (items.length === 0) exhausted = true;
          waiting.push(...items);
        },
        (error: unknown) => {
          failure = { error };
          exhausted = true;
        },
      )
      .finally(() => (fetching = undefined)));

  const next = async (): Promise<T | undefined> => {
    for (;;) {
      if (!exhausted && waiting.length < limit) {
        // Low: fetch ahead, and wait for it only when nothing is left to work on.
        const fetched = refill();
        if (waiting.length === 0) await fetched;
      }
      if (waiting.length > 0) return waiting.shift();
      if (exhausted) return undefined;
    }
  };

  await Promise.all(
    Array.from({ length: limit }, async () => {
      for (let item = await next(); item !== undefined; item = await next()) await work(item);
    }),
  );
  if (failure) throw failure.error;
}
