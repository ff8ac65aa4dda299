import { EntityManager } from '@mikro-orm/postgresql';
import type { ClientBase } from 'pg';
import type { IDatabaseConnection } from '@pgtyped/runtime';
import type { TypedQuery } from './typed-sql';
import { withoutNullabilityHints } from './pg-transaction';

/** Rows per `FETCH`: about 1 MB of JSON for the widest list. */
export const ROW_BATCH = 1000;

/**
 * What a cursor reads (`forEachBatch`): a numbered text (`$1`, `$2`…) and its values, or a
 * pgtyped statement bound to its parameters (`typedCursor`), whose rows are its generated type.
 */
export type CursorStatement<TRow> =
  | { text: string; values: unknown[] }
  | { stream(connection: IDatabaseConnection): { read(rows: number): Promise<TRow[]> } };

/**
 * A pgtyped statement and its parameters, to be read through a cursor: `query.stream` gives its
 * numbered text and bindings, and maps its rows (a `"name!"` column read as `name`).
 */
export function typedCursor<T extends { params: unknown; result: unknown }>(
  query: TypedQuery<T>,
  params: T['params'],
): CursorStatement<T['result']> {
  return { stream: (connection) => query.stream(params, connection) };
}

/** `statement` through a cursor (see `readCursor`), each row an object of its columns. */
export function forEachBatch<TRow>(
  em: EntityManager,
  statement: CursorStatement<TRow>,
  onBatch: (rows: TRow[]) => Promise<boolean>,
): Promise<void> {
  return readCursor(
    em,
    (fetch) => {
      if (!('stream' in statement)) {
        const { text, values } = statement;
        return { text, values, read: (n) => fetch.objects(n) as Promise<TRow[]> };
      }
      // pgtyped hands over its text and bindings, then reads (and maps) the cursor's batches.
      let declared: { text: string; values: unknown[] } | undefined;
      const cursor = statement.stream({
        query: () => Promise.reject(new Error('a cursor statement is only streamed')),
        stream: (text: string, values: unknown[]) => {
          declared = { text, values };
          return { read: fetch.objects, close: () => Promise.resolve() };
        },
      });
      if (!declared) throw new Error('pgtyped did not stream the statement');
      return { ...declared, read: (n) => cursor.read(n) };
    },
    onBatch,
  );
}

/** The cursor's statement and how to read a batch of it, given how to fetch raw rows. */
type OpenCursor<TRow> = (fetch: { objects: (rows: number) => Promise<unknown[]> }) => {
  text: string;
  values: unknown[];
  read(rows: number): Promise<TRow[]>;
};

/**
 * Runs a statement through a cursor in one read-only transaction (one snapshot) on a pooled `pg`
 * client of its own, and hands its rows to `onBatch` `ROW_BATCH` at a time; `onBatch` returning
 * false stops early (the client went away). The next batch is fetched while the current one is
 * handled, so PostgreSQL reads it while this process renders the last. Memory stays at two
 * batches, however many rows there are.
 *
 * The raw client (MikroORM's own pool, through its knex) skips the query builder's per-query
 * work, which a list of 10 000 rows in 10 fetches does not need.
 */
async function readCursor<TRow>(
  em: EntityManager,
  open: OpenCursor<TRow>,
  onBatch: (rows: TRow[]) => Promise<boolean>,
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
    const cursor = open({
      objects: (rows) =>
        client.query(`FETCH ${rows} FROM list_rows`).then((result) => result.rows as unknown[]),
    });
    await client.query(
      `DECLARE list_rows NO SCROLL CURSOR FOR ${withoutNullabilityHints(cursor.text)}`,
      cursor.values,
    );
    const fetch = () => cursor.read(ROW_BATCH);
    let pending = fetch();
    for (;;) {
      const rows = await pending;
      const more = rows.length === ROW_BATCH;
      if (more) {
        pending = fetch();
        pending.catch(() => undefined); // awaited below; never an unhandled rejection meanwhile
      }
      const go = await onBatch(rows);
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
