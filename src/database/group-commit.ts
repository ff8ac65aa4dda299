import type { SqlTx } from './pg-transaction';

/** Where a group's transactions run (the `Db`). */
export interface Transactions {
  transaction<T>(work: (tx: SqlTx) => Promise<T>): Promise<T>;
}

interface Waiting<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

/** Runs one group's work: in a transaction of its own, or as statements that commit alone. */
type Runner = <T>(work: (ex: SqlTx) => Promise<T>) => Promise<T>;

/**
 * Like items that arrive while a group is being written go together in the next group (up to
 * `max`), and `work(ex, items)` writes a whole group at once, so it can write each kind of row of
 * all the items in one multi-row statement rather than one statement per item; it returns one
 * result per item, in their order. When a group fails, each of its items is written again alone
 * (`work(ex, [item])`), so only the failing one fails.
 */
class Batches<I, O> {
  private waiting: Waiting<I, O>[] = [];
  private draining = false;

  constructor(
    private readonly runner: Runner,
    private readonly work: (ex: SqlTx, items: I[]) => Promise<O[]>,
    private readonly max: number,
  ) {}

  run(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.draining) {
        this.draining = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.max);
      let results: O[] | undefined;
      try {
        results = await this.runner((ex) =>
          this.work(
            ex,
            batch.map((w) => w.item),
          ),
        );
      } catch {
        // One of them failed and took the others with it: each on its own now.
        for (const waiting of batch) {
          await this.runner(async (ex) => (await this.work(ex, [waiting.item]))[0]).then(
            waiting.resolve,
            waiting.reject,
          );
        }
        continue;
      }
      batch.forEach((waiting, i) => waiting.resolve(results[i]));
    }
    this.draining = false;
  }
}

/**
 * Group commit of like items written together (`Batches`): each group in one transaction, so
 * all of a group commits or none of it, at the cost of one BEGIN and one COMMIT. Each item is
 * all or nothing as if alone: a group that fails rolls back and its items run again, each in a
 * transaction of its own. An item may therefore be written twice; like any `inPgTransaction`
 * work, `work` must have no effect outside its transaction.
 */
export class BatchCommit<I, O> extends Batches<I, O> {
  constructor(db: Transactions, work: (tx: SqlTx, items: I[]) => Promise<O[]>, max = 32) {
    super((w) => db.transaction(w), work, max);
  }
}

/**
 * Like items written together by statements that each commit alone (`Batches`): for items each
 * written by one compare-and-set of its own row, so that a group is one multi-row statement,
 * one round trip and one commit, where each row still stands or falls on its own condition. A
 * statement that fails writes nothing; its items are then written again one by one.
 */
export class BatchStatement<I, O> extends Batches<I, O> {
  constructor(ex: SqlTx, work: (ex: SqlTx, items: I[]) => Promise<O[]>, max = 64) {
    super((w) => w(ex), work, max);
  }
}

/**
 * Group commit of units of work: units that arrive while a transaction is committing share the
 * next one (up to `max`), each run in turn, so many small writes cost one BEGIN and one COMMIT
 * (a `BatchCommit` whose items are the units). When one fails, the shared transaction rolls back
 * and every unit of it runs again in a transaction of its own, so only the failing one fails.
 */
export class GroupCommit {
  private readonly units: BatchCommit<(tx: SqlTx) => Promise<unknown>, unknown>;

  constructor(db: Transactions, max = 32) {
    this.units = new BatchCommit(
      db,
      async (tx, units) => {
        const out: unknown[] = [];
        for (const unit of units) out.push(await unit(tx));
        return out;
      },
      max,
    );
  }

  run<T>(work: (tx: SqlTx) => Promise<T>): Promise<T> {
    return this.units.run(work) as Promise<T>;
  }
}
