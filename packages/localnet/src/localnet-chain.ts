import { createPauseInstruction, createResumeInstruction, unpackAccount } from '@solana/spl-token';
import {
  Keypair,
  PublicKey,
  Transaction,
  TransactionInstruction,
  VersionedTransaction,
} from '@solana/web3.js';
import {
  Account,
  Clock,
  EpochSchedule,
  FailedTransactionMetadata,
  LiteSvm,
  SimulatedTransactionInfo,
  TransactionMetadata,
} from 'litesvm/dist/internal';
import { createPublicKey, randomBytes, verify as verifySignature } from 'node:crypto';
import { MintInfo, TOKEN_PROGRAMS } from './mints';
import { AccountReader, AccountView, LoadedKeys } from './account-reader';
import { encodeBase58 } from './base58';
import { ChainClock, SLOTS_PER_EPOCH, SLOT_MS } from './chain-clock';
import { ChainDirectoryLock } from './data-dir-lock';
import { FaucetRequest, faucetTransaction, refillFaucet, setUpMints } from './faucet';
import { PreflightError } from './localnet-errors';
import { LocalnetStore } from './localnet-store';
import { checkTransferFees, TransferFees } from './stablecoin-mints';
import { setUpTestMints, testMint } from './test-mints';
import { UiTokenAmount } from './token-accounts';
import { TransactionErrorJson, transactionErrorJson } from './transaction-errors';
import { compileInner, tokenWrites, UnexecutedEffects } from './unexecuted-effects';
import {
  fromStored,
  InnerInstructionSet,
  SignaturePage,
  TokenBalance,
  TransactionIndex,
  TransactionRecord,
  toStored,
} from './transaction-index';
import {
  computeUnitPrice,
  InvalidTransactionError,
  isWritableIndex,
  memoField,
  Message,
  parseMessage,
  parseTransaction,
  transactionFee,
} from './transaction-wire';
import { transactionErrorMessage } from './transaction-errors';

const TOKEN_2022 = TOKEN_PROGRAMS['token-2022'];
const MEMO_PROGRAM = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');

/** The DER prefix of an Ed25519 public key in SPKI form (the 32 raw key bytes follow). */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export type { AccountView } from './account-reader';
export { BLOCKHASH_VALIDITY_SLOTS, SLOT_MS } from './chain-clock';
export type { FaucetRequest } from './faucet';
export type { TransferFee, TransferFees } from './stablecoin-mints';
export { LocalnetInputError, PreflightError } from './localnet-errors';
export type { TransactionErrorJson } from './transaction-errors';
export type { TokenBalance, TransactionRecord } from './transaction-index';
export { InvalidTransactionError } from './transaction-wire';

/** Debounce of the persistent chain's saves. */
const SAVE_DELAY_MS = 500;
/** Bound of the log-line cache; it is simply emptied when full. */
const CACHE_ENTRIES = 100_000;

export interface LocalnetChainOptions {
  /** State persists under `<dataDir>/localnet/`; without it the chain lives in memory only. */
  dataDir?: string;
  mints: MintInfo[];
  log?: (message: string) => void;
  /**
   * Slots between a transaction's confirmation and its finalization (default
   * `DEFAULT_FINALITY_SLOTS`), as on a real cluster where `finalized` trails `confirmed`.
   */
  finalitySlots?: number;
  /**
   * Token-2022 transfer fees of the PYUSD and USDG mints, in force from epoch 0, when the chain
   * creates them (default none: 0 bps, maximum 0, as issued). A restored chain keeps its mints.
   */
  transferFees?: TransferFees;
}

/** ~3.2 s at 400 ms a slot: long enough for `confirmed` and `finalized` to be told apart. */
export const DEFAULT_FINALITY_SLOTS = 8;

/** Blocks the validator's prioritization-fee cache keeps. */
const RECENT_FEE_SLOTS = 150;
/** `Hash::default()`, base58: the previous blockhash of the genesis block. */
const DEFAULT_HASH = '11111111111111111111111111111111';

export interface Block {
  slot: number;
  parentSlot: number;
  blockHeight: number;
  blockhash: string;
  previousBlockhash: string;
  blockTime: number;
  /** In the order they were processed. */
  transactions: TransactionRecord[];
}

export interface SignatureInfo {
  signature: string;
  slot: number;
  err: TransactionErrorJson | null;
  memo: string | null;
  blockTime: number;
}

export interface SimulationResult {
  err: TransactionErrorJson | null;
  logs: string[];
  unitsConsumed: number;
  /** The requested accounts as they would be after the transaction. */
  accounts: Array<AccountView | null>;
}

type Listener = (record: TransactionRecord) => void;

function failed(
  result: TransactionMetadata | FailedTransactionMetadata | SimulatedTransactionInfo,
): result is FailedTransactionMetadata {
  // Duck-typed: only the failure carries `err()`.
  return typeof (result as Partial<FailedTransactionMetadata>).err === 'function';
}

/** What LiteSVM saw the programs invoke, per top-level instruction that invoked anything. */
function innerInstructionsOf(meta: TransactionMetadata): InnerInstructionSet[] {
  const sets: InnerInstructionSet[] = [];
  meta.innerInstructions().forEach((inner, index) => {
    if (inner.length === 0) return;
    sets.push({
      index,
      instructions: inner.map((entry) => {
        const ix = entry.instruction();
        return {
          programIdIndex: ix.programIdIndex(),
          accounts: [...ix.accounts()],
          data: encodeBase58(Buffer.from(ix.data())),
          stackHeight: entry.stackHeight(),
        };
      }),
    });
  });
  return sets;
}

/**
 * The embedded Solana chain of localnet: LiteSVM plus what a cluster has and LiteSVM lacks, so
 * that web3.js, spl-token and Solana Pay work against it through the JSON-RPC server:
 *
 * - slots and blockhashes that move with wall time, and chain time that `advanceClock` moves
 *   ({@link ChainClock}); LiteSVM's own blockhash check (only its latest hash) is off;
 * - a transaction index (status, balances, logs, signatures per address) that LiteSVM does not
 *   keep, and preflight semantics: a refused transaction leaves no trace and costs no fee;
 * - optional persistence under `<dataDir>/localnet/`, saved in the background after changes.
 *
 * Transactions go to LiteSVM as raw bytes (its fast path), read in JS first because its binding
 * aborts the process on bytes it cannot deserialize. Everything is synchronous: Node runs one
 * call at a time, which serialises the chain.
 */
export class LocalnetChain {
  private readonly listeners = new Set<Listener>();
  private readonly index = new TransactionIndex();
  private readonly accounts: AccountReader;
  /** One string per distinct log line: most lines repeat from transaction to transaction. */
  private readonly logLines = new Map<string, string>();
  /** Transactions recorded since the last save. */
  private unsaved: TransactionRecord[] = [];
  private clockSet = { slot: -1, unixTimestamp: 0 };
  private saveTimer?: NodeJS.Timeout;
  private saving: Promise<void> = Promise.resolve();
  private dirty = false;
  private closed = false;

  private constructor(
    private readonly svm: LiteSvm,
    private readonly seed: Buffer,
    private readonly clock: ChainClock,
    private readonly authority: Keypair,
    readonly mints: readonly MintInfo[],
    private readonly store: LocalnetStore | undefined,
    private readonly log: (message: string) => void,
  ) {
    this.accounts = new AccountReader(svm);
  }

  /**
   * Opens the chain: restores it from `<dataDir>/localnet/` when saved there before, else
   * creates it. Either way each mint of `mints` exists afterwards, with 6 decimals under its
   * token program and the local mint authority (persisted in `mint-authority.json`).
   */
  static async open(options: LocalnetChainOptions): Promise<LocalnetChain> {
    // litesvm 1.5.0 (snapshots) publishes its native binary for linux-x64-gnu only; package.json
    // pins the other platforms' packages to 1.4.1 so that `npm ci` works, and their binaries
    // lack what localnet needs. Say so instead of failing somewhere inside.
    if (
      typeof LiteSvm.fromBytes !== 'function' ||
      typeof LiteSvm.prototype.toBytes !== 'function'
    ) {
      throw new Error(
        `The embedded localnet needs litesvm 1.5.0's native binary, published for linux-x64 ` +
          `(glibc) only; this is ${process.platform}-${process.arch}. Set SOLANA_RPC_URL to ` +
          `another localnet (e.g. solana-test-validator) or run on linux-x64.`,
      );
    }
    checkTransferFees(options.transferFees ?? {});
    const store = options.dataDir !== undefined ? new LocalnetStore(options.dataDir) : undefined;
    // One chain per data directory (@throws ChainDirectoryInUseError): taken before reading.
    const lock = store ? ChainDirectoryLock.acquire(store.directory) : undefined;
    try {
      return await LocalnetChain.openLocked(options, store, lock);
    } catch (error) {
      lock?.release();
      throw error;
    }
  }

  private static async openLocked(
    options: LocalnetChainOptions,
    store: LocalnetStore | undefined,
    lock: ChainDirectoryLock | undefined,
  ): Promise<LocalnetChain> {
    const log = options.log ?? (() => undefined);
    const authority = store ? store.loadOrCreateKeypair() : Keypair.generate();
    const loaded = store?.load();
    const svm = loaded ? LiteSvm.fromBytes(loaded.snapshot) : LocalnetChain.freshSvm();
    // The blockhash window is ours; duplicates are caught by our index, which outlives LiteSVM's
    // bounded history (and keeps it out of every snapshot).
    svm.setBlockhashCheck(false);
    svm.setTransactionHistory(0n);
    svm.setSigverify(true);
    const seed = loaded ? Buffer.from(loaded.state.seed, 'hex') : randomBytes(32);
    const clock = new ChainClock(
      seed,
      loaded
        ? { offsetSeconds: loaded.state.clockOffsetSeconds, slot: loaded.state.slot + 1 }
        : { offsetSeconds: 0, slot: 0 },
    );
    const chain = new LocalnetChain(svm, seed, clock, authority, options.mints, store, log);
    chain.finalitySlots = options.finalitySlots ?? DEFAULT_FINALITY_SLOTS;
    chain.lock = lock;
    for (const stored of loaded?.transactions ?? []) {
      const entry = fromStored(stored, (key) => chain.accounts.address(key));
      entry.logMessages = chain.intern(entry.logMessages);
      chain.index.add(entry);
    }
    // The faucet (the mint authority) pays for building the mints: fund it first.
    refillFaucet(svm, authority.publicKey);
    const stablecoins = setUpMints(svm, chain.mints, authority, log, options.transferFees ?? {});
    const changed = setUpTestMints(svm, authority) || stablecoins;
    chain.syncClock();
    if (store) {
      log(
        loaded
          ? `Localnet restored from ${store.directory} (${chain.index.count} transactions)`
          : `Localnet created in ${store.directory}`,
      );
      // A new or repaired chain is written at once.
      chain.dirty = !loaded || changed;
    }
    await chain.save();
    return chain;
  }

  private static freshSvm(): LiteSvm {
    const svm = new LiteSvm();
    // Epochs of equal length from slot 0, so that epoch maths is one division.
    svm.setEpochSchedule(
      new EpochSchedule(BigInt(SLOTS_PER_EPOCH), BigInt(SLOTS_PER_EPOCH), false, 0n, 0n),
    );
    return svm;
  }

  /** The mint authority, which is also the faucet's source of SOL. */
  get mintAuthority(): PublicKey {
    return this.authority.publicKey;
  }

  get genesisHash(): string {
    return this.clock.genesisHash();
  }

  get transactionCount(): number {
    return this.index.count;
  }

  /** The data directory's lock, held while the chain is open (persistent chains only). */
  private lock?: ChainDirectoryLock;

  /** Slots a confirmed transaction waits before it is finalized. */
  finalitySlots = DEFAULT_FINALITY_SLOTS;

  /** The current slot; block height is the same number (no slot is skipped). */
  slot(): number {
    return this.clock.slot();
  }

  /** Wall-clock milliseconds until `slot` begins (0 once it has). */
  msUntilSlot(slot: number): number {
    return this.clock.msUntil(slot);
  }

  /** Whether `close` was called: the chain then refuses every call that reads or writes state. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** The newest finalized slot: `finalitySlots` behind the current one. */
  finalizedSlot(): number {
    return Math.max(0, this.clock.slot() - this.finalitySlots);
  }

  /** Whether a transaction processed in `slot` is finalized by now. */
  isFinalized(slot: number): boolean {
    return slot + this.finalitySlots <= this.clock.slot();
  }

  /** Milliseconds until a transaction of `slot` is finalized (0 when it is). */
  msUntilFinalized(slot: number): number {
    return Math.max(0, (slot + this.finalitySlots - this.clock.slot() + 1) * SLOT_MS);
  }

  /** Chain time, unix seconds: wall time plus whatever `advanceClock` added. */
  now(): number {
    return this.clock.now();
  }

  /** Moves chain time forward (programs see it through the Clock sysvar); returns the new time. */
  advanceClock(seconds: number): number {
    this.assertOpen();
    const now = this.clock.advance(seconds);
    this.syncClock();
    this.markDirty();
    return now;
  }

  latestBlockhash(): { blockhash: string; lastValidBlockHeight: number; slot: number } {
    return this.clock.latestBlockhash();
  }

  isBlockhashValid(blockhash: string): boolean {
    return this.clock.isBlockhashValid(blockhash);
  }

  /**
   * Sends a transaction (legacy, or v0 with its address lookup tables). With preflight (the
   * default) it is simulated first and refused with a `PreflightError` if that fails, leaving no
   * trace. Without, a transaction that fails in execution is recorded with its error and charged
   * its fee, as on a cluster.
   * @returns the signature (base58)
   * @throws InvalidTransactionError for bytes that are not a sane transaction, or lookups that
   *   do not resolve (the validator refuses both before simulating)
   * @throws PreflightError when refused (AlreadyProcessed, BlockhashNotFound, simulation failure)
   */
  sendTransaction(bytes: Uint8Array, options: { skipPreflight?: boolean } = {}): string {
    this.assertOpen();
    // An own copy: a view into Node's shared pool would pin the whole pool slab in the index.
    const raw = Buffer.allocUnsafeSlow(bytes.length);
    raw.set(bytes);
    const { signature, message, loaded } = this.admit(raw);
    const keys = [...message.accountKeys, ...loaded.writable, ...loaded.readonly];
    if (!options.skipPreflight) {
      const simulation = this.simulate(raw, message);
      if (failed(simulation)) throw this.refusal(simulation);
    }
    const versioned = message.version !== 'legacy';
    const pre = this.accounts.balances(message, keys);
    const result = versioned
      ? this.svm.sendVersionedTransaction(raw)
      : this.svm.sendLegacyTransaction(raw);
    const post = this.accounts.balances(message, keys, pre);
    const failure = failed(result) ? result : undefined;
    // A failure before execution (fee payer unknown or broke, an account loaded twice...)
    // charges nothing and would never land in a block: refuse it as preflight would.
    if (failure && post.lamports[0] === pre.lamports[0]) throw this.refusal(failure);
    const meta = failure ? failure.meta() : (result as TransactionMetadata);
    const address = (key: Buffer) => this.accounts.address(key);
    const record = this.index.add({
      signature,
      slot: this.clockSet.slot,
      blockTime: this.clockSet.unixTimestamp,
      err: failure ? transactionErrorJson(failure.err()) : null,
      fee: Number(transactionFee(message)),
      preBalances: pre.lamports.map(Number),
      postBalances: post.lamports.map(Number),
      preTokenBalances: pre.tokens.filter((t): t is TokenBalance => t !== undefined),
      postTokenBalances: post.tokens.filter((t): t is TokenBalance => t !== undefined),
      logMessages: this.intern(meta.logs()),
      innerInstructions: innerInstructionsOf(meta),
      unitsConsumed: Number(meta.computeUnitsConsumed()),
      raw,
      accountKeys: keys.map(address),
      loadedAddresses:
        message.addressTableLookups.length > 0
          ? { writable: loaded.writable.map(address), readonly: loaded.readonly.map(address) }
          : null,
    });
    if (this.store) this.unsaved.push(record);
    this.markDirty();
    for (const listener of this.listeners) listener(record);
    return signature;
  }

  /**
   * Records a transaction as landed and successful **without executing it**: for a program
   * localnet cannot run (the Subscriptions program, whose binary is not available offline), so
   * that what reads transactions (a confirm verifying a subscribe's instruction bytes) can be
   * tested against it. It is checked as a send is (its bytes, every signature verified, a
   * blockhash still valid, a signature never processed); no fee is charged, and the caller
   * writes the accounts the program would have left (`setAccount`). `effects` says what the
   * program did besides: the instructions it invoked (recorded as the metadata's inner
   * instructions: the Subscriptions program's event self-CPI) and the tokens it moved (written
   * into the token accounts, so the recorded token balances show them). Every address they name
   * must be one of the transaction's, and a source must hold what it gives; else nothing is
   * recorded or written.
   * In-process only, for tests: no JSON-RPC method reaches it.
   * @returns the signature (base58)
   * @throws LocalnetInputError for effects that name other accounts or move what is not there
   */
  recordUnexecuted(bytes: Uint8Array, effects?: UnexecutedEffects): string {
    this.assertOpen();
    const raw = Buffer.allocUnsafeSlow(bytes.length);
    raw.set(bytes);
    const { signature, message, loaded } = this.admit(raw);
    const signed = VersionedTransaction.deserialize(raw);
    const content = signed.message.serialize();
    signed.signatures.forEach((sig, i) => {
      const signer = message.accountKeys[i];
      const key = createPublicKey({
        key: Buffer.concat([ED25519_SPKI_PREFIX, signer]),
        format: 'der',
        type: 'spki',
      });
      if (!verifySignature(null, content, key, sig)) {
        throw new PreflightError('SignatureFailure');
      }
    });
    const keys = [...message.accountKeys, ...loaded.writable, ...loaded.readonly];
    const addresses = keys.map((key) => this.accounts.address(key));
    const innerInstructions = compileInner(effects, addresses, message.instructions.length);
    const moveTokens = tokenWrites(this.svm, effects, addresses);
    const pre = this.accounts.balances(message, keys);
    moveTokens();
    const post = this.accounts.balances(message, keys, pre);
    const programs = message.instructions.map((ix) => addresses[ix.programIdIndex]);
    const record = this.index.add({
      signature,
      slot: this.clockSet.slot,
      blockTime: this.clockSet.unixTimestamp,
      err: null,
      fee: 0,
      preBalances: pre.lamports.map(Number),
      postBalances: post.lamports.map(Number),
      preTokenBalances: pre.tokens.filter((t): t is TokenBalance => t !== undefined),
      postTokenBalances: post.tokens.filter((t): t is TokenBalance => t !== undefined),
      logMessages: programs.map(
        (program) => `Program ${program} recorded without executing (not available on localnet)`,
      ),
      innerInstructions,
      unitsConsumed: 0,
      raw,
      accountKeys: addresses,
      loadedAddresses:
        message.addressTableLookups.length > 0
          ? {
              writable: loaded.writable.map((key) => this.accounts.address(key)),
              readonly: loaded.readonly.map((key) => this.accounts.address(key)),
            }
          : null,
    });
    if (this.store) this.unsaved.push(record);
    this.markDirty();
    for (const listener of this.listeners) listener(record);
    return signature;
  }

  /**
   * Checks a transaction as {@link sendTransaction} does before executing it, and executes and
   * records nothing: for a front end that accepts a transaction now and lands it later, or never
   * (localnet's fault injection). Signatures are verified even with `skipPreflight`, which waives
   * only the refusal of a transaction that fails once running; one that would fail before
   * running (a fee payer without SOL) is refused as `sendTransaction` refuses it.
   * @returns the signature (base58)
   * @throws InvalidTransactionError and PreflightError as `sendTransaction` throws them
   */
  checkTransaction(bytes: Uint8Array, options: { skipPreflight?: boolean } = {}): string {
    this.assertOpen();
    const raw = Buffer.from(bytes);
    const { signature, message } = this.admit(raw);
    const simulation = this.simulate(raw, message);
    if (failed(simulation)) {
      const meta = simulation.meta();
      // What ran logs at least its invocation; nothing ran when it failed before execution.
      const ran = meta.logs().length > 0 || meta.computeUnitsConsumed() > 0n;
      if (!options.skipPreflight || !ran) throw this.refusal(simulation);
    }
    return signature;
  }

  /**
   * Simulates a transaction (legacy or v0) without recording anything. Signatures are checked
   * only with `sigVerify`; `replaceRecentBlockhash` waives the blockhash check.
   */
  simulateTransaction(
    bytes: Uint8Array,
    options: { sigVerify?: boolean; replaceRecentBlockhash?: boolean; accounts?: string[] } = {},
  ): SimulationResult {
    this.assertOpen();
    const raw = Buffer.from(bytes);
    const { message } = parseTransaction(raw);
    const addresses = options.accounts ?? [];
    const blockhash = this.accounts.address(message.recentBlockhash);
    if (!options.replaceRecentBlockhash && !this.clock.isBlockhashValid(blockhash)) {
      return { err: 'BlockhashNotFound', logs: [], unitsConsumed: 0, accounts: [] };
    }
    this.syncClock();
    this.loadAddresses(message);
    if (!options.sigVerify) this.svm.setSigverify(false);
    let result: SimulatedTransactionInfo | FailedTransactionMetadata;
    try {
      result =
        message.version === 'legacy'
          ? this.svm.simulateLegacyTransaction(raw)
          : this.svm.simulateVersionedTransaction(raw);
    } finally {
      this.svm.setSigverify(true);
    }
    const meta = result.meta();
    const outcome = {
      logs: meta.logs(),
      unitsConsumed: Number(meta.computeUnitsConsumed()),
    };
    if (failed(result)) {
      const err = transactionErrorJson(result.err());
      return { ...outcome, err, accounts: addresses.map(() => null) };
    }
    const after = new Map<string, AccountView>();
    for (const entry of result.postAccounts()) {
      after.set(this.accounts.address(entry.address), this.accounts.view(entry.account()));
    }
    return {
      ...outcome,
      err: null,
      accounts: addresses.map((address) => after.get(address) ?? this.getAccount(address)),
    };
  }

  /**
   * Funds a wallet: SOL from the faucet and/or tokens minted by the mint authority (creating the
   * wallet's associated token account if needed), in one real transaction that is indexed like
   * any other.
   * @returns the signatures of the funding transactions
   * @throws LocalnetInputError for an unknown mint or nothing to fund
   */
  faucet(request: FaucetRequest): string[] {
    this.assertOpen();
    if (refillFaucet(this.svm, this.authority.publicKey)) this.markDirty();
    const { blockhash, lastValidBlockHeight } = this.clock.latestBlockhash();
    const bytes = faucetTransaction(request, {
      mints: this.mints,
      authority: this.authority,
      blockhash,
      lastValidBlockHeight,
      serial: this.index.count,
      frozen: (account) => {
        const info = this.svm.getAccount(account.toBytes());
        if (!info) return undefined;
        const data = Buffer.from(info.data());
        const owner = new PublicKey(info.owner());
        const view = { data, owner, lamports: 0, executable: false };
        return unpackAccount(account, view, owner).isFrozen;
      },
    });
    return [this.sendTransaction(bytes)];
  }

  /**
   * Pauses or resumes a pausable mint (the extension test mint `PAUSABLE`, or any mint with
   * Token-2022's Pausable whose authority is the local one), with the token program's own
   * `Pause` / `Resume` instruction: while paused, no transfer, mint or burn of it goes through.
   * @returns the transaction's signature
   */
  setMintPaused(mint: string, paused: boolean): string {
    this.assertOpen();
    const key = new PublicKey(testMint(mint)?.address ?? mint);
    const program = TOKEN_2022;
    const { blockhash, lastValidBlockHeight } = this.clock.latestBlockhash();
    const tx = new Transaction({
      feePayer: this.authority.publicKey,
      blockhash,
      lastValidBlockHeight,
    }).add(
      // Numbered, so that pausing twice in one slot is two transactions (as the faucet's).
      new TransactionInstruction({
        programId: MEMO_PROGRAM,
        keys: [],
        data: Buffer.from(`localnet ${paused ? 'pause' : 'resume'} #${this.index.count}`),
      }),
      paused
        ? createPauseInstruction(key, this.authority.publicKey, [], program)
        : createResumeInstruction(key, this.authority.publicKey, [], program),
    );
    tx.sign(this.authority);
    return this.sendTransaction(tx.serialize({ verifySignatures: false }));
  }

  /**
   * Writes an account as given (lamports, owner, data). For state no transaction here can make,
   * such as the accounts of a program localnet cannot run (the Subscriptions program), so that
   * the service's readers can be tested against it.
   */
  setAccount(
    address: string,
    account: { lamports: bigint; owner: string; data: Uint8Array; executable?: boolean },
  ): void {
    this.assertOpen();
    this.svm.setAccount(
      new PublicKey(address).toBytes(),
      new Account(
        account.lamports,
        account.data,
        new PublicKey(account.owner).toBytes(),
        account.executable ?? false,
        0n,
      ),
    );
    this.markDirty();
  }

  /** An account as it is now, or null when it does not exist. */
  getAccount(address: string): AccountView | null {
    this.assertOpen();
    this.syncClock(); // the Clock sysvar is an account too
    return this.accounts.account(address);
  }

  getBalance(address: string): bigint {
    this.assertOpen();
    return this.accounts.balance(address);
  }

  /** The balance of a token account, or undefined when `address` is not one. */
  getTokenAccountBalance(address: string): UiTokenAmount | undefined {
    this.assertOpen();
    return this.accounts.tokenAccountBalance(address);
  }

  /** The token accounts of `owner`, of one mint or of one token program (or both programs). */
  getTokenAccountsByOwner(
    owner: string,
    filter: { mint?: string; programId?: string },
  ): Array<{ address: string; account: AccountView }> {
    this.assertOpen();
    return this.accounts.tokenAccountsByOwner(owner, filter);
  }

  /** Decimals of a mint, or undefined when `mint` is not one. */
  decimalsOf(mint: Uint8Array): number | undefined {
    return this.accounts.decimalsOf(mint);
  }

  minimumBalanceForRentExemption(dataLength: number): bigint {
    return this.svm.minimumBalanceForRentExemption(BigInt(dataLength));
  }

  /**
   * The fee of a serialized message (legacy or v0), or null when its blockhash is no longer
   * valid.
   * @throws InvalidTransactionError for a malformed message or lookups that do not resolve
   */
  feeForMessage(messageBytes: Uint8Array): bigint | null {
    this.assertOpen();
    const message = parseMessage(Buffer.from(messageBytes));
    this.loadAddresses(message);
    if (!this.clock.isBlockhashValid(this.accounts.address(message.recentBlockhash))) return null;
    return transactionFee(message);
  }

  /** Every account `program` owns, as it is now. */
  getProgramAccounts(program: string): Array<{ address: string; account: AccountView }> {
    this.assertOpen();
    this.syncClock(); // the sysvars are accounts too
    return this.accounts.programAccounts(program);
  }

  /** The first slot whose block localnet has: the chain keeps every block from its genesis. */
  firstAvailableBlock(): number {
    return 0;
  }

  /**
   * The block of `slot` (at most the current slot): its blockhash, its parent's, its time and
   * the transactions recorded in it, in order. Every slot has a block (none is skipped), so its
   * height is its slot.
   */
  getBlock(slot: number): Block {
    const parentSlot = Math.max(0, slot - 1);
    return {
      slot,
      parentSlot,
      blockHeight: slot,
      blockhash: this.clock.blockhashAt(slot),
      // Genesis has no parent: the validator writes the default hash there.
      previousBlockhash: slot === 0 ? DEFAULT_HASH : this.clock.blockhashAt(parentSlot),
      blockTime: this.blockTime(slot),
      transactions: this.index.inSlot(slot),
    };
  }

  /**
   * The unix time of a slot (at most the current slot). A slot with transactions has the time
   * they were processed at (its first one's: chain time can move within a slot); an empty slot
   * of this run has chain time at its start; an empty slot from before a restart, whose wall
   * time is not kept, is placed between the recorded times around it at 400 ms a slot.
   */
  blockTime(slot: number): number {
    const inSlot = this.index.inSlot(slot);
    if (inSlot.length > 0) return inSlot[0].blockTime;
    if (slot >= this.clock.startSlot) return this.clock.timeOfSlot(slot);
    const before = this.index.lastBefore(slot);
    const after = this.index.firstAfter(slot) ?? {
      slot: this.clock.startSlot,
      blockTime: this.clock.timeOfSlot(this.clock.startSlot),
    };
    const seconds = (slots: number) => (slots * SLOT_MS) / 1000;
    const estimate = before
      ? before.blockTime + Math.floor(seconds(slot - before.slot))
      : after.blockTime - Math.ceil(seconds(after.slot - slot));
    return Math.max(before?.blockTime ?? 0, Math.min(estimate, after.blockTime));
  }

  /**
   * The prioritization fees of the last 150 complete slots (micro-lamports per compute unit),
   * oldest first, as the validator's fee cache reports them: a slot's fee is the lowest
   * compute-unit price of its transactions (0 without any), raised, for each of `addresses`, to
   * the lowest price of the transactions that write that account. Localnet has no fee market:
   * the prices are what its own transactions bid.
   */
  recentPrioritizationFees(
    addresses: string[],
  ): Array<{ slot: number; prioritizationFee: number }> {
    const last = this.clock.slot() - 1;
    const fees: Array<{ slot: number; prioritizationFee: number }> = [];
    for (let slot = Math.max(0, last - RECENT_FEE_SLOTS + 1); slot <= last; slot++) {
      let blockMin: bigint | undefined;
      const accountMin = new Map<string, bigint>();
      for (const record of this.index.inSlot(slot)) {
        const { message } = parseTransaction(record.raw);
        const price = computeUnitPrice(message);
        blockMin = blockMin === undefined || price < blockMin ? price : blockMin;
        record.accountKeys.forEach((key, i) => {
          if (!addresses.includes(key) || !isWritableIndex(message, i)) return;
          const known = accountMin.get(key);
          if (known === undefined || price < known) accountMin.set(key, price);
        });
      }
      let fee = blockMin ?? 0n;
      for (const price of accountMin.values()) if (price > fee) fee = price;
      fees.push({ slot, prioritizationFee: Number(fee) });
    }
    return fees;
  }

  getTransaction(signature: string): TransactionRecord | undefined {
    return this.index.get(signature);
  }

  getSignatureStatus(signature: string): { slot: number; err: TransactionErrorJson | null } | null {
    const record = this.index.get(signature);
    return record ? { slot: record.slot, err: record.err } : null;
  }

  /** Transactions naming `address`, newest first, paged as `getSignaturesForAddress` pages. */
  getSignaturesForAddress(address: string, page: SignaturePage = {}): SignatureInfo[] {
    return this.index.forAddress(address, page).map((record) => ({
      signature: record.signature,
      slot: record.slot,
      err: record.err,
      memo: memoField(parseTransaction(record.raw).message),
      blockTime: record.blockTime,
    }));
  }

  /** Calls `listener` with every transaction recorded from now on; returns the unsubscribe. */
  onTransaction(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Writes the state now (persistent chains only); resolves when it is on disk. */
  save(): Promise<void> {
    clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    const run = this.saving.then(() => this.writeState());
    this.saving = run.catch((error: unknown) => {
      this.log(`Localnet: saving failed, will retry: ${String(error)}`);
      if (!this.closed) this.markDirty();
    });
    return run;
  }

  /** Saves (when persistent) and stops; the chain refuses further calls. */
  async close(): Promise<void> {
    if (this.closed) return;
    // Saved even when idle: the restarted chain continues from the slot it stopped at.
    this.dirty = this.store !== undefined;
    await this.save();
    this.closed = true;
    this.listeners.clear();
    this.lock?.release();
  }

  /** Records the URL this chain serves, so another process on its data directory reuses it. */
  announce(url: string): void {
    this.lock?.announce(url);
  }

  private async writeState(): Promise<void> {
    if (!this.store || !this.dirty) return;
    this.dirty = false;
    // Taken together, synchronously: the snapshot holds exactly these transactions' effects.
    const recorded = this.unsaved.map(toStored);
    this.unsaved = [];
    const snapshot = this.svm.toBytes();
    const state = {
      seed: this.seed.toString('hex'),
      clockOffsetSeconds: this.clock.offset,
      slot: this.clock.slot(),
    };
    await this.store.save(state, snapshot, recorded);
  }

  private markDirty(): void {
    if (!this.store) return;
    this.dirty = true;
    if (this.saveTimer || this.closed) return;
    this.saveTimer = setTimeout(() => void this.save().catch(() => undefined), SAVE_DELAY_MS);
    this.saveTimer.unref();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('The localnet chain is closed');
  }

  /**
   * The keys a message loads from address lookup tables at the current slot.
   * @throws InvalidTransactionError when a lookup does not resolve (the validator refuses such a
   *   transaction when sanitizing it, before any simulation)
   */
  private loadAddresses(message: Message): LoadedKeys {
    if (message.addressTableLookups.length === 0) return { writable: [], readonly: [] };
    const loaded = this.accounts.loadAddresses(message, this.clock.slot());
    if (typeof loaded === 'string') {
      throw new InvalidTransactionError(transactionErrorMessage(loaded));
    }
    return loaded;
  }

  /**
   * The checks every sent transaction passes before anything runs: its bytes, a signature not
   * processed before, a blockhash still valid, lookups that resolve. Syncs LiteSVM's clock.
   */
  private admit(raw: Buffer): { signature: string; message: Message; loaded: LoadedKeys } {
    const { signatures, message } = parseTransaction(raw);
    const signature = encodeBase58(signatures[0]);
    if (this.index.has(signature)) throw new PreflightError('AlreadyProcessed');
    if (!this.clock.isBlockhashValid(this.accounts.address(message.recentBlockhash))) {
      throw new PreflightError('BlockhashNotFound');
    }
    this.syncClock();
    return { signature, message, loaded: this.loadAddresses(message) };
  }

  private simulate(
    raw: Buffer,
    message: Message,
  ): SimulatedTransactionInfo | FailedTransactionMetadata {
    return message.version === 'legacy'
      ? this.svm.simulateLegacyTransaction(raw)
      : this.svm.simulateVersionedTransaction(raw);
  }

  private refusal(result: FailedTransactionMetadata): PreflightError {
    const meta = result.meta();
    return new PreflightError(
      transactionErrorJson(result.err()),
      meta.logs(),
      Number(meta.computeUnitsConsumed()),
    );
  }

  private intern(lines: string[]): string[] {
    return lines.map((line) => {
      const known = this.logLines.get(line);
      if (known !== undefined) return known;
      if (this.logLines.size >= CACHE_ENTRIES) this.logLines.clear();
      this.logLines.set(line, line);
      return line;
    });
  }

  /** Sets LiteSVM's clock to chain time and the current slot (when either moved). */
  private syncClock(): void {
    const slot = this.clock.slot();
    const unixTimestamp = this.clock.now();
    if (slot === this.clockSet.slot && unixTimestamp === this.clockSet.unixTimestamp) return;
    const epoch = Math.floor(slot / SLOTS_PER_EPOCH);
    const epochStart = unixTimestamp - Math.floor(((slot % SLOTS_PER_EPOCH) * SLOT_MS) / 1000);
    this.svm.setClock(
      new Clock(
        BigInt(slot),
        BigInt(epochStart),
        BigInt(epoch),
        BigInt(epoch + 1),
        BigInt(unixTimestamp),
      ),
    );
    this.clockSet = { slot, unixTimestamp };
  }
}
