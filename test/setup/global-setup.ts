import { chmod, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';
import { databaseUrl, SERVER_URL_ENV, TEMPLATE_DATABASE } from './test-database';

/**
 * One PostgreSQL for the whole run: TEST_DATABASE_URL's server when set (any PostgreSQL 14+,
 * a superuser or a role that may create databases), else an embedded server in a temp dir.
 * Drops the previous run's template; the first test file to need a database builds it again
 * from the migrations (MikroORM is kept out of this process: jest may run tests in it).
 */
export default async function globalSetup(): Promise<void> {
  let server = process.env.TEST_DATABASE_URL;
  if (!server) {
    const dir = await mkdtemp(join(tmpdir(), 'billing-test-'));
    await chmod(dir, 0o755);
    // A throwaway server: no fsync and no full-page images (what PostgreSQL's docs list for
    // data that need not survive an operating-system crash). A process killed still loses
    // nothing committed; creating and dropping a database per test file, and thousands of
    // commits, stop waiting on the disk, which two suites on one machine share.
    const pg = await startEmbeddedPostgres(join(dir, 'postgres'), {
      settings: ['fsync=off', 'full_page_writes=off'],
    });
    (globalThis as { __testPg?: unknown }).__testPg = { pg, dir };
    server = pg.serverUrl;
  }
  process.env[SERVER_URL_ENV] = server;
  const admin = new Client({ connectionString: databaseUrl(server, 'postgres') });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${TEMPLATE_DATABASE}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
