import { openSync, readFileSync, rmSync, writeFileSync, closeSync } from 'node:fs';
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

/**
 * One chain per data directory, as PostgreSQL allows one postmaster per data directory: two
 * chains on the same files would diverge, and each save would overwrite the other's
 * transactions. The lock file is created exclusively; a lock whose process is gone (killed with
 * -9) is stale and taken over.
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
    try {
      const owner = JSON.parse(
        readFileSync(ChainDirectoryLock.path(localnetDir), 'utf8'),
      ) as ChainOwner;
      return Number.isInteger(owner.pid) && isAlive(owner.pid) ? owner : undefined;
    } catch {
      return undefined;
    }
  }

  /** @throws ChainDirectoryInUseError when a live process holds it. */
  static acquire(localnetDir: string): ChainDirectoryLock {
    const file = ChainDirectoryLock.path(localnetDir);
    if (ChainDirectoryLock.held.has(file)) {
      throw new ChainDirectoryInUseError(localnetDir, { pid: process.pid });
    }
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const fd = openSync(file, 'wx', 0o644);
        writeFileSync(fd, JSON.stringify({ pid: process.pid }));
        closeSync(fd);
        ChainDirectoryLock.held.add(file);
        return new ChainDirectoryLock(file);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const owner = ChainDirectoryLock.owner(localnetDir);
        if (owner && owner.pid !== process.pid)
          throw new ChainDirectoryInUseError(localnetDir, owner);
        rmSync(file, { force: true }); // stale (or ours from a previous open): take it over
      }
    }
    throw new Error(`Could not lock ${localnetDir}`);
  }

  /** Records the URL the chain serves, for a second process to find and reuse. */
  announce(url: string): void {
    writeFileSync(this.file, JSON.stringify({ pid: process.pid, url }));
  }

  release(): void {
    ChainDirectoryLock.held.delete(this.file);
    rmSync(this.file, { force: true });
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
