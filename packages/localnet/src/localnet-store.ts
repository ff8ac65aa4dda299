import { Keypair } from '@solana/web3.js';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { appendFile, rename, truncate, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { StoredTransaction } from './transaction-index';

/** `state.json`: written last, it is the commit point of a save. */
export interface PersistedState {
  version: 1;
  /** Hex; blockhashes and the genesis hash derive from it. */
  seed: string;
  clockOffsetSeconds: number;
  /** The slot at the time of the save; a restarted chain continues after it. */
  slot: number;
  /** The SVM snapshot file (`svm-<n>.bin`) that goes with this state. */
  snapshot: string;
  /** How many lines of `transactions.jsonl` belong to this state; later ones are discarded. */
  transactions: number;
}

export interface LoadedChain {
  state: PersistedState;
  snapshot: Buffer;
  transactions: StoredTransaction[];
}

const STATE_FILE = 'state.json';
const LOG_FILE = 'transactions.jsonl';
const KEYPAIR_FILE = 'mint-authority.json';
const SNAPSHOT_FILE = /^svm-(\d+)\.bin$/;

/**
 * The files of a persistent localnet under `<dataDir>/localnet/`: an SVM snapshot per save
 * (`svm-<n>.bin`, new name each time), an append-only transaction log, and `state.json` naming
 * the snapshot and the log length. Each file is written to a temp name and renamed, and
 * `state.json` goes last, so a crash at any point leaves the previous consistent save in place.
 */
export class LocalnetStore {
  private readonly dir: string;
  /** Lines and bytes of the log known to be complete; a failed append is cut back to these. */
  private logLines = 0;
  private logBytes = 0;
  private logSuspect = false;
  private generation = 0;
  /** Transactions recorded since the last successful append. */
  private queue: StoredTransaction[] = [];

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'localnet');
    mkdirSync(this.dir, { recursive: true });
  }

  get directory(): string {
    return this.dir;
  }

  /** The mint authority (also the faucet), in Solana's keypair-file format; created once. */
  loadOrCreateKeypair(): Keypair {
    const path = join(this.dir, KEYPAIR_FILE);
    if (existsSync(path)) {
      const bytes: unknown = JSON.parse(readFileSync(path, 'utf8'));
      if (!Array.isArray(bytes) || bytes.length !== 64) {
        throw new Error(`${path} is not a Solana keypair file (a JSON array of 64 bytes)`);
      }
      return Keypair.fromSecretKey(Uint8Array.from(bytes as number[]));
    }
    const keypair = Keypair.generate();
    writeFileSync(`${path}.tmp`, JSON.stringify(Array.from(keypair.secretKey)), { mode: 0o600 });
    renameSync(`${path}.tmp`, path);
    return keypair;
  }

  /** The last consistent save, or undefined for a fresh chain (stale leftovers are removed). */
  load(): LoadedChain | undefined {
    const statePath = join(this.dir, STATE_FILE);
    const logPath = join(this.dir, LOG_FILE);
    if (!existsSync(statePath)) {
      if (existsSync(logPath)) unlinkSync(logPath);
      this.removeSnapshotsExcept(undefined);
      return undefined;
    }
    const state = JSON.parse(readFileSync(statePath, 'utf8')) as PersistedState;
    const version: unknown = state.version;
    if (version !== 1) throw new Error(`${statePath}: unknown version ${JSON.stringify(version)}`);
    const snapshot = readFileSync(join(this.dir, state.snapshot));
    this.generation = Number(SNAPSHOT_FILE.exec(state.snapshot)?.[1] ?? 0);
    this.removeSnapshotsExcept(state.snapshot);

    const transactions: StoredTransaction[] = [];
    let bytes = 0;
    if (existsSync(logPath)) {
      const log = readFileSync(logPath);
      while (transactions.length < state.transactions) {
        const end = log.indexOf(0x0a, bytes);
        if (end < 0) break;
        transactions.push(JSON.parse(log.toString('utf8', bytes, end)) as StoredTransaction);
        bytes = end + 1;
      }
      // Lines appended after the last state.json belong to no snapshot: drop them.
      if (log.length > bytes) truncateSync(logPath, bytes);
    }
    if (transactions.length !== state.transactions) {
      throw new Error(
        `${logPath} holds ${transactions.length} transactions, ${statePath} expects ${state.transactions}`,
      );
    }
    this.logLines = transactions.length;
    this.logBytes = bytes;
    return { state, snapshot, transactions };
  }

  /**
   * Appends `recorded` to the log and commits a snapshot with its state. Transactions are queued
   * first, so ones whose append failed go out with the next save.
   */
  async save(
    state: Omit<PersistedState, 'snapshot' | 'transactions' | 'version'>,
    snapshot: Uint8Array,
    recorded: StoredTransaction[],
  ): Promise<void> {
    this.queue.push(...recorded);
    const logPath = join(this.dir, LOG_FILE);
    if (this.queue.length > 0) {
      if (this.logSuspect) await truncate(logPath, this.logBytes);
      const text = this.queue.map((t) => `${JSON.stringify(t)}\n`).join('');
      this.logSuspect = true;
      await appendFile(logPath, text);
      this.logSuspect = false;
      this.logLines += this.queue.length;
      this.logBytes += Buffer.byteLength(text);
      this.queue = [];
    }
    const previous = this.generation;
    const name = `svm-${++this.generation}.bin`;
    await this.writeAtomically(name, snapshot);
    const persisted: PersistedState = {
      version: 1,
      ...state,
      snapshot: name,
      transactions: this.logLines,
    };
    await this.writeAtomically(STATE_FILE, JSON.stringify(persisted, null, 2));
    await unlink(join(this.dir, `svm-${previous}.bin`)).catch(() => undefined);
  }

  private async writeAtomically(name: string, data: Uint8Array | string): Promise<void> {
    const path = join(this.dir, name);
    await writeFile(`${path}.tmp`, data);
    await rename(`${path}.tmp`, path);
  }

  private removeSnapshotsExcept(keep: string | undefined): void {
    for (const name of readdirSync(this.dir)) {
      const stale = (SNAPSHOT_FILE.test(name) && name !== keep) || name.endsWith('.tmp');
      if (stale && statSync(join(this.dir, name)).isFile()) unlinkSync(join(this.dir, name));
    }
  }
}
