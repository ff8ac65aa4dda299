import { EntityManager } from '@mikro-orm/postgresql';

/** Rows per `FETCH`: about 1 MB of JSON for the widest list. */
export const ROW_BATCH = 1000;

/**
 * Runs `sql` through a cursor in one read-only transaction (one snapshot) and hands its rows to
 * `onBatch` `ROW_BATCH` at a time; `onBatch` returning false stops early (the client went away).
 * The next batch is fetched while the current one is handled, so PostgreSQL reads it while this
 * process renders the last. Memory stays at two batches, however many rows there are.
 */
export async function forEachRowBatch<T>(
  em: EntityManager,
  sql: string,
  params: unknown[],
  onBatch: (rows: T[]) => Promise<boolean>,
): Promise<void> {
  await em.fork().transactional(async (tx) => {
    const connection = tx.getConnection();
    const context: unknown = tx.getTransactionContext();
    const fetch = () =>
      connection.execute<T[]>(`FETCH ${ROW_BATCH} FROM list_rows`, [], 'all', context);
    await connection.execute('SET TRANSACTION READ ONLY', [], 'run', context);
    // Plan for the whole result, not for its first rows (the default for a cursor).
    await connection.execute('SET LOCAL cursor_tuple_fraction = 1', [], 'run', context);
    // A client that stops reading cannot hold the connection: PostgreSQL ends the transaction.
    await connection.execute(
      "SET LOCAL idle_in_transaction_session_timeout = '30s'",
      [],
      'run',
      context,
    );
    await connection.execute(
      `DECLARE list_rows NO SCROLL CURSOR FOR ${sql}`,
      params,
      'run',
      context,
    );
    let pending = fetch();
    for (;;) {
      const rows = await pending;
      const more = rows.length === ROW_BATCH;
      if (more) {
        pending = fetch();
        pending.catch(() => undefined); // awaited below; never an unhandled rejection meanwhile
      }
      const go = await onBatch(rows);
      if (!more) return;
      if (!go) {
        await pending; // the connection must be idle before the transaction ends
        return;
      }
    }
  });
}
