import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { runMigrations } from '../../src/database/migrate';

/** Set by the global setup: a server URL (no database) and the migrated template's name. */
export const SERVER_URL_ENV = 'TEST_PG_SERVER_URL';
export const TEMPLATE_DATABASE = 'billing_test_template';

export function serverUrl(): string {
  const url = process.env[SERVER_URL_ENV];
  if (!url)
    throw new Error(`${SERVER_URL_ENV} is not set: run the tests through jest (global setup)`);
  return url;
}

export function databaseUrl(server: string, database: string): string {
  const url = new URL(server);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function adminQuery<T = Record<string, unknown>>(
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new Client({ connectionString: databaseUrl(serverUrl(), 'postgres') });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

const TEMPLATE_LOCK = 7_351_202_612;

/** Builds the migrated template once per run; concurrent test files wait on an advisory lock. */
async function ensureTemplate(): Promise<void> {
  const client = new Client({ connectionString: databaseUrl(serverUrl(), 'postgres') });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [
      TEMPLATE_DATABASE,
    ]);
    if (found.rowCount === 0) {
      const building = `${TEMPLATE_DATABASE}_building`;
      await client.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
      await client.query(`CREATE DATABASE "${building}"`);
      await runMigrations(databaseUrl(serverUrl(), building));
      await client.query(`ALTER DATABASE "${building}" RENAME TO "${TEMPLATE_DATABASE}"`);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]).catch(() => undefined);
    await client.end();
  }
}

/** A fresh, migrated database for one test file, copied from the template in milliseconds. */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  await ensureTemplate();
  const name = `billing_test_${randomUUID().replace(/-/g, '')}`;
  await adminQuery(`CREATE DATABASE "${name}" TEMPLATE "${TEMPLATE_DATABASE}"`);
  return {
    url: databaseUrl(serverUrl(), name),
    drop: async () => {
      await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}
