import { Client } from 'pg';
import { createTestDatabase } from '../setup/test-database';
import { randomWallet } from './test-app';

/**
 * A database of its own (migrated, as the service runs), a raw `pg` connection to it and one
 * merchant in it: for tests of statements and triggers written straight to the tables.
 */
export interface MerchantDatabase {
  /** Its connection string, for more connections. */
  url: string;
  sql: Client;
  merchant: string;
  /** Closes the connection and drops the database. */
  close(): Promise<void>;
}

export async function merchantDatabase(): Promise<MerchantDatabase> {
  const db = await createTestDatabase();
  const sql = new Client({ connectionString: db.url });
  await sql.connect();
  const { rows } = await sql.query<{ id: string }>(
    `INSERT INTO merchants (id, created_at, updated_at, name, wallet_address, webhook_secret)
     VALUES (gen_random_uuid(), now(), now(), 'Acme', $1, 'whsec_x') RETURNING id`,
    [randomWallet()],
  );
  return {
    url: db.url,
    sql,
    merchant: rows[0].id,
    close: async () => {
      await sql.end();
      await db.drop();
    },
  };
}
