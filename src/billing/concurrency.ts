/**
 * Runs `work` over `items` with at most `limit` in flight, in order of start. Resolves when all
 * have finished; a rejection is not caught here (callers handle their own errors per item).
 */
export async function mapWithConcurrency<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]);
  });
  await Promise.all(lanes);
}
