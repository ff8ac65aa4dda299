import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { BatchCommit, BatchStatement, GroupCommit } from './group-commit';
import type { AnyEntity, EntityData } from '@mikro-orm/core';
import {
  inPgTransaction,
  type PgSession,
  pgQuery,
  type SqlResult,
  type SqlTx,
  type TransactionOptions,
  withPgSession,
} from './pg-transaction';
import { type CursorStatement, forEachBatch } from './row-batches';

/** The pool's clients at one moment (`Db.poolUsage`). */
export interface PoolUsage {
  /** Clients open: in use and idle. */
  total: number;
  idle: number;
  /** Requests waiting for a client. */
  waiting: number;
  /** The most the pool opens (`DATABASE_POOL_SIZE`). */
  max: number;
}

/** The part of knex's pool (tarn) that `poolUsage` reads. */
interface TarnPool {
  max: number;
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
}

/**
 * The service's one data path (issue 22): every statement runs through this executor, on the pool
 * MikroORM opened, as a named (prepared) statement on a raw `pg` client. Repositories take the
 * handle to run on as their first argument (`ex: SqlTx`): this `Db` itself for a statement that
 * commits on its own, or the `tx` of `transaction` for work that commits together. Services
 * decide where a unit of work begins and ends; only repositories hold SQL.
 */
@Injectable()
export class Db implements SqlTx {
  constructor(private readonly em: EntityManager) {}

  /** One statement on its own (autocommit). */
  execute<T extends SqlResult = EntityData<AnyEntity>[]>(
    sql: string,
    params: unknown[] = [],
  ): Promise<T> {
    return pgQuery<T>(this.em, sql, params);
  }

  /** One numbered statement on its own (autocommit): what a pgtyped query's `run` calls. */
  query(text: string, values: unknown[]): Promise<{ rows: unknown[]; rowCount: number }> {
    return withPgSession(this.em, (session) => session.query(text, values));
  }

  isInTransaction(): boolean {
    return false;
  }

  /**
   * `work` in one transaction: commits when it resolves, rolls back when it throws. It may run
   * a second time after a rollback (a prepared plan gone stale under a migration), so it must
   * have no effect outside the transaction. `options`: how its statements are planned
   * (`TransactionOptions`).
   */
  transaction<T>(work: (tx: SqlTx) => Promise<T>, options?: TransactionOptions): Promise<T> {
    return inPgTransaction(this.em, work, options);
  }

  /**
   * Independent reads on one pooled connection, sent together and answered in about one round
   * trip (see `PgSession.pipelined`): `work` starts them at once (`Promise.all`) on `ex`. Each
   * statement commits on its own and reads its own snapshot.
   */
  pipelined<T>(work: (ex: SqlTx) => Promise<T>): Promise<T> {
    return withPgSession(this.em, (session) => session.pipelined(work));
  }

  /** One pooled connection for several statements and transactions in a row. */
  session<T>(work: (session: PgSession) => Promise<T>): Promise<T> {
    return withPgSession(this.em, work);
  }

  /**
   * A read streamed through a cursor in `ROW_BATCH`es of object rows: a pgtyped statement
   * (`typedCursor(query, params)`: its generated row type) or a numbered text and its values.
   */
  forEachBatch<TRow>(
    statement: CursorStatement<TRow>,
    onBatch: (rows: TRow[]) => Promise<boolean>,
  ): Promise<void> {
    return forEachBatch(this.em, statement, onBatch);
  }

  /**
   * The clients of the pool every statement runs on (MikroORM's, through knex), for the
   * metrics. The LISTEN connection (`PgListener`) is not one of them.
   */
  poolUsage(): PoolUsage {
    const pool = (this.em.getConnection().getKnex().client as { pool?: TarnPool }).pool;
    if (!pool) return { total: 0, idle: 0, waiting: 0, max: 0 };
    const idle = pool.numFree();
    return {
      total: pool.numUsed() + idle,
      idle,
      waiting: pool.numPendingAcquires(),
      max: pool.max,
    };
  }

  /**
   * Every row of a cursor statement (`forEachBatch`), at once: for a read whose best plan
   * depends on its values (a search pattern, a page), since a cursor's statement is unnamed and
   * planned for the values it is given each time, where a prepared one may settle on a generic
   * plan.
   */
  async readAll<TRow>(statement: CursorStatement<TRow>): Promise<TRow[]> {
    const rows: TRow[] = [];
    await this.forEachBatch(statement, (batch) => {
      for (const row of batch) rows.push(row);
      return Promise.resolve(true);
    });
    return rows;
  }

  /** Units of work that share their commits (see `GroupCommit`). */
  groupCommit(max?: number): GroupCommit {
    return new GroupCommit(this, max);
  }

  /**
   * Like items written together, each by a compare-and-set of its own row: one statement that
   * commits alone per group (see `BatchStatement`).
   */
  batchStatement<I, O>(
    work: (ex: SqlTx, items: I[]) => Promise<O[]>,
    max?: number,
  ): BatchStatement<I, O> {
    return new BatchStatement(this, work, max);
  }

  /** Like items that share their commits, each group written at once (see `BatchCommit`). */
  batchCommit<I, O>(
    work: (tx: SqlTx, items: I[]) => Promise<O[]>,
    max?: number,
  ): BatchCommit<I, O> {
    return new BatchCommit(this, work, max);
  }
}
