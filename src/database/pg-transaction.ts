import type { AnyEntity, EntityData, QueryResult } from '@mikro-orm/core';
import { EntityManager } from '@mikro-orm/postgresql';
import type { ClientBase, QueryResult as PgQueryResult } from 'pg';

/**
 * What a write inside a transaction needs: SQL with `?` placeholders and the rows it returns.
 * An EntityManager inside `transactional` satisfies it, and so do `withPgSession`'s, so the
 * same domain code (`CustomersService.upsertIn`, `EventsService.record`, the e-mail outbox,
 * `IdempotencyService.completeIn`) runs in either.
 */
export interface SqlTx {
  execute<T extends SqlResult = EntityData<AnyEntity>[]>(
    sql: string,
    params?: unknown[],
  ): Promise<T>;
  /**
   * A statement already numbered (`$1`, `$2`…), as a pgtyped query runs it
   * (`query.run(params, ex)`): prepared and named like `execute`'s.
   */
  query(text: string, values: unknown[]): Promise<{ rows: unknown[]; rowCount: number }>;
  isInTransaction(): boolean;
}

/** What `EntityManager.execute` may return (its type parameter's bound). */
export type SqlResult = QueryResult | EntityData<AnyEntity> | EntityData<AnyEntity>[];

/** A statement as pg runs it: `$n` placeholders, and its number among the prepared ones. */
interface Statement {
  text: string;
  index: number | undefined;
  /** A `SELECT` (its first word): what a pipelined read may run. */
  select: boolean;
}

/**
 * Each SQL text's statement, made once: the hot paths' texts are the code's constants (and
 * pgtyped's, kept by `typed-sql.ts`). A text with `?`s and the same text already numbered are two
 * statements, kept apart in two maps: keyed by the caller's own string, whose hash V8 computes
 * once, where a key made per call (a prefix added) is hashed again in full at every statement.
 */
const statements = {
  placeholders: new Map<string, Statement>(),
  numbered: new Map<string, Statement>(),
};
/** A statement that only reads: `SELECT` first (a `WITH` may hide a write). */
const SELECT = /^\s*SELECT\b/i;
/** Past this many texts, statements run unnamed (planned each time) and are not kept. */
const STATEMENT_CACHE_LIMIT = 1000;
let statementCount = 0;

/**
 * The statement for `sql`. Prepared: each pooled connection parses and plans it once, then only
 * binds and executes it (a prepared statement lives as long as its connection). The names are
 * this process's own; MikroORM's queries are never named, so they cannot collide.
 */
function statement(sql: string, numbered = false): Statement {
  const kept = numbered ? statements.numbered : statements.placeholders;
  let found = kept.get(sql);
  if (found === undefined) {
    const cacheable = statementCount < STATEMENT_CACHE_LIMIT;
    const text = numbered ? withoutNullabilityHints(sql) : numberPlaceholders(sql);
    found = { text, index: cacheable ? statementCount++ : undefined, select: SELECT.test(text) };
    if (cacheable) kept.set(sql, found);
  }
  return found;
}

/** A column named with pgtyped's nullability hint: `"name!"` (never null) or `"name?"`. */
const HINTED_NAME = /"([A-Za-z_][A-Za-z0-9_]*)[!?]"/g;

/**
 * A pgtyped statement as PostgreSQL runs it: its columns named without their nullability hints
 * (`AS "created_at!"` runs as `AS "created_at"`, and so does a reference to such a column). The
 * hints are for the generator (`npm run db:types`), which reads them from the source. Rows then
 * come out of `pg` with their final names, and pgtyped's runtime has nothing to rename: it would
 * otherwise `delete` each hinted property from every row, which turns the row into a slow
 * dictionary-mode object (measured: `GET /api/customers` of 100 rows, 1341 µs of CPU per request
 * with the hints sent, 991-1087 without).
 * Once per text: the result is the cached statement's.
 */
export function withoutNullabilityHints(sql: string): string {
  return sql.replace(HINTED_NAME, '"$1"');
}

/**
 * Each connection's generation of prepared statements. When the schema changes under a prepared
 * statement (another instance's migration altered a column it returns), PostgreSQL refuses to run
 * it again ("cached plan must not change result type"); the connection's statements are then
 * dropped (`DEALLOCATE ALL`) and prepared again under new names.
 */
const generations = new WeakMap<ClientBase, number>();

function isStalePlan(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return (
    code === '0A000' &&
    typeof message === 'string' &&
    message.includes('cached plan must not change result type')
  );
}

/**
 * `?` placeholders as `$1`, `$2`… (pg's), outside quoted literals and identifiers. Parameters
 * are bound as they are: an array is one PostgreSQL array, not a list (knex expands those). The
 * SQL of this code never uses PostgreSQL's `?` operators (jsonb), which knex would also have
 * read as placeholders.
 */
export function numberPlaceholders(sql: string): string {
  let out = '';
  let n = 0;
  let quote: string | null = null;
  for (let i = 0; i < sql.length; i++) {
    const ch = sql[i];
    if (quote) {
      if (ch === '\\') throw new Error('numberPlaceholders: no backslash escapes in literals');
      if (ch === quote) quote = null; // a doubled quote closes and reopens: same result
      out += ch;
    } else if (ch === '$' || sql.startsWith('--', i) || sql.startsWith('/*', i)) {
      // Dollar quoting, comments and `$n` placeholders could hide a `?` or a quote: refused
      // rather than numbered wrong.
      throw new Error('numberPlaceholders: no $, comments or $n placeholders in the SQL');
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
    } else if (ch === '?') {
      out += `$${++n}`;
    } else {
      out += ch;
    }
  }
  return out;
}

type Convert = (error: unknown) => unknown;

/** What a session's statements share: the client, and whether a prepared plan went stale. */
interface Link {
  client: ClientBase;
  convert: Convert;
  stalePlan: boolean;
}

/** Statements on a pooled `pg` client: parameters bound by PostgreSQL, not inlined. */
class PgStatements implements SqlTx {
  private ended = false;

  constructor(
    protected readonly link: Link,
    private readonly inTransaction: boolean,
  ) {}

  /**
   * The unit of work these statements belong to has ended (its transaction committed or rolled
   * back, its connection given back): a statement sent after it would run outside it, possibly
   * on another unit's connection, so it is refused.
   */
  end(): void {
    this.ended = true;
  }

  async execute<T extends SqlResult>(sql: string, params: unknown[] = []): Promise<T> {
    return (await this.run(statement(sql), params)).rows as unknown as T;
  }

  async query(text: string, values: unknown[]): Promise<{ rows: unknown[]; rowCount: number }> {
    const { rows, rowCount } = await this.run(statement(text, true), values);
    return { rows, rowCount: rowCount ?? 0 };
  }

  /** Why `statement` may not run on this handle, or undefined when it may. */
  protected refused(_statement: Statement): string | undefined {
    return this.ended ? 'A statement after the end of its unit of work was refused' : undefined;
  }

  private async run(statement: Statement, values: unknown[]): Promise<PgQueryResult<never>> {
    const refusal = this.refused(statement);
    if (refusal) throw new Error(refusal);
    const { text, index } = statement;
    const { client } = this.link;
    const name = index === undefined ? undefined : `hot_${index}_${generations.get(client) ?? 0}`;
    try {
      return await client.query<never>({ name, text, values });
    } catch (error) {
      if (isStalePlan(error)) this.link.stalePlan = true;
      throw this.link.convert(error);
    }
  }

  isInTransaction(): boolean {
    return this.inTransaction;
  }
}

/**
 * One pooled `pg` client for a unit of work: statements that commit on their own (`execute`,
 * autocommit) and then, usually, one transaction. A statement or transaction that failed only
 * because a prepared plan went stale (a schema change) is run once more with fresh statements.
 */
export class PgSession extends PgStatements {
  constructor(client: ClientBase, convert: Convert) {
    super({ client, convert, stalePlan: false }, false);
  }

  override async execute<T extends SqlResult>(sql: string, params: unknown[] = []): Promise<T> {
    try {
      return await super.execute<T>(sql, params);
    } catch (error) {
      if (!(await this.renewedStatements())) throw error;
      return super.execute<T>(sql, params);
    }
  }

  override async query(
    text: string,
    values: unknown[],
  ): Promise<{ rows: unknown[]; rowCount: number }> {
    try {
      return await super.query(text, values);
    } catch (error) {
      if (!(await this.renewedStatements())) throw error;
      return super.query(text, values);
    }
  }

  /**
   * Runs `work` in a transaction: commits when it resolves, rolls back when it throws. `work`
   * may run a second time (after a rollback) when a prepared plan went stale, so it must have
   * no effect outside the transaction. `options.genericPlans`: see `TransactionOptions`.
   */
  async transaction<T>(
    work: (tx: SqlTx) => Promise<T>,
    options: TransactionOptions = {},
  ): Promise<T> {
    try {
      return await this.once(work, options);
    } catch (error) {
      if (!(await this.renewedStatements())) throw error;
      return this.once(work, options);
    }
  }

  private async once<T>(work: (tx: SqlTx) => Promise<T>, options: TransactionOptions): Promise<T> {
    // One round trip for both (the simple protocol takes several statements in one message).
    // Should the setting fail after the BEGIN, the connection goes back to the pool rolled back,
    // not in a transaction the error aborted.
    await this.command(options.genericPlans ? BEGIN_GENERIC : 'BEGIN').catch(async (error) => {
      await this.link.client.query('ROLLBACK').catch(() => undefined);
      throw error;
    });
    let result: T;
    const tx = new PgStatements(this.link, true);
    try {
      result = await work(tx);
    } catch (error) {
      tx.end();
      await this.link.client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
    tx.end();
    // A transaction that an error aborted answers COMMIT with ROLLBACK (no error): never a
    // success for work whose statements did not all commit.
    const committed = await this.command('COMMIT');
    if (committed !== 'COMMIT') throw new Error(`The transaction was not committed (${committed})`);
    return result;
  }

  /**
   * `work`'s reads on this one connection, sent without waiting for each other's answers: the
   * pool's clients pipeline (`pipeline: true`, see `mikroOrmOptions`), so reads that `work` starts
   * together (`Promise.all`) go out at once and PostgreSQL answers them in order, in about one
   * round trip instead of one each. Each commits on its own (autocommit), so each reads its own
   * snapshot: for independent reads, such as a page made of several owners' rows. Only `SELECT`s
   * are taken (anything else is refused before it is sent), so running `work` again changes
   * nothing. Returns only once every statement sent has answered, even when `work` failed early,
   * so the connection goes back to the pool idle; a statement sent after that is refused. After a
   * prepared plan went stale, `work` runs once more with fresh statements.
   */
  async pipelined<T>(work: (ex: SqlTx) => Promise<T>): Promise<T> {
    try {
      return await this.pipelinedOnce(work);
    } catch (error) {
      if (!(await this.renewedStatements())) throw error;
      return this.pipelinedOnce(work);
    }
  }

  private async pipelinedOnce<T>(work: (ex: SqlTx) => Promise<T>): Promise<T> {
    const reads = new PipelinedReads(this.link);
    try {
      return await work(reads);
    } finally {
      reads.end();
      await reads.settled();
    }
  }

  /** After a stale plan: drops this connection's prepared statements; false when none went stale. */
  private async renewedStatements(): Promise<boolean> {
    if (!this.link.stalePlan) return false;
    this.link.stalePlan = false;
    const { client } = this.link;
    await this.command('DEALLOCATE ALL');
    generations.set(client, (generations.get(client) ?? 0) + 1);
    return true;
  }

  /** @returns the command tag of `sql` (of its last statement when it holds several). */
  private async command(sql: string): Promise<string> {
    const result: PgQueryResult | PgQueryResult[] = await this.link.client
      .query(sql)
      .catch((error: unknown) => {
        throw this.link.convert(error);
      });
    const results = ([] as PgQueryResult[]).concat(result);
    return results[results.length - 1].command;
  }
}

/** Reads that may be in flight together on one connection (`PgSession.pipelined`). */
class PipelinedReads extends PgStatements {
  private readonly sent: Promise<unknown>[] = [];

  constructor(link: Link) {
    super(link, false);
  }

  protected override refused(statement: Statement): string | undefined {
    return statement.select ? super.refused(statement) : 'A pipelined read must be a SELECT';
  }

  override execute<T extends SqlResult>(sql: string, params: unknown[] = []): Promise<T> {
    return this.track(super.execute<T>(sql, params));
  }

  override query(text: string, values: unknown[]): Promise<{ rows: unknown[]; rowCount: number }> {
    return this.track(super.query(text, values));
  }

  /** Resolves once every statement sent has answered, whatever it answered. */
  async settled(): Promise<void> {
    for (let answered = 0; answered < this.sent.length;) {
      const pending = this.sent.slice(answered);
      answered = this.sent.length;
      await Promise.allSettled(pending);
    }
  }

  private track<T>(statement: Promise<T>): Promise<T> {
    this.sent.push(statement);
    return statement;
  }
}

/** How a transaction's statements are planned. */
export interface TransactionOptions {
  /**
   * Its prepared statements run on their generic plan, planned once per connection, never on a
   * plan made for the values of each execution (`plan_cache_mode`, for this transaction only).
   * For a statement costly to plan whose best plan does not depend on its values, which
   * PostgreSQL would otherwise plan again every time: it keeps custom plans when the generic
   * one's estimate is higher, as it is for a `LIMIT $n` it cannot see (the charge claim: ~2 ms
   * of planning a claim, a third of its cost, in `npm run bench:engine`).
   */
  genericPlans?: boolean;
}

const BEGIN_GENERIC = 'BEGIN; SET LOCAL plan_cache_mode = force_generic_plan';

/**
 * Runs `work` with a raw `pg` client of MikroORM's own pool, given back to the pool after it.
 * For hot write paths made of plain SQL statements, which skip MikroORM's and knex's per-query
 * work (the field notes measure a query through them at ~2.4x the CPU of a raw one). The
 * database's errors become MikroORM's (`driver.convertException`), so the exception filter
 * classifies them as any other query's; the work's own errors pass through as they are.
 */
export async function withPgSession<T>(
  em: EntityManager,
  work: (session: PgSession) => Promise<T>,
): Promise<T> {
  const knexClient = em.getConnection().getKnex().client as {
    acquireConnection(): Promise<ClientBase>;
    releaseConnection(connection: ClientBase): Promise<void>;
  };
  const driver = em.getDriver();
  const convert: Convert = (error) =>
    error instanceof Error ? driver.convertException(error) : error;
  const client = await knexClient.acquireConnection().catch((error: unknown) => {
    throw convert(error);
  });
  const session = new PgSession(client, convert);
  try {
    return await work(session);
  } finally {
    session.end();
    await knexClient.releaseConnection(client);
  }
}

/** `work` in one transaction on a raw `pg` client (see `withPgSession`). */
export function inPgTransaction<T>(
  em: EntityManager,
  work: (tx: SqlTx) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  return withPgSession(em, (session) => session.transaction(work, options));
}

/**
 * One statement on its own (autocommit) on a raw `pg` client of MikroORM's pool, prepared per
 * connection (see `withPgSession`): for the hot reads, whose few rows need none of knex's work.
 */
export function pgQuery<T extends SqlResult = EntityData<AnyEntity>[]>(
  em: EntityManager,
  sql: string,
  params: unknown[] = [],
): Promise<T> {
  return withPgSession(em, (session) => session.execute<T>(sql, params));
}
