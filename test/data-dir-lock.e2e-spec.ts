import { ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChainDirectoryInUseError, ChainDirectoryLock } from '../src/localnet/data-dir-lock';

/**
 * The data-directory lock of localnet across real processes (the compiled lock, as `npm start`
 * runs it): a lock being rewritten is never mistaken for a stale one, and a stale lock is taken
 * over by exactly one of several processes starting at once.
 */
const LOCK = join(__dirname, '..', 'dist', 'src', 'localnet', 'data-dir-lock.js');

function node(script: string, args: string[]): ChildProcess {
  return spawn(process.execPath, ['-e', script, LOCK, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

function output(child: ChildProcess): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', () => resolve(out));
  });
}

describe('localnet data-directory lock across processes', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lock-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a live lock that keeps announcing its URL is never taken for a stale one', async () => {
    // The owner rewrites its lock (announce) as fast as it can while this process tries to take it.
    const owner = node(
      `const { ChainDirectoryLock } = require(process.argv[1]);
       const lock = ChainDirectoryLock.acquire(process.argv[2]);
       process.stdout.write('ready\\n');
       const end = Date.now() + 2500;
       for (let i = 0; Date.now() < end; i++) lock.announce('http://127.0.0.1:' + (10000 + (i % 1000)));
       lock.release();`,
      [dir],
    );
    await new Promise<void>((resolve) =>
      owner.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve()),
    );
    let refused = 0;
    let taken = 0;
    const end = Date.now() + 1500;
    while (Date.now() < end) {
      try {
        ChainDirectoryLock.acquire(dir).release();
        taken++;
      } catch (error) {
        if (!(error instanceof ChainDirectoryInUseError)) throw error;
        refused++;
      }
    }
    await output(owner);
    expect(taken).toBe(0);
    expect(refused).toBeGreaterThan(100);
  });

  it('a stale lock is taken over by exactly one of several processes starting at once', async () => {
    for (let round = 0; round < 5; round++) {
      const roundDir = join(dir, String(round));
      mkdirSync(roundDir);
      // Left by a process that is gone (kill -9).
      writeFileSync(ChainDirectoryLock.path(roundDir), JSON.stringify({ pid: 2 ** 22 + 4321 }));
      const start = Date.now() + 300;
      const racers = Array.from({ length: 6 }, () =>
        output(
          node(
            `const { ChainDirectoryLock } = require(process.argv[1]);
             while (Date.now() < Number(process.argv[3])) {}
             try { ChainDirectoryLock.acquire(process.argv[2]); process.stdout.write('won');
                   setTimeout(() => process.exit(0), 500); }
             catch (e) { process.stdout.write(e.name === 'ChainDirectoryInUseError' ? 'refused' : 'error ' + e.message); }`,
            [roundDir, String(start)],
          ),
        ),
      );
      const results = await Promise.all(racers);
      expect(results.filter((r) => r === 'won')).toHaveLength(1);
      expect(results.filter((r) => r === 'refused')).toHaveLength(5);
    }
  });
});
