import { ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt } from './dist';
import { freePortPair, TEST_DEV_KEY } from './test-chain';

/**
 * Service processes for tests of several instances on one database and one chain: each is the
 * compiled service (`dist/src/main.js`, built first if the sources changed) in a process of its
 * own, with its own data directory and port. `stopAll` kills what is left and removes the
 * directories.
 */
export class Instances {
  private readonly children: ChildProcess[] = [];
  private readonly dirs: string[] = [];
  private readonly urls = new Map<ChildProcess, string>();
  private readonly main = ensureBuilt('src', 'main.js');

  constructor(private readonly base: Record<string, string>) {}

  async start(env: Record<string, string> = {}): Promise<ChildProcess> {
    const port = await freePortPair();
    const dataDir = mkdtempSync(join(tmpdir(), 'billing-instance-'));
    this.dirs.push(dataDir);
    const child = spawn(process.execPath, [this.main], {
      env: {
        PATH: process.env.PATH,
        DATA_DIR: dataDir,
        PORT: String(port),
        DEMO_MERCHANT: 'false',
        DEV_KEY: TEST_DEV_KEY,
        LOG_LEVEL: process.env.INSTANCE_LOG_LEVEL ?? 'error',
        ...this.base,
        ...env,
      },
      // INSTANCE_LOG_LEVEL=info (say) keeps what the instances log, each in `instance-<pid>.log`
      // of INSTANCE_LOG_DIR (the system's temporary directory by default), when a test needs
      // looking into.
      stdio: ['ignore', process.env.INSTANCE_LOG_LEVEL ? 'pipe' : 'ignore', 'inherit'],
    });
    if (child.stdout) {
      const dir = process.env.INSTANCE_LOG_DIR ?? tmpdir();
      child.stdout.pipe(createWriteStream(join(dir, `instance-${child.pid}.log`)));
    }
    this.children.push(child);
    this.urls.set(child, `http://127.0.0.1:${port}`);
    return child;
  }

  /** Starts an instance and resolves with its base URL once it answers `/health/live`. */
  async serving(env: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string }> {
    const child = await this.start(env);
    const url = this.urls.get(child)!;
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`instance exited with ${child.exitCode}`);
      const live = await fetch(`${url}/health/live`).catch(() => null);
      if (live?.ok) return { child, url };
      if (Date.now() > deadline) throw new Error(`instance at ${url} never answered`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** Ends every instance still running (a stopped one is woken so it can die) and cleans up. */
  stopAll(): void {
    for (const child of this.children) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGKILL');
      }
    }
    for (const dir of this.dirs) rmSync(dir, { recursive: true, force: true });
  }
}

/** Resolves once the process has exited (or at once if it has). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}
