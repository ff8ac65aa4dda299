import { randomBytes } from 'node:crypto';
import {
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

/** Who serves the chain of a data directory (written in `<dir>/localnet/localnet.pid`). */
export interface ChainOwner {
  pid: number;
  /** The JSON-RPC URL it serves, once it does. */
  url?: string;
}

/** Another live process runs the chain of this data directory. */
export class ChainDirectoryInUseError extends Error {
  constructor(
    readonly dir: string,
    readonly owner: ChainOwner,
  ) {
    super(
      `Another localnet (pid ${owner.pid}${owner.url ? `, serving ${owner.url}` : ''}) already ` +
        `runs on ${dir}: use it (SOLANA_RPC_URL=${owner.url ?? '<its URL>'}, or the same ` +
        `LOCALNET_RPC_PORT) or choose another DATA_DIR.`,
    );
    this.name = 'ChainDirectoryInUseError';
  }
}

/** A takeover mutex older than this was left by a process that died inside it. */
const TAKEOVER_STALE_MS = 10_000;
/** How long `acquire` keeps trying while another process takes a stale lock over. */
const ACQUIRE_TIMEOUT_MS = 5_000;

/**
 * One chain per data directory, as PostgreSQL allows one postmaster per data directory: two
 * chains on the same files would diverge, and each save would overwrite the other's
 * transactions.
 *
 * The lock file is never seen half-written: it is created whole (written under a temporary name,
 * then hard-linked into place, which fails if the lock exists) and replaced whole (rename). A
 * lock whose process is gone (killed with -9) is stale and taken over, one process at a time: the
 * takeover runs under a mutex directory (`mkdir` is atomic) and removes the lock only if it is
 * still the stale one it read, so a process that read the stale lock late cannot remove the lock
 * another process has just taken.
 */
export class ChainDirectoryLock {
  /** Lock files held by this process (a second chain in the same process is refused too). */
  private static readonly held = new Set<string>();

  private constructor(private readonly file: string) {}

  static path(localnetDir: string): string {
    return join(localnetDir, 'localnet.pid');
  }

  /** The live owner of a directory's chain, if any (a stale lock reads as none). */
  static owner(localnetDir: string): ChainOwner | undefined {
    const owner = parseOwner(readLock(ChainDirectoryLock.path(localnetDir)));
    return owner && isAlive(owner.pid) ? owner : undefined;
  }

  /** @throws ChainDirectoryInUseError when a live process holds it. */
  static acquire(localnetDir: string): ChainDirectoryLock {
    const file = ChainDirectoryLock.path(localnetDir);
    if (ChainDirectoryLock.held.has(file)) {
      throw new ChainDirectoryInUseError(localnetDir, { pid: process.pid });
    }
    const deadline = Date.now() + ACQUIRE_TIMEOUT_MS;
    for (;;) {
      if (createWhole(file, JSON.stringify({ pid: process.pid }))) {
        ChainDirectoryLock.held.add(file);
        return new ChainDirectoryLock(file);
      }
      const content = readLock(file);
      const owner = parseOwner(content);
      if (owner && owner.pid !== process.pid && isAlive(owner.pid)) {
        throw new ChainDirectoryInUseError(localnetDir, owner);
      }
      // Stale (or ours from a previous open, or gone meanwhile): take it over.
      if (content !== undefined) takeOver(file, content);
      if (Date.now() > deadline) throw new Error(`Could not lock ${localnetDir}`);
    }
  }

  /** Records the URL the chain serves, for a second process to find and reuse. */
  announce(url: string): void {
    const temporary = `${this.file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(temporary, JSON.stringify({ pid: process.pid, url }));
    renameSync(temporary, this.file); // readers see the old content or the new, never a part
  }

  release(): void {
    ChainDirectoryLock.held.delete(this.file);
    rmSync(this.file, { force: true });
  }
}

/** Creates `file` with `content`, whole, unless it exists; whether it did. */
function createWhole(file: string, content: string): boolean {
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(temporary, content);
  try {
    linkSync(temporary, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return false;
  } finally {
    rmSync(temporary, { force: true });
  }
}

/**
 * Removes the stale lock `file` if it still holds `stale`, under the takeover mutex; when
 * another process holds the mutex, waits a moment and lets the caller look again.
 */
function takeOver(file: string, stale: string): void {
  const mutex = `${file}.takeover`;
  try {
    mkdirSync(mutex);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    try {
      if (Date.now() - statSync(mutex).mtimeMs > TAKEOVER_STALE_MS)
        rmSync(mutex, { force: true, recursive: true });
    } catch {
      // gone meanwhile
    }
    sleep(20);
    return;
  }
  try {
    if (readLock(file) === stale) rmSync(file, { force: true });
  } finally {
    rmSync(mutex, { force: true, recursive: true });
  }
}

function readLock(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function parseOwner(content: string | undefined): ChainOwner | undefined {
  if (content === undefined) return undefined;
  try {
    const owner = JSON.parse(content) as ChainOwner;
    return Number.isInteger(owner.pid) ? owner : undefined;
  } catch {
    return undefined;
  }
}

/** Blocks the thread for `ms` (lock acquisition is synchronous and rare: start-up only). */
function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
