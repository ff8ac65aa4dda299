import { ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChainDirectoryInUseError, ChainDirectoryLock } from '@stablecoin-billing/localnet';
import { localnetBuilt } from './helpers/dist';

/**
 * The data-directory lock of localnet across real processes (the compiled lock, as `npm start`
 * runs it): a lock being rewritten is never mistaken for a stale one, and a stale lock is taken
 * over by exactly one of several processes starting at once.
 */
let lockModule: string;

function node(script: string, args: string[], stdin: 'ignore' | 'pipe' = 'ignore'): ChildProcess {
  return spawn(process.execPath, ['-e', script, lockModule, ...args], {
    stdio: [stdin, 'pipe', 'inherit'],
  });
}

function output(child: ChildProcess): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', () => resolve(out)); // 'exit' can come before the last output is read
  });
}

/**
 * The first thing a process writes (one word), or all it wrote if it ends first. On 'close'
 * (its output read to the end), not 'exit': a racer that writes and exits at once can be seen
 * to exit before its output is read, and its answer was lost (a busy machine made that likely).
 */
function answer(child: ChildProcess): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => resolve((out += d.toString())));
    child.on('close', () => resolve(out));
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

describe('localnet data-directory lock across processes', () => {
  let dir: string;
  // Builds dist/ first when a source is newer (a fresh clone, an edit): allow for a build.
  beforeAll(() => {
    lockModule = localnetBuilt('data-dir-lock.js');
  }, 300_000);
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lock-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a live lock that keeps announcing its URL is never taken for a stale one', async () => {
    // The owner rewrites its lock (announce) as fast as it can, until told to stop, while this
    // process tries 200 times to take it (a count, not a time: a busy machine tries as often).
    const stop = join(dir, 'stop');
    const owner = node(
      `const { existsSync } = require('node:fs');
       const { ChainDirectoryLock } = require(process.argv[1]);
       const lock = ChainDirectoryLock.acquire(process.argv[2]);
       process.stdout.write('ready\\n');
       for (let i = 0; !existsSync(process.argv[3]); i++) lock.announce('http://127.0.0.1:' + (10000 + (i % 1000)));
       lock.release();`,
      [dir, stop],
    );
    // Listened for from the start: the owner may exit as soon as it is told to stop, before a
    // listener attached only then would hear it close.
    const ended = output(owner);
    await new Promise<void>((resolve) =>
      owner.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve()),
    );
    let refused = 0;
    let taken = 0;
    for (let i = 0; i < 200; i++) {
      try {
        ChainDirectoryLock.acquire(dir).release();
        taken++;
      } catch (error) {
        if (!(error instanceof ChainDirectoryInUseError)) throw error;
        refused++;
      }
    }
    await writeFile(stop, '');
    await ended;
    expect(taken).toBe(0);
    expect(refused).toBe(200);
  });

  it('a stale lock is taken over by exactly one of several processes starting at once', async () => {
    for (let round = 0; round < 5; round++) {
      const roundDir = join(dir, String(round));
      mkdirSync(roundDir);
      // Left by a process that is gone (kill -9).
      writeFileSync(ChainDirectoryLock.path(roundDir), JSON.stringify({ pid: 2 ** 22 + 4321 }));
      const start = Date.now() + 300;
      // The winner holds the lock until every racer has answered (its stdin is closed then): a
      // racer slow to start (a busy machine) would otherwise find the lock of a winner that had
      // already exited, a stale lock it rightly takes over, and the round would see two wins.
      const racers = Array.from({ length: 6 }, () =>
        node(
          `const { ChainDirectoryLock } = require(process.argv[1]);
           while (Date.now() < Number(process.argv[3])) {}
           try { ChainDirectoryLock.acquire(process.argv[2]); process.stdout.write('won');
                 process.stdin.on('end', () => process.exit(0)).resume(); }
           catch (e) { process.stdout.write(e.name === 'ChainDirectoryInUseError' ? 'refused' : 'error ' + e.message); }`,
          [roundDir, String(start)],
          'pipe',
        ),
      );
      const results = await Promise.all(racers.map(answer));
      racers.forEach((racer) => racer.stdin!.end());
      await Promise.all(racers.map(exited));
      // Every answer in the message when it fails: one won, every other one refused.
      expect(results.sort()).toEqual([
        'refused',
        'refused',
        'refused',
        'refused',
        'refused',
        'won',
      ]);
    }
  });
});
