import { EntityManager } from '@mikro-orm/postgresql';
import type { TaggedQuery } from '@pgtyped/runtime';
import type { ClientBase, FieldDef } from 'pg';
import { numberPlaceholders } from './pg-transaction';

/** Rows per `FETCH`: about 1 MB of JSON for the widest list. */
export const ROW_BATCH = 1000;

/**
 * Runs `sql` (`?` placeholders, as everywhere else) through a cursor in one read-only transaction (one
 * snapshot) on a pooled `pg` client of its own, and hands its rows to `onBatch` `ROW_BATCH` at a
 * time, each row an array of its columns in order (`rowMode: 'array'`: no object per row);
 * `onBatch` returning false stops early (the client went away). The next batch is fetched while
 * the current one is handled, so PostgreSQL reads it while this process renders the last.
 * Memory stays at two batches, however many rows there are.
 *
 * The raw client (MikroORM's own pool, through its knex) skips the query builder's per-query
 * work, which a list of 10 000 rows in 10 fetches does not need.
 */
export function forEachRowBatch(
  em: EntityManager,
  sql: string,
  params: unknown[],
  onBatch: (rows: unknown[][]) => Promise<boolean>,
): Promise<void> {
  return streamBatches(em, numberPlaceholders(sql), params, (rows) => onBatch(rows));
}

/**
 * A pgtyped statement (`sql<IQuery>\`…\``) streamed as `forEachRowBatch` streams a text, its rows
 * handed to `onBatch` as the statement's generated row type (objects, keyed by column name, a
 * column's `!`/`?` nullability hint dropped as pgtyped's own `run` drops it).
 */
export function forEachObjectBatch<TParams, TRow>(
  em: EntityManager,
  query: TaggedQuery<{ params: TParams; result: TRow }>,
  params: TParams,
  onBatch: (rows: TRow[]) => Promise<boolean>,
): Promise<void> {
  const { text, values } = statementOf(query, params);
  let keys: string[] | undefined;
  return streamBatches(em, text, values, (rows, fields) => {
    keys ??= fields.map((field) => field.name.replace(/[!?]$/, ''));
    const names = keys;
    return onBatch(
      rows.map((row) => {
        const object: Record<string, unknown> = {};
        for (let i = 0; i < names.length; i++) object[names[i]] = row[i];
        return object as TRow;
      }),
    );
  });
}

/** The numbered text and values pgtyped runs for `query` with `params` (read, not run). */
function statementOf<TParams, TRow>(
  query: TaggedQuery<{ params: TParams; result: TRow }>,
  params: TParams,
): { text: string; values: unknown[] } {
  let statement: { text: string; values: unknown[] } | undefined;
  query.stream(params, {
    query: () => Promise.reject(new Error('streamed, not run')),
    stream: (text: string, values: unknown[]) => {
      statement = { text, values };
      return { read: () => Promise.resolve([]), close: () => Promise.resolve() };
    },
  });
  if (!statement) throw new Error('pgtyped did not hand over the statement');
  return statement;
}

/** The cursor behind both: `text` is numbered (`$1`…); rows come as arrays with their fields. */
async function streamBatches(
  em: EntityManager,
  text: string,
  params: unknown[],
  onBatch: (rows: unknown[][], fields: FieldDef[]) => Promise<boolean>,
): Promise<void> {
  const knexClient = em.getConnection().getKnex().client as {
    acquireConnection(): Promise<ClientBase>;
    releaseConnection(connection: ClientBase): Promise<void>;
  };
  // The raw client's errors become MikroORM's, so the exception filter classifies them as it
  // does every other query's (a lost connection is a 503, not a 500).
  const driver = em.getDriver();
  const client = await knexClient.acquireConnection().catch((error: Error) => {
    throw driver.convertException(error);
  });
  let healthy = false;
  try {
    await client.query(
      // A cursor is planned for its first rows: the lists' ORDER BY follows an index of
      // (merchant_id, created_at, id), so rows stream in index order with no sort (a sort of
      // 10 000 wide rows spilled to disk at the default work_mem). work_mem: room for the sort a
      // filtered list may still need. idle_in_transaction_session_timeout: a client that stops
      // reading cannot hold the connection.
      `BEGIN READ ONLY; SET LOCAL work_mem = '16MB';
       SET LOCAL idle_in_transaction_session_timeout = '30s'`,
    );
    await client.query(`DECLARE list_rows NO SCROLL CURSOR FOR ${text}`, params);
    const fetch = () =>
      client
        .query<unknown[]>({ text: `FETCH ${ROW_BATCH} FROM list_rows`, rowMode: 'array' })
        .then((result) => ({ rows: result.rows, fields: result.fields }));
    let pending = fetch();
    for (;;) {
      const { rows, fields } = await pending;
      const more = rows.length === ROW_BATCH;
      if (more) {
        pending = fetch();
        pending.catch(() => undefined); // awaited below; never an unhandled rejection meanwhile
      }
      const go = await onBatch(rows, fields);
      if (!more) break;
      if (!go) {
        await pending; // the connection must be idle before the transaction ends
        break;
      }
    }
    await client.query('COMMIT');
    healthy = true;
  } catch (error) {
    throw error instanceof Error ? driver.convertException(error) : error;
  } finally {
    if (!healthy) await client.query('ROLLBACK').catch(() => undefined);
    await knexClient.releaseConnection(client);
  }
}
