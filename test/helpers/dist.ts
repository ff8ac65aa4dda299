import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Tests that run the compiled service (`dist/`) as a user does: `npm test` builds first
 * (`pretest`), but `npx jest <file>` does not, and would run a stale or missing build.
 */
const ROOT = join(__dirname, '..', '..');

/** How long a process waits for another one's build before giving up. */
const BUILD_WAIT_MS = 5 * 60_000;
/** Past this age a lock whose owner cannot be checked is taken for abandoned. */
const STALE_LOCK_MS = 10 * 60_000;

/** Outside the repository (nothing to ignore or clean there), one per checkout. */
const LOCK_BASE = join(
  tmpdir(),
  `billing-build-${createHash('sha256').update(ROOT).digest('hex').slice(0, 16)}`,
);
const LOCK = `${LOCK_BASE}.lock`;
/** The jest run that last ensured the build (see `jestRun`). */
const RUN_MARKER = `${LOCK_BASE}.run`;

let built = false;

/**
 * Brings `dist/` (and the hosted pages' bundle in `public/`) up to date with the sources, by
 * running `scripts/build-if-needed.js` (a quick no-op when nothing changed), and returns the path
 * of a compiled file. Synchronous; runs once per test file (jest gives each file its own module
 * registry, so "once per process" is once per file).
 *
 * Jest runs test files in parallel workers, and `nest build` empties `dist/` before it writes:
 * two builds at once would leave a broken tree, and build-if-needed.js has no lock of its own.
 * A lock directory (atomic `mkdir`) lets one process build while the others wait for it, then
 * find the build fresh. A lock left by a process that died is cleared (its pid is gone).
 *
 * For the same reason the workers of one jest run build at most once, at the first call: a
 * source edited during the run would otherwise have a later file rebuild `dist/` while another
 * worker runs the compiled service from it. The run tests the sources as they were at its start.
 *
 * @param path a path under `dist/`, e.g. `ensureBuilt('src', 'main.js')`.
 * @throws Error naming the build's exit and output when it fails.
 */
export function ensureBuilt(...path: string[]): string {
  if (!built) {
    withBuildLock(() => {
      const run = jestRun();
      if (run !== undefined && readText(RUN_MARKER) === run) return; // built by this run
      build();
      if (run !== undefined) writeFileSync(RUN_MARKER, run);
    });
    built = true;
  }
  return join(ROOT, 'dist', ...path);
}

function build(): void {
  const result = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-if-needed.js')], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().split('\n').slice(-40);
    throw new Error(
      `Building dist/ failed (node scripts/build-if-needed.js: ${
        result.error?.message ?? `exit ${result.status ?? result.signal}`
      }); the tests that run the compiled service cannot run:\n${output.join('\n')}`,
    );
  }
}

/**
 * The jest run this process serves as a worker: the parent's pid and start time (so a reused
 * pid is another run). Undefined in band (one process, files one after another: no one else
 * runs `dist/` during a build) and where /proc is missing (then every file ensures the build).
 */
function jestRun(): string | undefined {
  if (!/[\\/]jest-worker[\\/].*processChild\.js$/.test(process.argv[1] ?? '')) return undefined;
  const stat = readText(`/proc/${process.ppid}/stat`);
  const startTime = stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  return startTime ? `${process.ppid}@${startTime}` : undefined;
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function withBuildLock(run: () => void): void {
  const deadline = Date.now() + BUILD_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (abandoned(LOCK)) {
      rmSync(LOCK, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(`Waited ${BUILD_WAIT_MS / 1000} s for another build of dist/ (${LOCK})`);
    }
    sleepSync(200);
  }
  try {
    writeFileSync(join(LOCK, 'pid'), String(process.pid));
    run();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

/** A lock whose process is gone (killed mid-build), or too old to trust. */
function abandoned(lock: string): boolean {
  try {
    const pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
    process.kill(pid, 0);
    return false;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') return true;
    if (code === 'EPERM') return false; // alive, another user's
    // No pid yet (just created, or its owner died before writing it): judge by its age.
    try {
      return Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS;
    } catch {
      return false; // released meanwhile: try again
    }
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** A compiled file of the localnet package (`packages/localnet/dist/`), brought up to date. */
export function localnetBuilt(file: string): string {
  ensureBuilt();
  return join(ROOT, 'packages', 'localnet', 'dist', file);
}
