import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS_TABLE } from '../src/database/mikro-orm.options';
import { DrainState } from '../src/health/drain-state';
import { ensureBuilt } from './helpers/dist';
import { createTestApp, TestApp } from './helpers/test-app';

/**
 * Start-up and readiness for many instances (docs/deployment.md): readiness waits for this
 * build's migrations and says `draining` once a stop has begun; a build older than the schema
 * refuses to start. (Ten instances migrating at once on one advisory lock: the topology test.)
 */
describe('Readiness: migrations current, not draining', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  it('is 503 while a migration of this build is not applied, 200 once it is', async () => {
    const [last] = await t.sql<{ name: string; executed_at: Date }>(
      `DELETE FROM ${MIGRATIONS_TABLE}
        WHERE id = (SELECT max(id) FROM ${MIGRATIONS_TABLE}) RETURNING name, executed_at`,
    );
    const res = await t.http.get('/health').expect(503);
    expect(res.body.error.migrations).toEqual({
      status: 'down',
      message: '1 migration(s) not applied',
      pending: [last.name],
    });
    expect(res.body.info).toMatchObject({ database: { status: 'up' }, chain: { status: 'up' } });

    await t.sql(`INSERT INTO ${MIGRATIONS_TABLE} (name, executed_at) VALUES ($1, $2)`, [
      last.name,
      last.executed_at,
    ]);
    const ok = await t.http.get('/health').expect(200);
    expect(ok.body.info).toMatchObject({
      instance: { status: 'up' },
      database: { status: 'up' },
      migrations: { status: 'up' },
      chain: { status: 'up' },
    });
  });

  it('is 503 draining once a stop has begun, while liveness stays 200', async () => {
    t.app.get(DrainState).begin();
    const res = await t.http.get('/health').expect(503);
    expect(res.body.error).toEqual({
      instance: { status: 'down', message: 'draining: this instance is shutting down' },
    });
    await t.http.get('/health/live').expect(200);
  });
});

describe('Start-up: a build older than the schema', () => {
  let t: TestApp;
  let dataDir: string;

  beforeAll(async () => {
    t = await createTestApp();
    dataDir = mkdtempSync(join(tmpdir(), 'billing-older-build-'));
  });
  afterAll(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    await t?.close();
  });

  it('refuses to start, in one sentence with exit code 2, and changes nothing', async () => {
    const newer = 'Migration29991231000000';
    await t.sql(`INSERT INTO ${MIGRATIONS_TABLE} (name, executed_at) VALUES ($1, now())`, [newer]);
    const before = await t.sql<{ n: string }>(
      `SELECT count(*)::text AS n FROM ${MIGRATIONS_TABLE}`,
    );

    const child = spawn(process.execPath, [ensureBuilt('src', 'main.js')], {
      env: {
        PATH: process.env.PATH,
        DATA_DIR: dataDir,
        DATABASE_URL: t.databaseUrl,
        SOLANA_RPC_URL: t.chain!.url,
        PORT: '0',
        DEMO_MERCHANT: 'false',
        LOG_LEVEL: 'error',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));

    expect(code).toBe(2);
    // (bigint-buffer's notice that it runs as pure JS may come first: not ours.)
    const said = stderr
      .trim()
      .split('\n')
      .filter((line) => !line.startsWith('bigint:'));
    expect(said).toEqual([
      'The database schema is newer than this build: it has 1 migration(s) this build does not ' +
        `know (${newer}). Start the build that applied them (or a newer one); this one refuses ` +
        'to run on it.',
    ]);
    expect(await t.sql(`SELECT count(*)::text AS n FROM ${MIGRATIONS_TABLE}`)).toEqual(before);
  });
});
