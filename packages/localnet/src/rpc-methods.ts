/**
 * The Solana JSON-RPC methods localnet serves, in the shapes of the real RPC as web3.js v1,
 * `@solana/kit`, spl-token and Solana Pay read them, plus the `localnet_*` dev methods.
 */
import bs58 from 'bs58';
import { INVALID_PARAMS, INVALID_REQUEST, RpcError } from './json-rpc';
import { AccountView, LocalnetChain, TransactionRecord } from './localnet-chain';
import { SLOTS_PER_EPOCH } from './chain-clock';
import { faultSwitches, LocalnetFaults } from './faults';
import { parseTokenData } from './parsed-token-data';
import {
  decodeMint,
  isMintData,
  isTokenAccountData,
  tokenProgramOfAddress,
  uiTokenAmount,
} from './token-accounts';
import { encodeTransactionWithMeta, EncodeOptions, TransactionEncoding } from './transaction-json';
import { InvalidTransactionError } from './transaction-wire';

export type RpcHandler = (params: unknown[]) => unknown;

const U64_MAX = 2n ** 64n - 1n;
const MAX_SIGNATURE_STATUSES = 256;
const MAX_MULTIPLE_ACCOUNTS = 100;
const MAX_SIGNATURES_LIMIT = 1000;
/** The real RPC refuses base58 account data past this size. */
const MAX_BASE58_BYTES = 128;
/** `getRecentPrioritizationFees` takes at most as many accounts as a transaction may lock. */
const MAX_TX_ACCOUNT_LOCKS = 128;
const MAX_GET_PROGRAM_ACCOUNT_FILTERS = 4;
/** A memcmp filter compares at most 128 bytes; their base58 and base64 lengths. */
const MAX_MEMCMP_BYTES = 128;
const MAX_MEMCMP_BASE58 = 175;
const MAX_MEMCMP_BASE64 = 172;
/** The validator's codes for a block it does not have. */
const BLOCK_NOT_AVAILABLE = -32004;
const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

// --- Parameters: JSON in, narrowed or refused with -32602. ---

function invalid(message: string): RpcError {
  return new RpcError(INVALID_PARAMS, message);
}

function stringAt(params: unknown[], index: number, name: string): string {
  const value = params[index];
  if (typeof value !== 'string') throw invalid(`Invalid params: ${name} must be a string`);
  return value;
}

/**
 * Whether a request reads at `finalized`: the validator's default when no commitment is given
 * (`@solana/kit` leaves out a `finalized` it is asked for, as the server default).
 */
function isFinalized(config: Record<string, unknown>): boolean {
  return config.commitment === undefined || config.commitment === 'finalized';
}

function configAt(params: unknown[], index: number): Record<string, unknown> {
  const value = params[index];
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalid('Invalid params: the configuration must be an object');
  }
  return value as Record<string, unknown>;
}

function address(value: unknown, name = 'address'): string {
  if (typeof value !== 'string') throw invalid(`Invalid params: ${name} must be a string`);
  const bytes = bs58.decodeUnsafe(value);
  if (bytes?.length !== 32) throw invalid(`Invalid param: ${name} is not a valid public key`);
  return value;
}

function optionalString(config: Record<string, unknown>, name: string): string | undefined {
  const value = config[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalid(`Invalid params: ${name} must be a string`);
  return value;
}

function optionalBoolean(config: Record<string, unknown>, name: string): boolean {
  const value = config[name];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw invalid(`Invalid params: ${name} must be a boolean`);
  return value;
}

/** A boolean that defaults to true when absent (`getBlock`'s `rewards`). */
function booleanOr(config: Record<string, unknown>, name: string, fallback: boolean): boolean {
  return config[name] === undefined || config[name] === null
    ? fallback
    : optionalBoolean(config, name);
}

/** One of `allowed`, or `fallback` when absent; refused with the serde message otherwise. */
function oneOf<T extends string>(
  config: Record<string, unknown>,
  name: string,
  allowed: readonly T[],
  fallback: T,
): T {
  const value = optionalString(config, name) ?? fallback;
  if (!allowed.includes(value as T)) {
    throw invalid(
      `Invalid params: unknown variant \`${value}\`, expected one of ${allowed.map((a) => `\`${a}\``).join(', ')}`,
    );
  }
  return value as T;
}

/**
 * The commitment of a method that reads blocks or transaction history, which the validator
 * serves at `confirmed` and `finalized` only (default `finalized`).
 */
function historyCommitment(config: Record<string, unknown>): 'confirmed' | 'finalized' {
  const commitment = optionalString(config, 'commitment') ?? 'finalized';
  if (commitment === 'confirmed' || commitment === 'finalized') return commitment;
  if (commitment === 'processed') {
    throw invalid('Method does not support commitment below `confirmed`');
  }
  throw invalid(`Invalid params: unknown variant \`${commitment}\``);
}

/** `maxSupportedTransactionVersion`: undefined (legacy only) or a version number. */
function maxSupportedVersion(config: Record<string, unknown>): number | undefined {
  const value = config.maxSupportedTransactionVersion;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 255) {
    throw invalid('Invalid params: maxSupportedTransactionVersion must be a u8');
  }
  return value;
}

/** A slot number; one past what a number holds exactly cannot be a slot of this chain anyway. */
function slotAt(params: unknown[], index: number): number {
  return Number(u64(params[index], 'slot'));
}

/** A u64 given as a JSON number (safe integer) or a decimal string. */
function u64(value: unknown, name: string): bigint {
  let parsed: bigint | undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) {
    parsed = BigInt(value);
  } else if (typeof value === 'string' && /^\d{1,20}$/.test(value)) {
    parsed = BigInt(value);
  }
  if (parsed === undefined || parsed > U64_MAX) {
    throw invalid(`Invalid params: ${name} must be a non-negative integer (u64)`);
  }
  return parsed;
}

function wireBytes(encoded: string, encoding: string | undefined): Buffer {
  if (encoding === 'base64') return Buffer.from(encoded, 'base64');
  if (encoding === undefined || encoding === 'base58') {
    try {
      return Buffer.from(bs58.decode(encoded));
    } catch {
      throw invalid('invalid base58 encoding');
    }
  }
  throw invalid(`Invalid params: unsupported encoding ${encoding}`);
}

// --- Result shapes. ---

/** How a method writes account data when the request does not say. */
type DefaultEncoding = 'binary' | 'base64';

/**
 * An account in the `UiAccount` shape. `binary` (the default of `getAccountInfo` and
 * `getProgramAccounts`) is the legacy form: the data as a bare base58 string. Base58 of more than
 * 128 bytes is refused with -32600, as the validator refuses it (after slicing); `jsonParsed`
 * falls back to base64 for what it cannot parse.
 */
function encodeAccount(
  chain: LocalnetChain,
  account: AccountView | null,
  config: Record<string, unknown>,
  defaultEncoding: DefaultEncoding = 'base64',
): Record<string, unknown> | null {
  if (!account) return null;
  const encoding = optionalString(config, 'encoding') ?? defaultEncoding;
  let data: unknown;
  if (encoding === 'jsonParsed') {
    const program = tokenProgramOfAddress(account.owner);
    data = program ? parseTokenData(program, account.data, (m) => chain.decimalsOf(m)) : undefined;
  }
  if (data === undefined) {
    const bytes = sliced(account.data, config.dataSlice);
    if (encoding === 'base58' || encoding === 'binary') {
      if (bytes.length > MAX_BASE58_BYTES) {
        throw new RpcError(
          INVALID_REQUEST,
          'Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.',
        );
      }
      data = encoding === 'binary' ? bs58.encode(bytes) : [bs58.encode(bytes), 'base58'];
    } else if (encoding === 'base64' || encoding === 'jsonParsed') {
      data = [bytes.toString('base64'), 'base64'];
    } else {
      throw invalid(`Invalid params: unsupported encoding ${encoding}`);
    }
  }
  return {
    data,
    executable: account.executable,
    lamports: Number(account.lamports),
    owner: account.owner,
    // u64::MAX for rent-exempt accounts: written exactly, as the validator writes it.
    rentEpoch: exactU64(account.rentEpoch),
    space: account.data.length,
  };
}

/** A u64 as a JSON number, kept a bigint past 2^53 (the server writes those digits exactly). */
function exactU64(value: bigint): number | bigint {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
}

/** `dataSlice: {offset, length}` applied (both required, as the validator's serde requires). */
function sliced(data: Buffer, slice: unknown): Buffer {
  if (slice === undefined || slice === null) return data;
  const { offset, length } = slice as { offset?: unknown; length?: unknown };
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length)) {
    throw invalid('Invalid params: dataSlice needs an offset and a length');
  }
  if ((offset as number) < 0 || (length as number) < 0) {
    throw invalid('Invalid params: dataSlice offset and length must be non-negative');
  }
  return data.subarray(offset as number, (offset as number) + (length as number));
}

/** A test on account data: a `getProgramAccounts` filter. */
type AccountFilter = (data: Buffer) => boolean;

/**
 * `filters` of `getProgramAccounts`: at most 4 of `{dataSize}`, `{memcmp: {offset, bytes,
 * encoding}}` (base58 by default, or base64; at most 128 bytes) and `tokenAccountState`, refused
 * with -32602 and the validator's messages otherwise.
 */
function accountFilters(value: unknown): AccountFilter[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalid('Invalid params: filters must be an array');
  if (value.length > MAX_GET_PROGRAM_ACCOUNT_FILTERS) {
    throw invalid(`Too many filters provided; max ${MAX_GET_PROGRAM_ACCOUNT_FILTERS}`);
  }
  return value.map(accountFilter);
}

function accountFilter(value: unknown): AccountFilter {
  // `tokenAccountState` is a unit variant: a bare string in JSON.
  if (value === 'tokenAccountState') return (data) => isTokenAccountData(data);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('Invalid params: a filter must be an object');
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length !== 1) throw invalid('Invalid params: a filter has exactly one kind');
  const [kind, spec] = entries[0];
  if (kind === 'dataSize') {
    const size = u64(spec, 'dataSize');
    return (data) => BigInt(data.length) === size;
  }
  if (kind === 'memcmp') return memcmpFilter(spec);
  if (kind === 'tokenAccountState' && (spec === null || isEmptyObject(spec))) {
    return (data) => isTokenAccountData(data);
  }
  throw invalid(
    `Invalid params: unknown variant \`${kind}\`, expected one of \`dataSize\`, \`memcmp\`, \`tokenAccountState\``,
  );
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

function memcmpFilter(spec: unknown): AccountFilter {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    throw invalid('Invalid params: memcmp must be an object');
  }
  const { offset, bytes, encoding } = spec as Record<string, unknown>;
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0) {
    throw invalid('Invalid params: memcmp offset must be a non-negative integer');
  }
  const expected = memcmpBytes(bytes, encoding ?? 'base58');
  return (data) =>
    offset + expected.length <= data.length &&
    data.subarray(offset, offset + expected.length).equals(expected);
}

/** The bytes a memcmp filter compares, checked as the validator's `RpcFilterType::verify`. */
function memcmpBytes(bytes: unknown, encoding: unknown): Buffer {
  const tooLarge = () => invalid('Invalid param: DataTooLarge');
  if (Array.isArray(bytes)) {
    if (!bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
      throw invalid('Invalid params: memcmp bytes must be bytes');
    }
    if (bytes.length > MAX_MEMCMP_BYTES) throw tooLarge();
    return Buffer.from(bytes as number[]);
  }
  if (typeof bytes !== 'string') throw invalid('Invalid params: memcmp bytes must be a string');
  let decoded: Buffer;
  if (encoding === 'base58') {
    if (bytes.length > MAX_MEMCMP_BASE58) throw tooLarge();
    const bad = [...bytes].findIndex((c) => !BASE58_ALPHABET.includes(c));
    if (bad >= 0) {
      throw invalid(
        `Invalid param: Base58DecodeError(InvalidCharacter { character: '${bytes[bad]}', index: ${bad} })`,
      );
    }
    decoded = Buffer.from(bs58.decode(bytes));
  } else if (encoding === 'base64') {
    if (bytes.length > MAX_MEMCMP_BASE64) throw tooLarge();
    if (!BASE64.test(bytes)) throw invalid('Invalid param: Base64DecodeError(InvalidByte)');
    decoded = Buffer.from(bytes, 'base64');
  } else {
    throw invalid(
      `Invalid params: unknown variant \`${String(encoding)}\`, expected one of \`base58\`, \`base64\`, \`bytes\``,
    );
  }
  if (decoded.length > MAX_MEMCMP_BYTES) throw tooLarge();
  return decoded;
}

/** Encoding and version options shared by `getTransaction` and `getBlock`. */
function transactionOptions(
  config: Record<string, unknown>,
): Pick<EncodeOptions, 'encoding' | 'maxSupportedTransactionVersion'> {
  return {
    encoding: oneOf<TransactionEncoding>(
      config,
      'encoding',
      ['json', 'jsonParsed', 'base58', 'base64'],
      'json',
    ),
    maxSupportedTransactionVersion: maxSupportedVersion(config),
  };
}

function transactionJson(record: TransactionRecord, config: Record<string, unknown>): unknown {
  return {
    slot: record.slot,
    blockTime: record.blockTime,
    ...encodeTransactionWithMeta(record, {
      ...transactionOptions(config),
      details: 'full',
      rewards: true,
    }),
  };
}

/** Whether `a`'s key sorts before `b`'s, byte-wise (the validator's sorted scan order). */
function byKey(a: { address: string }, b: { address: string }): number {
  return Buffer.compare(bs58.decode(a.address), bs58.decode(b.address));
}

/**
 * The method table of a localnet chain. `faults` are the server's switches: `sendTransaction`,
 * `getSignatureStatuses`, `getTransaction`, `getSignaturesForAddress` and
 * `getRecentPrioritizationFees` go through them.
 */
export function localnetMethods(
  chain: LocalnetChain,
  faults: LocalnetFaults,
): Map<string, RpcHandler> {
  const context = () => ({ slot: chain.slot() });
  const withContext = (value: unknown) => ({ context: context(), value });

  const methods: Record<string, RpcHandler> = {
    getHealth: () => 'ok',
    getVersion: () => ({ 'solana-core': '2.2.0', 'feature-set': 0 }),
    getGenesisHash: () => chain.genesisHash,
    // `finalized` trails the current slot by the chain's finality lag.
    getSlot: (params) => (isFinalized(configAt(params, 0)) ? chain.finalizedSlot() : chain.slot()),
    getBlockHeight: (params) =>
      isFinalized(configAt(params, 0)) ? chain.finalizedSlot() : chain.slot(),
    getTransactionCount: () => chain.transactionCount,
    getEpochInfo: (params) => {
      const slot = isFinalized(configAt(params, 0)) ? chain.finalizedSlot() : chain.slot();
      return {
        absoluteSlot: slot,
        blockHeight: slot,
        epoch: Math.floor(slot / SLOTS_PER_EPOCH),
        slotIndex: slot % SLOTS_PER_EPOCH,
        slotsInEpoch: SLOTS_PER_EPOCH,
        transactionCount: chain.transactionCount,
      };
    },
    getEpochSchedule: () => ({
      slotsPerEpoch: SLOTS_PER_EPOCH,
      leaderScheduleSlotOffset: SLOTS_PER_EPOCH,
      warmup: false,
      firstNormalEpoch: 0,
      firstNormalSlot: 0,
    }),

    getLatestBlockhash: () => {
      const { blockhash, lastValidBlockHeight, slot } = chain.latestBlockhash();
      return { context: { slot }, value: { blockhash, lastValidBlockHeight } };
    },
    isBlockhashValid: (params) =>
      withContext(chain.isBlockhashValid(stringAt(params, 0, 'blockhash'))),
    getFeeForMessage: (params) => {
      const encoded = stringAt(params, 0, 'message');
      if (!BASE64.test(encoded)) throw invalid('invalid base64 encoding');
      let fee: bigint | null;
      try {
        fee = chain.feeForMessage(Buffer.from(encoded, 'base64'));
      } catch (error) {
        // The validator's wording for a message, not a transaction.
        if (error instanceof InvalidTransactionError) {
          throw invalid(`invalid transaction message: ${error.message}`);
        }
        throw error;
      }
      return withContext(fee === null ? null : Number(fee));
    },
    getRecentPrioritizationFees: (params) => {
      const addresses = params[0] ?? [];
      if (!Array.isArray(addresses)) throw invalid('Invalid params: expected an array of keys');
      if (addresses.length > MAX_TX_ACCOUNT_LOCKS) {
        throw invalid(`Too many inputs provided; max ${MAX_TX_ACCOUNT_LOCKS}`);
      }
      return chain
        .recentPrioritizationFees(addresses.map((a: unknown) => address(a)))
        .map((entry) => ({
          ...entry,
          prioritizationFee: faults.prioritizationFee(entry.prioritizationFee),
        }));
    },
    getMinimumBalanceForRentExemption: (params) => {
      const length = params[0];
      if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0) {
        throw invalid('Invalid params: the data length must be a non-negative integer');
      }
      return Number(chain.minimumBalanceForRentExemption(length));
    },

    sendTransaction: (params) => {
      const config = configAt(params, 1);
      const bytes = wireBytes(
        stringAt(params, 0, 'transaction'),
        optionalString(config, 'encoding'),
      );
      return faults.sendTransaction(bytes, {
        skipPreflight: optionalBoolean(config, 'skipPreflight'),
      });
    },
    simulateTransaction: (params) => {
      const config = configAt(params, 1);
      const sigVerify = optionalBoolean(config, 'sigVerify');
      const replaceRecentBlockhash = optionalBoolean(config, 'replaceRecentBlockhash');
      if (sigVerify && replaceRecentBlockhash) {
        throw invalid('sigVerify may not be used with replaceRecentBlockhash');
      }
      const accountsConfig = configAt([config.accounts], 0);
      const addresses = accountsConfig.addresses;
      if (addresses !== undefined && !Array.isArray(addresses)) {
        throw invalid('Invalid params: accounts.addresses must be an array');
      }
      // The validator returns simulated accounts in base64 or jsonParsed only.
      if (['base58', 'binary'].includes(optionalString(accountsConfig, 'encoding') ?? '')) {
        throw invalid('base58 encoding not supported');
      }
      const requested = (addresses ?? []).map((a: unknown) => address(a));
      const bytes = wireBytes(
        stringAt(params, 0, 'transaction'),
        optionalString(config, 'encoding'),
      );
      const result = chain.simulateTransaction(bytes, {
        sigVerify,
        replaceRecentBlockhash,
        accounts: requested,
      });
      const latest = chain.latestBlockhash();
      return {
        context: { slot: latest.slot },
        value: {
          err: result.err,
          logs: result.logs,
          accounts:
            addresses === undefined
              ? null
              : result.accounts.map((account) => encodeAccount(chain, account, accountsConfig)),
          unitsConsumed: result.unitsConsumed,
          returnData: null,
          innerInstructions: null,
          replacementBlockhash: replaceRecentBlockhash
            ? { blockhash: latest.blockhash, lastValidBlockHeight: latest.lastValidBlockHeight }
            : null,
        },
      };
    },
    getSignatureStatuses: (params) => {
      const signatures = params[0];
      if (!Array.isArray(signatures) || signatures.some((s) => typeof s !== 'string')) {
        throw invalid('Invalid params: expected an array of signatures');
      }
      if (signatures.length > MAX_SIGNATURE_STATUSES) {
        throw invalid(`Too many inputs provided; max ${MAX_SIGNATURE_STATUSES}`);
      }
      // A lagging RPC node: it has seen none of them yet.
      if (faults.statusesHidden) return withContext(signatures.map(() => null));
      return withContext(
        (signatures as string[]).map((signature) => {
          const status = chain.getSignatureStatus(signature);
          if (!status) return null;
          // Confirmed when processed; finalized once the finality lag has passed.
          const finalized = chain.isFinalized(status.slot);
          return {
            slot: status.slot,
            confirmations: finalized ? null : chain.slot() - status.slot,
            err: status.err,
            status: status.err === null ? { Ok: null } : { Err: status.err },
            confirmationStatus: finalized ? 'finalized' : 'confirmed',
          };
        }),
      );
    },
    getTransaction: (params) => {
      const signature = stringAt(params, 0, 'signature');
      // The legacy form passes the encoding alone.
      const config = typeof params[1] === 'string' ? { encoding: params[1] } : configAt(params, 1);
      const commitment = historyCommitment(config);
      // A provider that lists the transaction but does not serve it (yet, or any more).
      if (faults.isUnserved(signature)) return null;
      const record = chain.getTransaction(signature);
      if (record && commitment === 'finalized' && !chain.isFinalized(record.slot)) return null;
      return record ? transactionJson(record, config) : null;
    },
    getBlock: (params) => {
      const slot = slotAt(params, 0);
      // The legacy form passes the encoding alone.
      const config = typeof params[1] === 'string' ? { encoding: params[1] } : configAt(params, 1);
      const commitment = historyCommitment(config);
      const details = oneOf(
        config,
        'transactionDetails',
        ['full', 'accounts', 'signatures', 'none'],
        'full',
      );
      const options = {
        ...transactionOptions(config),
        rewards: booleanOr(config, 'rewards', true),
      };
      // Confirmed blocks up to the current slot; finalized ones trail it by the finality lag.
      const newest = commitment === 'finalized' ? chain.finalizedSlot() : chain.slot();
      if (slot > newest) {
        throw new RpcError(BLOCK_NOT_AVAILABLE, `Block not available for slot ${slot}`);
      }
      const { transactions, ...block } = chain.getBlock(slot);
      return {
        blockHeight: block.blockHeight,
        blockTime: block.blockTime,
        blockhash: block.blockhash,
        parentSlot: block.parentSlot,
        previousBlockhash: block.previousBlockhash,
        ...(details === 'full' || details === 'accounts'
          ? {
              transactions: transactions.map((record) =>
                encodeTransactionWithMeta(record, { ...options, details }),
              ),
            }
          : {}),
        ...(details === 'signatures'
          ? { signatures: transactions.map((record) => record.signature) }
          : {}),
        // Localnet has no leader to reward.
        ...(options.rewards ? { rewards: [] } : {}),
      };
    },
    getBlockTime: (params) => {
      const slot = slotAt(params, 0);
      // Any slot the chain has reached has a block and a time (confirmed or finalized).
      if (slot > chain.slot()) {
        throw new RpcError(BLOCK_NOT_AVAILABLE, `Block not available for slot ${slot}`);
      }
      return chain.blockTime(slot);
    },
    getFirstAvailableBlock: () => chain.firstAvailableBlock(),
    getSignaturesForAddress: (params) => {
      const target = address(params[0]);
      const config = configAt(params, 1);
      const commitment = historyCommitment(config);
      const limit = config.limit ?? MAX_SIGNATURES_LIMIT;
      if (
        typeof limit !== 'number' ||
        !Number.isInteger(limit) ||
        limit < 1 ||
        limit > MAX_SIGNATURES_LIMIT
      ) {
        throw invalid(`Invalid limit; max ${MAX_SIGNATURES_LIMIT}`);
      }
      return chain
        .getSignaturesForAddress(target, {
          before: optionalString(config, 'before'),
          until: optionalString(config, 'until'),
          // A provider that caps its pages answers fewer than asked: not the end of the history.
          limit: faults.signaturePage(limit),
        })
        .filter((info) => commitment !== 'finalized' || chain.isFinalized(info.slot))
        .map((info) => ({
          ...info,
          confirmationStatus: chain.isFinalized(info.slot) ? 'finalized' : 'confirmed',
        }));
    },

    getAccountInfo: (params) => {
      const account = chain.getAccount(address(params[0]));
      return withContext(encodeAccount(chain, account, configAt(params, 1), 'binary'));
    },
    getMultipleAccounts: (params) => {
      const addresses = params[0];
      if (!Array.isArray(addresses)) throw invalid('Invalid params: expected an array of keys');
      if (addresses.length > MAX_MULTIPLE_ACCOUNTS) {
        throw invalid(`Too many inputs provided; max ${MAX_MULTIPLE_ACCOUNTS}`);
      }
      const config = configAt(params, 1);
      return withContext(
        addresses.map((a: unknown) => encodeAccount(chain, chain.getAccount(address(a)), config)),
      );
    },
    getBalance: (params) => withContext(Number(chain.getBalance(address(params[0])))),
    getTokenAccountBalance: (params) => {
      const account = address(params[0]);
      const balance = chain.getTokenAccountBalance(account);
      if (!balance) {
        throw invalid(
          chain.getAccount(account)
            ? 'Invalid param: not a Token account'
            : 'Invalid param: could not find account',
        );
      }
      return withContext(balance);
    },
    getTokenAccountsByOwner: (params) => {
      const owner = address(params[0], 'owner');
      const filter = configAt(params, 1);
      const mint = filter.mint !== undefined ? address(filter.mint, 'mint') : undefined;
      const programId =
        filter.programId !== undefined ? address(filter.programId, 'programId') : undefined;
      if ((mint === undefined) === (programId === undefined)) {
        throw invalid('Invalid params: give either mint or programId');
      }
      if (programId !== undefined && !tokenProgramOfAddress(programId)) {
        throw invalid('Invalid param: unrecognized Token program id');
      }
      const config = configAt(params, 2);
      return withContext(
        chain.getTokenAccountsByOwner(owner, { mint, programId }).map((entry) => ({
          pubkey: entry.address,
          account: encodeAccount(chain, entry.account, config, 'binary'),
        })),
      );
    },
    getTokenSupply: (params) => {
      const mint = address(params[0], 'mint');
      const account = chain.getAccount(mint);
      if (!account) throw invalid('Invalid param: could not find account');
      if (!tokenProgramOfAddress(account.owner)) throw invalid('Invalid param: not a Token mint');
      if (!isMintData(account.data)) throw invalid('Invalid param: mint could not be unpacked');
      const { supply, decimals } = decodeMint(account.data);
      return withContext(uiTokenAmount(supply, decimals));
    },
    getProgramAccounts: (params) => {
      const program = address(params[0], 'program id');
      const config = configAt(params, 1);
      const filters = accountFilters(config.filters);
      const accounts = chain
        .getProgramAccounts(program)
        .filter((entry) => filters.every((allows) => allows(entry.account.data)))
        .sort(byKey)
        .map((entry) => ({
          pubkey: entry.address,
          account: encodeAccount(chain, entry.account, config, 'binary'),
        }));
      return optionalBoolean(config, 'withContext') ? withContext(accounts) : accounts;
    },

    requestAirdrop: (params) => {
      const wallet = address(params[0]);
      const lamports = u64(params[1], 'lamports');
      if (lamports === 0n) throw invalid('Invalid params: lamports must be positive');
      return chain.faucet({ wallet, lamports })[0];
    },

    localnet_faucet: (params) => {
      const request = configAt(params, 0);
      const wallet = address(request.walletAddress, 'walletAddress');
      const lamports =
        request.lamports !== undefined ? u64(request.lamports, 'lamports') : undefined;
      const mint = optionalString(request, 'mint');
      const amount = request.amount !== undefined ? u64(request.amount, 'amount') : undefined;
      return { signatures: chain.faucet({ wallet, lamports, mint, amount }) };
    },
    localnet_advanceClock: (params) => {
      const seconds = configAt(params, 0).seconds;
      if (typeof seconds !== 'number' || !Number.isSafeInteger(seconds) || seconds < 0) {
        throw invalid('Invalid params: seconds must be a non-negative integer');
      }
      try {
        return { unixTimestamp: chain.advanceClock(seconds) };
      } catch (error) {
        // Past the clock's ceiling: refused, nothing moved.
        if (error instanceof RangeError) throw invalid(`Invalid params: ${error.message}`);
        throw error;
      }
    },
    localnet_setMintPaused: (params) => {
      const request = configAt(params, 0);
      const mint = optionalString(request, 'mint');
      if (mint === undefined) throw invalid('Invalid params: mint is required');
      if (typeof request.paused !== 'boolean') {
        throw invalid('Invalid params: paused must be a boolean');
      }
      return { signature: chain.setMintPaused(mint, request.paused) };
    },
    localnet_getClock: () => ({ unixTimestamp: chain.now(), slot: chain.slot() }),
    localnet_setFaults: (params) => faults.set(faultSwitches(params[0])),
    localnet_getFaults: () => faults.state(),
  };
  return new Map(Object.entries(methods));
}
