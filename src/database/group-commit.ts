import { EntityManager } from '@mikro-orm/postgresql';
import { inPgTransaction, type SqlTx } from './pg-transaction';

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
    private readonly em: EntityManager,
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
        results = await inPgTransaction(this.em, async (tx) => {
          const out: unknown[] = [];
          for (const unit of batch) out.push(await unit.work(tx));
          return out;
        });
      } catch {
        // One of them failed and took the others with it: each on its own now.
        for (const unit of batch) {
          await inPgTransaction(this.em, unit.work).then(unit.resolve, unit.reject);
        }
        continue;
      }
      batch.forEach((unit, i) => unit.resolve(results[i]));
    }
    this.draining = false;
  }
}
