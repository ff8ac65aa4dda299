import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  chownSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { startNginx } from '../../bench/nginx';
import { ensureBuilt } from '../helpers/dist';
import { freePortPair } from '../helpers/test-chain';
import { waitFor } from '../helpers/webhook-receiver';

/**
 * The real parts of the production topology (docs/deployment.md), each a process of its own on
 * loopback: Debian's PostgreSQL server, the localnet chain as an RPC provider would be, service
 * instances started as an operator starts them (`node dist/src/main.js` with `ROLE`), and Debian's
 * nginx in front. Logs go to files in the run's directory, kept when a test fails.
 */

const ROOT = join(__dirname, '..', '..');

/**
 * A directory for one run's state and logs (the system's temporary directory). Others may pass
 * through it (not list it): PostgreSQL's and nginx's users reach their own directories in it.
 */
export function runDirectory(): string {
  const dir = mkdtempSync(join(tmpdir(), 'billing-topology-'));
  chmodSync(dir, 0o711);
  return dir;
}

/** Whether this process is root (PostgreSQL refuses to run as root: it then runs as `postgres`). */
const asRoot = process.getuid?.() === 0;

/**
 * Runs a PostgreSQL program (as `postgres` when this process is root). `detached`: it leaves a
 * server running, which would hold pipes open: its output goes nowhere (pg_ctl logs to a file).
 */
function runAsPostgres(command: string, args: string[], detached = false): void {
  const [file, argv] = asRoot
    ? ['runuser', ['-u', 'postgres', '--', command, ...args]]
    : [command, args];
  execFileSync(file, argv, { stdio: detached ? 'ignore' : ['ignore', 'pipe', 'pipe'] });
}

/** Debian's PostgreSQL binaries: `PG_BINDIR`, else the newest `/usr/lib/postgresql/<v>/bin`. */
export function postgresBinDir(): string {
  if (process.env.PG_BINDIR) return process.env.PG_BINDIR;
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base)
    ? readdirSync(base)
        .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions.length) {
    throw new Error(
      "Debian's PostgreSQL server is not installed (apt-get install postgresql; .ci/run does it)",
    );
  }
  return join(base, versions[0], 'bin');
}

/** Debian's PostgreSQL server in a data directory of its own, on a loopback TCP port. */
export class DebianPostgres {
  readonly dataDir: string;
  private readonly log: string;
  port = 0;

  constructor(private readonly dir: string) {
    this.dataDir = join(dir, 'data');
    this.log = join(dir, 'postgres.log');
  }

  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  async start(): Promise<void> {
    const bin = postgresBinDir();
    this.port = await freePortPair();
    if (asRoot) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
      chownSync(this.dir, uid, gid);
    }
    runAsPostgres(join(bin, 'initdb'), [
      '-D',
      this.dataDir,
      '-U',
      'postgres',
      '--auth=trust',
      '--encoding=UTF8',
      '--locale=C',
      '--no-sync',
    ]);
    // Loopback TCP only; no socket file. fsync off: a test's throwaway cluster.
    appendFileSync(
      join(this.dataDir, 'postgresql.conf'),
      [
        `port = ${this.port}`,
        "listen_addresses = '127.0.0.1'",
        "unix_socket_directories = ''",
        'max_connections = 200',
        'fsync = off',
        'synchronous_commit = off',
        'full_page_writes = off',
        '',
      ].join('\n'),
    );
    this.pgCtl('start');
  }

  /** A fast restart: every session is ended; the instances must reconnect on their own. */
  restart(): void {
    this.pgCtl('restart');
  }

  stop(): void {
    try {
      this.pgCtl('stop');
    } catch {
      // already down
    }
  }

  private pgCtl(action: 'start' | 'restart' | 'stop'): void {
    try {
      this.runPgCtl(action);
    } catch (error) {
      const log = existsSync(this.log) ? readFileSync(this.log, 'utf8').slice(-2000) : '';
      throw new Error(`pg_ctl ${action} failed: ${(error as Error).message}\n${log}`);
    }
  }

  private runPgCtl(action: 'start' | 'restart' | 'stop'): void {
    runAsPostgres(
      join(postgresBinDir(), 'pg_ctl'),
      [action, '-D', this.dataDir, '-m', 'fast', '-w', '-t', '60', '-l', this.log],
      true,
    );
  }

  async createDatabase(name: string): Promise<string> {
    const client = new Client({ connectionString: this.url() });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE "${name}"`);
    } finally {
      await client.end();
    }
    return this.url(name);
  }
}

/** A child process of the compiled service (or one of its CLIs), its output in a log file. */
export class NodeProcess {
  child?: ChildProcess;
  private exit?: Promise<number | null>;
  readonly logFile: string;

  constructor(
    readonly name: string,
    private readonly script: string,
    private readonly env: Record<string, string>,
    dir: string,
    private readonly args: string[] = [],
  ) {
    this.logFile = join(dir, `${name}.log`);
  }

  start(extraEnv: Record<string, string> = {}): this {
    const child = spawn(process.execPath, [this.script, ...this.args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, ...this.env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log = createWriteStream(this.logFile, { flags: 'a' });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    this.exit = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    this.child = child;
    return this;
  }

  get pid(): number {
    return this.child!.pid!;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Sends `signal` and resolves with the exit code (null when a signal ended it). */
  async stop(signal: NodeJS.Signals): Promise<number | null> {
    if (this.running) this.child!.kill(signal);
    return this.exited();
  }

  exited(): Promise<number | null> {
    return this.exit ?? Promise.resolve(null);
  }

  output(): string {
    return existsSync(this.logFile) ? readFileSync(this.logFile, 'utf8') : '';
  }
}

/** The entry point every instance runs, relative to the project (the image's `CMD`). */
export const ENTRY_POINT = ['node', 'dist/src/main.js'];

/** A service instance: `node dist/src/main.js` with its role, port and metrics port. */
export class ServiceInstance extends NodeProcess {
  constructor(
    name: string,
    readonly port: number,
    readonly metricsPort: number,
    env: Record<string, string>,
    dir: string,
  ) {
    const dataDir = join(dir, `${name}-data`);
    mkdirSync(dataDir, { recursive: true });
    super(
      name,
      ensureBuilt(...ENTRY_POINT[1].split('/').slice(1)),
      {
        ...env,
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        METRICS_PORT: String(metricsPort),
        METRICS_HOST: '127.0.0.1',
      },
      dir,
    );
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Waits until readiness answers 200 (database, migrations, chain, not draining). */
  async ready(timeoutMs = 120_000): Promise<void> {
    await waitFor(
      async () => {
        if (!this.running) throw new Error(`${this.name} exited:\n${this.output().slice(-3000)}`);
        try {
          return (await fetch(`${this.url}/health`)).status === 200;
        } catch {
          return false;
        }
      },
      timeoutMs,
      () => `${this.name} ready`,
    );
  }

  /** The Prometheus text this instance serves on its metrics port. */
  async metrics(): Promise<string> {
    const res = await fetch(`http://127.0.0.1:${this.metricsPort}/metrics`);
    if (res.status !== 200) throw new Error(`metrics of ${this.name}: ${res.status}`);
    return res.text();
  }
}

/** Debian's nginx in front of the api instances (bench/nginx.ts: deploy/nginx.conf for a run). */
export class Nginx {
  port = 0;
  private running?: Awaited<ReturnType<typeof startNginx>>;

  constructor(private readonly dir: string) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(upstreams: readonly number[], port?: number): Promise<void> {
    this.port = port ?? (await freePortPair());
    this.running = await startNginx(this.dir, this.port, upstreams);
  }

  stop(): void {
    this.running?.stop();
  }
}

/** What one service instance of the topology is given. */
export interface TopologyEnvironment {
  /**
   * What production sets too: docker-compose.yml gives its api and worker services the same
   * names (test/deployment-files.spec.ts), with production's values.
   */
  readonly production: Record<string, string>;
  /** The test's own: localnet's dev key, and shorter intervals so the journey takes minutes. */
  readonly test: Record<string, string>;
}

export function topologyEnvironment(options: {
  databaseUrl: string;
  rpcUrl: string;
  serviceKey: string;
  publicBaseUrl: string;
  devKey: string;
}): TopologyEnvironment {
  return {
    production: {
      DATABASE_URL: options.databaseUrl,
      DATABASE_POOL_SIZE: '8',
      SOLANA_CLUSTER: 'localnet',
      SOLANA_RPC_URL: options.rpcUrl,
      SERVICE_KEYPAIR: options.serviceKey,
      PUBLIC_BASE_URL: options.publicBaseUrl,
      TRUST_PROXY: '1',
      DEMO_MERCHANT: 'false',
      LOG_LEVEL: 'info',
      SHUTDOWN_GRACE_MS: '5000',
      // (ROLE, METRICS_PORT and METRICS_HOST are set per instance: ServiceInstance)
    },
    test: {
      DEV_KEY: options.devKey,
      AUTH_FAILURES_PER_MINUTE: '5',
      CHARGE_RUN_INTERVAL_MS: '1000',
      CHARGE_LEASE_SECONDS: '60',
      WATCH_INTERVAL_MS: '1000',
      WEBHOOK_POLL_INTERVAL_MS: '500',
    },
  };
}

/** The variables `ServiceInstance` sets per instance (compose sets them per service). */
export const PER_INSTANCE_VARIABLES = [
  'ROLE',
  'PORT',
  'HOST',
  'METRICS_PORT',
  'METRICS_HOST',
  'DATA_DIR',
];
