interface Waiter<V> {
  resolve: (value: V) => void;
  reject: (error: unknown) => void;
}

/**
 * One RPC call for what many callers ask at once (statuses of the transactions being settled,
 * the token accounts of the charges being signed): a key asked for while a call is under way
 * waits for the next, which takes every key waiting then, `maxBatch` per call. Callers asking
 * for the same key share its answer. With 64 charges in flight that is one call per round, not
 * 64. `call` returns one value per key, in the keys' order.
 */
export class RpcBatcher<V> {
  private waiting = new Map<string, Waiter<V>[]>();
  private draining = false;

  constructor(
    private readonly call: (keys: string[]) => Promise<V[]>,
    private readonly maxBatch: number,
  ) {}

  load(key: string): Promise<V> {
    return new Promise<V>((resolve, reject) => {
      const waiters = this.waiting.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else this.waiting.set(key, [{ resolve, reject }]);
      if (!this.draining) {
        this.draining = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.size > 0) {
      const batch = this.waiting;
      this.waiting = new Map();
      const keys = [...batch.keys()];
      const chunks: string[][] = [];
      for (let i = 0; i < keys.length; i += this.maxBatch) {
        chunks.push(keys.slice(i, i + this.maxBatch));
      }
      await Promise.all(
        chunks.map(async (chunk) => {
          try {
            const values = await this.call(chunk);
            chunk.forEach((key, i) => batch.get(key)!.forEach((w) => w.resolve(values[i])));
          } catch (error) {
            chunk.forEach((key) => batch.get(key)!.forEach((w) => w.reject(error)));
          }
        }),
      );
    }
    this.draining = false;
  }
}
