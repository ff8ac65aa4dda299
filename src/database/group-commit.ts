import type { SqlTx } from './pg-transaction';

/** Where a group's transactions run (the `Db`). */
export interface Transactions {
  transaction<T>(work: (tx: SqlTx) => Promise<T>): Promise<T>;
}

interface Unit {
  work: (tx: SqlTx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: units of work that arrive while a transaction is committing share the next one
 * (up to `max`), so many small writes cost one BEGIN and one COMMIT. Each unit is all or nothing
 * as if alone: when one fails, the shared transaction rolls back and every unit of it runs again
 * in a transaction of its own, so only the failing one fails. A unit may therefore run twice;
 * like any `inPgTransaction` work it must have no effect outside its transaction.
 */
export class GroupCommit {
  private waiting: Unit[] = [];
  private draining = false;

  constructor(
    private readonly db: Transactions,
    private readonly max = 32,
  ) {}

  run<T>(work: (tx: SqlTx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.draining) {
        this.draining = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.max);
      let results: unknown[] | undefined;
      try {
        results = await this.db.transaction(async (tx) => {
          const out: unknown[] = [];
          for (const unit of batch) out.push(await unit.work(tx));
          return out;
        });
      } catch {
        // One of them failed and took the others with it: each on its own now.
        for (const unit of batch) {
          await this.db.transaction(unit.work).then(unit.resolve, unit.reject);
        }
        continue;
      }
      batch.forEach((unit, i) => unit.resolve(results[i]));
    }
    this.draining = false;
  }
}
