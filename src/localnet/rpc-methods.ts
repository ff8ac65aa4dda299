/**
 * The Solana JSON-RPC methods localnet serves, in the shapes of the real RPC as web3.js v1,
 * spl-token and Solana Pay read them, plus the `localnet_*` dev methods.
 */
import bs58 from 'bs58';
import { INVALID_PARAMS, RpcError } from './json-rpc';
import { AccountView, LocalnetChain, TokenBalance, TransactionRecord } from './localnet-chain';
import { SLOTS_PER_EPOCH } from './chain-clock';
import { parseTokenData } from './parsed-token-data';
import { tokenProgramOfAddress, uiTokenAmount } from './token-accounts';
import { parseTransaction } from './transaction-wire';

export type RpcHandler = (params: unknown[]) => unknown;

const U64_MAX = 2n ** 64n - 1n;
const MAX_SIGNATURE_STATUSES = 256;
const MAX_MULTIPLE_ACCOUNTS = 100;
const MAX_SIGNATURES_LIMIT = 1000;
/** The real RPC refuses base58 account data past this size. */
const MAX_BASE58_BYTES = 128;

// --- Parameters: JSON in, narrowed or refused with -32602. ---

function invalid(message: string): RpcError {
  return new RpcError(INVALID_PARAMS, message);
}

function stringAt(params: unknown[], index: number, name: string): string {
  const value = params[index];
  if (typeof value !== 'string') throw invalid(`Invalid params: ${name} must be a string`);
  return value;
}

/** Whether a request's config asks for the `finalized` commitment. */
function isFinalized(config: Record<string, unknown>): boolean {
  return config.commitment === 'finalized';
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

function encodeAccount(
  chain: LocalnetChain,
  account: AccountView | null,
  config: Record<string, unknown>,
): Record<string, unknown> | null {
  if (!account) return null;
  const encoding = optionalString(config, 'encoding') ?? 'base64';
  let data: unknown;
  if (encoding === 'jsonParsed') {
    const program = tokenProgramOfAddress(account.owner);
    data = program ? parseTokenData(program, account.data, (m) => chain.decimalsOf(m)) : undefined;
  }
  if (data === undefined) {
    let bytes = account.data;
    const slice = config.dataSlice as { offset?: unknown; length?: unknown } | undefined;
    if (slice && encoding !== 'jsonParsed') {
      const offset = Number(slice.offset);
      const length = Number(slice.length);
      if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length)) {
        throw invalid('Invalid params: dataSlice needs an offset and a length');
      }
      bytes = bytes.subarray(offset, offset + length);
    }
    if (encoding === 'base58') {
      if (bytes.length > MAX_BASE58_BYTES) {
        throw invalid(
          'Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.',
        );
      }
      data = [bs58.encode(bytes), 'base58'];
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
    rentEpoch: Number(account.rentEpoch),
    space: account.data.length,
  };
}

function tokenBalanceJson(balance: TokenBalance) {
  const { amount, decimals, ...rest } = balance;
  return { ...rest, uiTokenAmount: uiTokenAmount(BigInt(amount), decimals) };
}

function transactionJson(record: TransactionRecord, config: Record<string, unknown>): unknown {
  const encoding = optionalString(config, 'encoding') ?? 'json';
  let transaction: unknown;
  if (encoding === 'base64') {
    transaction = [record.raw.toString('base64'), 'base64'];
  } else if (encoding === 'json') {
    const { signatures, message } = parseTransaction(record.raw);
    transaction = {
      signatures: signatures.map((signature) => bs58.encode(signature)),
      message: {
        accountKeys: record.accountKeys,
        header: message.header,
        recentBlockhash: bs58.encode(message.recentBlockhash),
        instructions: message.instructions.map((ix) => ({
          programIdIndex: ix.programIdIndex,
          accounts: ix.accounts,
          data: bs58.encode(ix.data),
          stackHeight: null,
        })),
      },
    };
  } else {
    throw invalid(`Invalid params: unsupported transaction encoding ${encoding}`);
  }
  return {
    slot: record.slot,
    blockTime: record.blockTime,
    transaction,
    meta: {
      err: record.err,
      status: record.err === null ? { Ok: null } : { Err: record.err },
      fee: record.fee,
      preBalances: record.preBalances,
      postBalances: record.postBalances,
      preTokenBalances: record.preTokenBalances.map(tokenBalanceJson),
      postTokenBalances: record.postTokenBalances.map(tokenBalanceJson),
      logMessages: record.logMessages,
      innerInstructions: [],
      loadedAddresses: { readonly: [], writable: [] },
      rewards: [],
      computeUnitsConsumed: record.unitsConsumed,
    },
    // As the RPC does: the version appears once the client says which ones it supports.
    ...(config.maxSupportedTransactionVersion !== undefined ? { version: 'legacy' } : {}),
  };
}

/** The method table of a localnet chain. */
export function localnetMethods(chain: LocalnetChain): Map<string, RpcHandler> {
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
    getEpochInfo: () => {
      const slot = chain.slot();
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
      const fee = chain.feeForMessage(Buffer.from(stringAt(params, 0, 'message'), 'base64'));
      return withContext(fee === null ? null : Number(fee));
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
      return chain.sendTransaction(bytes, {
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
      const record = chain.getTransaction(signature);
      if (record && isFinalized(config) && !chain.isFinalized(record.slot)) return null;
      return record ? transactionJson(record, config) : null;
    },
    getSignaturesForAddress: (params) => {
      const target = address(params[0]);
      const config = configAt(params, 1);
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
          limit,
        })
        .filter((info) => !isFinalized(config) || chain.isFinalized(info.slot))
        .map((info) => ({
          ...info,
          confirmationStatus: chain.isFinalized(info.slot) ? 'finalized' : 'confirmed',
        }));
    },

    getAccountInfo: (params) =>
      withContext(encodeAccount(chain, chain.getAccount(address(params[0])), configAt(params, 1))),
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
          account: encodeAccount(chain, entry.account, config),
        })),
      );
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
      return { unixTimestamp: chain.advanceClock(seconds) };
    },
    localnet_getClock: () => ({ unixTimestamp: chain.now(), slot: chain.slot() }),
  };
  return new Map(Object.entries(methods));
}
