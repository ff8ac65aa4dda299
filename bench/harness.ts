/**
 * What every benchmark needs: a migrated database of its own, the built service as child
 * processes (optionally pinned to a core), and a merchant made by the merchant CLI.
 */
import bs58 from 'bs58';
import { ChildProcess, execFileSync, spawn, SpawnOptions, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDatabaseExists, startEmbeddedPostgres } from '../src/database/embedded-postgres';
import { runMigrations } from '../src/database/migrate';

export const ROOT = join(__dirname, '..', '..');

export const wallet = (): string => bs58.encode(randomBytes(32));

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * User + system CPU time of a process, in microseconds (from /proc, clock ticks of 10 ms); of one
 * of its threads with `thread` (its main thread's id is the pid).
 */
export function cpuMicros(pid: number, thread?: number): number {
  const path = thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`;
  const fields = readFileSync(path, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/**
 * CPU time of a process and its live children (PostgreSQL: the postmaster and its backends),
 * plus what its exited children used (the kernel adds theirs when they are reaped), in µs.
 */
export function treeCpuMicros(pid: number): number {
  const stat = (p: number | string) =>
    readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ');
  const own = stat(pid);
  let total = (Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14])) * 10_000;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = stat(entry);
      if (Number(fields[1]) === pid) total += (Number(fields[11]) + Number(fields[12])) * 10_000;
    } catch {
      // exited while we looked
    }
  }
  return total;
}

export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

export function hasTaskset(): boolean {
  return spawnSync('taskset', ['-c', '0', 'true']).status === 0;
}

/** Pins a running process (all its threads) to one core, when taskset exists. */
export function pin(pid: number, core: number): void {
  if (hasTaskset()) spawnSync('taskset', ['-a', '-p', '-c', String(core), String(pid)]);
}

export interface BenchDatabase {
  url: string;
  /** The embedded server's postmaster pid, to pin it; undefined with BENCH_DATABASE_URL. */
  postmasterPid?: number;
  /** Another fresh, migrated database on the same server: its URL. */
  another(): Promise<string>;
  stop(): Promise<void>;
}

/**
 * A fresh, migrated database: on BENCH_DATABASE_URL's server (a URL without a database name) or
 * on an embedded PostgreSQL in a temp directory.
 */
export async function startDatabase(options: { settings?: string[] } = {}): Promise<BenchDatabase> {
  if (!existsSync(join(ROOT, 'dist', 'src', 'main.js')))
    throw new Error('run `npm run build` first');
  const tmp = mkdtempSync(join(tmpdir(), 'bench-pg-'));
  execFileSync('chmod', ['755', tmp]);
  const pg = process.env.BENCH_DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres(join(tmp, 'postgres'), {
        settings: options.settings,
        // BENCH_PG_LOG=file: the server's log there (e.g. auto_explain's plans).
        log: process.env.BENCH_PG_LOG
          ? (line) => appendFileSync(process.env.BENCH_PG_LOG!, `${line}\n`)
          : undefined,
      });
  const server = (process.env.BENCH_DATABASE_URL ?? pg!.serverUrl).replace(/\/$/, '');
  let made = 0;
  const fresh = async () => {
    const dbName = `bench_${Date.now()}_${made++}`;
    await ensureDatabaseExists(server, dbName);
    const url = `${server}/${dbName}`;
    await runMigrations(url);
    return url;
  };
  const url = await fresh();
  return {
    url,
    another: fresh,
    postmasterPid: pg
      ? Number(readFileSync(join(tmp, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0])
      : undefined,
    stop: async () => {
      await pg?.stop();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/** Polls `probe` every 100 ms for up to 30 s; throws `what did not start` after. */
async function waitUntilUp(probe: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await probe().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not start`);
}

export interface BenchServer {
  child: ChildProcess;
  base: string;
}

/** Runs a built script with this node, from the project root, pinned to `core` when given. */
function spawnNode(
  script: string,
  core: number | undefined,
  options: Omit<SpawnOptions, 'cwd'>,
  nodeArgs: string[] = [],
): ChildProcess {
  const [cmd, args] =
    core !== undefined && hasTaskset()
      ? ['taskset', ['-c', String(core), process.execPath, ...nodeArgs, script]]
      : [process.execPath, [...nodeArgs, script]];
  return spawn(cmd, args, { ...options, cwd: ROOT });
}

/** The load every HTTP benchmark applies (`BENCH_SECONDS`, `BENCH_CONNECTIONS`, `BENCH_ANCHOR_ROUNDS`). */
export const LOAD = {
  seconds: Number(process.env.BENCH_SECONDS ?? 10),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 50),
  anchorRounds: Number(process.env.BENCH_ANCHOR_ROUNDS ?? 3),
};

/** Starts the built service on the database and waits until /health answers. */
export async function startServer(
  databaseUrl: string,
  options: {
    core?: number;
    env?: NodeJS.ProcessEnv;
    stdoutFile?: string;
    nodeArgs?: string[];
  } = {},
): Promise<BenchServer> {
  const port = await freePort();
  const main = join(ROOT, 'dist', 'src', 'main.js');
  const stdout = options.stdoutFile ? openSync(options.stdoutFile, 'w') : 'ignore';
  const child = spawnNode(
    main,
    options.core,
    {
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
        RATE_LIMIT_PER_MINUTE: '100000000',
        DATA_DIR: mkdtempSync(join(tmpdir(), 'bench-data-')),
        DEV_KEY: BENCH_DEV_KEY,
        ...options.env,
      },
      stdio: ['ignore', stdout, 'inherit'],
    },
    options.nodeArgs,
  );
  const base = `http://127.0.0.1:${port}`;
  await waitUntilUp(async () => (await fetch(`${base}/health`)).ok, 'server');
  return { child, base };
}

/**
 * Starts the bare Nest hello app (bench/bare-nest.ts, built to dist/bench/bare-nest.js), pinned
 * like the service, and waits until `/hello` answers.
 */
export async function startBareNest(options: { core?: number } = {}): Promise<BenchServer> {
  const port = await freePort();
  const main = join(ROOT, 'dist', 'bench', 'bare-nest.js');
  const child = spawnNode(main, options.core, {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitUntilUp(async () => (await fetch(`${base}/hello`)).ok, 'bare Nest app');
  return { child, base };
}

/** Stops servers with SIGTERM and waits for them to exit. */
export async function stopServers(servers: BenchServer[]): Promise<void> {
  await Promise.all(
    servers.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    ),
  );
}

/** A merchant made with the bootstrap CLI: its id, API key and webhook secret. */
export function createMerchant(
  databaseUrl: string,
  walletAddress = wallet(),
): {
  merchant: { id: string };
  apiKey: string;
  webhookSecret: string;
} {
  return JSON.parse(
    execFileSync(
      process.execPath,
      [
        join(ROOT, 'dist', 'src', 'cli', 'merchant-create.js'),
        '--name',
        'Bench',
        '--wallet',
        walletAddress,
        '--json',
      ],
      { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' } },
    ).toString(),
  ) as { merchant: { id: string }; apiKey: string; webhookSecret: string };
}

/** Writes a run's figures as JSON under bench/results/ (not committed). */
export function saveResults(name: string, data: unknown): void {
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(
      ROOT,
      'bench',
      'results',
      `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
    ),
    JSON.stringify(data, null, 2),
  );
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Runs a benchmark's main and exits with its outcome. */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(
        `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(1);
    },
  );
}

/** The operator's dev key of every chain and service a bench starts (docs/dev.md). */
export const BENCH_DEV_KEY = 'dk_bench_0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * Starts the embedded chain as its own process (`dist/src/cli/localnet.js`, as `npm run
 * localnet`) on a free port and a temp data directory, pinned to `core` when given.
 */
export async function startLocalnet(
  options: { core?: number } = {},
): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  let port = await freePort();
  while (port >= 65535) port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-localnet-'));
  const script = join(ROOT, 'dist', 'src', 'cli', 'localnet.js');
  const child = spawnNode(script, options.core, {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      LOCALNET_RPC_PORT: String(port),
      DEV_KEY: BENCH_DEV_KEY,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilUp(async () => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getHealth', params: [] }),
    });
    return res.ok;
  }, 'localnet');
  return {
    url,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => {
          rmSync(dataDir, { recursive: true, force: true });
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/** One JSON-RPC call (the localnet's own methods included); throws on an error answer. */
export async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${BENCH_DEV_KEY}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result: T; error?: unknown };
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

/** Runs `send(worker, i)` for i < `count` through `inFlight` workers; returns calls per second. */
export async function throughput(
  count: number,
  inFlight: number,
  send: (worker: number, i: number) => Promise<void>,
): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async (_, worker) => {
      while (next < count) await send(worker, next++);
    }),
  );
  return count / ((performance.now() - started) / 1000);
}
