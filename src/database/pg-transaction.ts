import type { AnyEntity, EntityData, QueryResult } from '@mikro-orm/core';
import { EntityManager } from '@mikro-orm/postgresql';
import type { ClientBase } from 'pg';

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
  isInTransaction(): boolean;
}

/** What `EntityManager.execute` may return (its type parameter's bound). */
type SqlResult = QueryResult | EntityData<AnyEntity> | EntityData<AnyEntity>[];

/** A statement as pg runs it: `$n` placeholders, and its prepared statement's name. */
interface Statement {
  text: string;
  name: string | undefined;
}

/** Each SQL text's statement, made once: the hot paths' texts are the code's constants. */
const statements = new Map<string, Statement>();
/** Past this many texts, statements run unnamed (planned each time) and are not kept. */
const STATEMENT_CACHE_LIMIT = 1000;

/**
 * The statement for `sql`. Named: each pooled connection parses and plans it once, then only
 * binds and executes it (a prepared statement lives as long as its connection). The names are
 * this process's own; MikroORM's queries are never named, so they cannot collide.
 */
function statement(sql: string): Statement {
  let found = statements.get(sql);
  if (found === undefined) {
    const cacheable = statements.size < STATEMENT_CACHE_LIMIT;
    found = {
      text: numberPlaceholders(sql),
      name: cacheable ? `hot_${statements.size}` : undefined,
    };
    if (cacheable) statements.set(sql, found);
  }
  return found;
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
      if (ch === quote) quote = null; // a doubled quote closes and reopens: same result
      out += ch;
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

/** Statements on a pooled `pg` client: parameters bound by PostgreSQL, not inlined. */
class PgStatements implements SqlTx {
  constructor(
    protected readonly client: ClientBase,
    protected readonly convert: Convert,
    private readonly inTransaction: boolean,
  ) {}

  async execute<T extends SqlResult>(sql: string, params: unknown[] = []): Promise<T> {
    try {
      const { text, name } = statement(sql);
      const result = await this.client.query({ name, text, values: params });
      return result.rows as unknown as T;
    } catch (error) {
      throw this.convert(error);
    }
  }

  isInTransaction(): boolean {
    return this.inTransaction;
  }
}

/**
 * One pooled `pg` client for a unit of work: statements that commit on their own (`execute`,
 * autocommit) and then, usually, one transaction.
 */
export class PgSession extends PgStatements {
  constructor(client: ClientBase, convert: Convert) {
    super(client, convert, false);
  }

  /** Runs `work` in a transaction: commits when it resolves, rolls back when it throws. */
  async transaction<T>(work: (tx: SqlTx) => Promise<T>): Promise<T> {
    await this.run('BEGIN');
    let result: T;
    try {
      result = await work(new PgStatements(this.client, this.convert, true));
    } catch (error) {
      await this.client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
    await this.run('COMMIT');
    return result;
  }

  private async run(sql: string): Promise<void> {
    await this.client.query(sql).catch((error: unknown) => {
      throw this.convert(error);
    });
  }
}

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
  try {
    return await work(new PgSession(client, convert));
  } finally {
    await knexClient.releaseConnection(client);
  }
}

/** `work` in one transaction on a raw `pg` client (see `withPgSession`). */
export function inPgTransaction<T>(em: EntityManager, work: (tx: SqlTx) => Promise<T>): Promise<T> {
  return withPgSession(em, (session) => session.transaction(work));
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
