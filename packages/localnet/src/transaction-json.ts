/**
 * A recorded transaction as `getTransaction` and `getBlock` write it: the transaction in the
 * encoding asked for (`json`, `jsonParsed`, `base58`, `base64`), its metadata and its version,
 * with the `transactionDetails` levels of `getBlock` (`full`, `accounts`).
 */
import bs58 from 'bs58';
import { RpcError } from './json-rpc';
import type { TokenBalance, TransactionRecord } from './transaction-index';
import { uiTokenAmount } from './token-accounts';
import { isWritable, Message, parseTransaction } from './transaction-wire';

export type TransactionEncoding = 'json' | 'jsonParsed' | 'base58' | 'base64';

export interface EncodeOptions {
  encoding: TransactionEncoding;
  /** `accounts` leaves the instructions and logs out (a `getBlock` level). */
  details: 'full' | 'accounts';
  /** Undefined when the client did not say: it then reads legacy transactions only. */
  maxSupportedTransactionVersion: number | undefined;
  /** `getBlock`'s `rewards: false` leaves the metadata's rewards out. */
  rewards: boolean;
}

/** The validator's code for a transaction newer than the client says it can read. */
const UNSUPPORTED_TRANSACTION_VERSION = -32015;

/** The programs the RPC's instruction parser knows, by the name it writes. */
const SYSTEM_PROGRAM = '11111111111111111111111111111111';
const TOKEN_PROGRAMS = [
  'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
  'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb',
];
const ASSOCIATED_TOKEN_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
const MEMO_PROGRAMS = [
  'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr',
  'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo',
];

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function tokenBalanceJson(balance: TokenBalance) {
  const { amount, decimals, ...rest } = balance;
  return { ...rest, uiTokenAmount: uiTokenAmount(BigInt(amount), decimals) };
}

/**
 * `{transaction, meta, version?}` of a recorded transaction. The version appears once the client
 * says which versions it reads; a v0 transaction for a client that did not say is refused with
 * -32015, as the validator refuses it.
 */
export function encodeTransactionWithMeta(
  record: TransactionRecord,
  options: EncodeOptions,
): Record<string, unknown> {
  const { signatures, message } = parseTransaction(record.raw);
  if (message.version !== 'legacy' && options.maxSupportedTransactionVersion === undefined) {
    throw new RpcError(
      UNSUPPORTED_TRANSACTION_VERSION,
      `Transaction version (${message.version}) is not supported by the requesting client. ` +
        'Please try the request again with the following configuration parameter: ' +
        `"maxSupportedTransactionVersion": ${message.version}`,
    );
  }
  const signatureStrings = signatures.map((signature) => bs58.encode(signature));
  const version =
    options.maxSupportedTransactionVersion !== undefined ? { version: message.version } : {};
  if (options.details === 'accounts') {
    return {
      transaction: {
        signatures: signatureStrings,
        accountKeys: parsedAccountKeys(record, message),
      },
      meta: {
        ...statusMeta(record),
        ...(options.rewards ? { rewards: [] } : {}),
      },
      ...version,
    };
  }
  return {
    transaction: encodeTransaction(record, message, signatureStrings, options.encoding),
    meta: fullMeta(record, options),
    ...version,
  };
}

function encodeTransaction(
  record: TransactionRecord,
  message: Message,
  signatures: string[],
  encoding: TransactionEncoding,
): unknown {
  if (encoding === 'base64') return [record.raw.toString('base64'), 'base64'];
  if (encoding === 'base58') return [bs58.encode(record.raw), 'base58'];
  const lookups =
    message.version === 'legacy'
      ? {}
      : {
          addressTableLookups: message.addressTableLookups.map((lookup) => ({
            accountKey: bs58.encode(lookup.accountKey),
            writableIndexes: lookup.writableIndexes,
            readonlyIndexes: lookup.readonlyIndexes,
          })),
        };
  if (encoding === 'jsonParsed') {
    return {
      signatures,
      message: {
        accountKeys: parsedAccountKeys(record, message),
        recentBlockhash: bs58.encode(message.recentBlockhash),
        instructions: message.instructions.map((ix) =>
          parsedInstruction(
            record.accountKeys[ix.programIdIndex],
            ix.accounts.map((index) => record.accountKeys[index]),
            ix.data,
          ),
        ),
        ...lookups,
      },
    };
  }
  return {
    signatures,
    message: {
      // The static keys: loaded ones are in the metadata's `loadedAddresses`.
      accountKeys: record.accountKeys.slice(0, message.accountKeys.length),
      header: message.header,
      recentBlockhash: bs58.encode(message.recentBlockhash),
      instructions: message.instructions.map((ix) => ({
        programIdIndex: ix.programIdIndex,
        accounts: ix.accounts,
        data: bs58.encode(ix.data),
        stackHeight: null,
      })),
      ...lookups,
    },
  };
}

function statusMeta(record: TransactionRecord) {
  return {
    err: record.err,
    status: record.err === null ? { Ok: null } : { Err: record.err },
    fee: record.fee,
    preBalances: record.preBalances,
    postBalances: record.postBalances,
    preTokenBalances: record.preTokenBalances.map(tokenBalanceJson),
    postTokenBalances: record.postTokenBalances.map(tokenBalanceJson),
  };
}

function fullMeta(record: TransactionRecord, options: EncodeOptions) {
  const parsed = options.encoding === 'jsonParsed';
  let rewards = {};
  // As the validator writes it: `null` when left out, except in parsed metadata (absent).
  if (options.rewards) rewards = { rewards: [] };
  else if (!parsed) rewards = { rewards: null };
  return {
    ...statusMeta(record),
    logMessages: record.logMessages,
    innerInstructions: record.innerInstructions.map((set) => ({
      index: set.index,
      instructions: set.instructions.map((ix) =>
        parsed
          ? {
              ...parsedInstruction(
                record.accountKeys[ix.programIdIndex],
                ix.accounts.map((i) => record.accountKeys[i]),
                Buffer.from(bs58.decode(ix.data)),
              ),
              stackHeight: ix.stackHeight,
            }
          : { ...ix },
      ),
    })),
    ...rewards,
    // Parsed metadata leaves them out: its account keys say which came from a table.
    ...(parsed
      ? {}
      : { loadedAddresses: record.loadedAddresses ?? { writable: [], readonly: [] } }),
    computeUnitsConsumed: record.unitsConsumed,
  };
}

/**
 * The account keys as `jsonParsed` lists them: static keys with their header flags (a program
 * an instruction calls is demoted to read-only, as the runtime demotes it), then the keys loaded
 * from lookup tables.
 */
function parsedAccountKeys(record: TransactionRecord, message: Message) {
  const staticCount = message.accountKeys.length;
  const called = new Set(message.instructions.map((ix) => ix.programIdIndex));
  const keys = record.accountKeys.slice(0, staticCount).map((pubkey, i) => ({
    pubkey,
    writable: isWritable(message.header, staticCount, i) && !called.has(i),
    signer: i < message.header.numRequiredSignatures,
    source: 'transaction',
  }));
  const loaded = record.loadedAddresses;
  if (!loaded) return keys;
  const fromTable = (pubkey: string, writable: boolean) => ({
    pubkey,
    writable,
    signer: false,
    source: 'lookupTable',
  });
  return [
    ...keys,
    ...loaded.writable.map((pubkey) => fromTable(pubkey, true)),
    ...loaded.readonly.map((pubkey) => fromTable(pubkey, false)),
  ];
}

/**
 * An instruction as `jsonParsed` writes it: parsed for the programs and instructions this parser
 * knows (System transfers and account creation, SPL Token and Token-2022 transfers, approvals,
 * mints, burns and closes, associated token accounts, memos), otherwise partially decoded
 * (program, accounts, base58 data), which is also the validator's fallback.
 */
export function parsedInstruction(
  programId: string,
  accounts: string[],
  data: Buffer,
): Record<string, unknown> {
  const parsed = parseKnown(programId, accounts, data);
  if (parsed) return { ...parsed, programId, stackHeight: null };
  return { programId, accounts, data: bs58.encode(data), stackHeight: null };
}

type Parsed = { program: string; parsed: unknown } | undefined;

function parseKnown(programId: string, accounts: string[], data: Buffer): Parsed {
  try {
    if (programId === SYSTEM_PROGRAM) return parseSystem(accounts, data);
    if (TOKEN_PROGRAMS.includes(programId)) return parseToken(accounts, data);
    if (programId === ASSOCIATED_TOKEN_PROGRAM) return parseAssociatedToken(accounts, data);
    if (MEMO_PROGRAMS.includes(programId))
      return { program: 'spl-memo', parsed: UTF8.decode(data) };
  } catch {
    // Short data, invalid UTF-8: the validator falls back to the partially decoded form too.
  }
  return undefined;
}

function typed(program: string, type: string, info: Record<string, unknown>): Parsed {
  return { program, parsed: { type, info } };
}

function parseSystem(accounts: string[], data: Buffer): Parsed {
  const tag = data.readUInt32LE(0);
  const key = (offset: number) => bs58.encode(data.subarray(offset, offset + 32));
  if (tag === 0 && accounts.length >= 2) {
    return typed('system', 'createAccount', {
      source: accounts[0],
      newAccount: accounts[1],
      lamports: Number(data.readBigUInt64LE(4)),
      space: Number(data.readBigUInt64LE(12)),
      owner: key(20),
    });
  }
  if (tag === 1 && accounts.length >= 1) {
    return typed('system', 'assign', { account: accounts[0], owner: key(4) });
  }
  if (tag === 2 && accounts.length >= 2) {
    return typed('system', 'transfer', {
      source: accounts[0],
      destination: accounts[1],
      lamports: Number(data.readBigUInt64LE(4)),
    });
  }
  if (tag === 8 && accounts.length >= 1) {
    return typed('system', 'allocate', {
      account: accounts[0],
      space: Number(data.readBigUInt64LE(4)),
    });
  }
  return undefined;
}

/**
 * SPL Token instructions by tag: the names of their accounts before the authority, and whether
 * they carry decimals (the `Checked` forms, whose amount is a token amount).
 */
const TOKEN_INSTRUCTIONS: Record<
  number,
  { type: string; accounts: string[]; authority: string; checked: boolean; amount?: string }
> = {
  3: {
    type: 'transfer',
    accounts: ['source', 'destination'],
    authority: 'authority',
    checked: false,
  },
  4: { type: 'approve', accounts: ['source', 'delegate'], authority: 'owner', checked: false },
  5: { type: 'revoke', accounts: ['source'], authority: 'owner', checked: false, amount: 'none' },
  7: { type: 'mintTo', accounts: ['mint', 'account'], authority: 'mintAuthority', checked: false },
  8: { type: 'burn', accounts: ['account', 'mint'], authority: 'authority', checked: false },
  9: {
    type: 'closeAccount',
    accounts: ['account', 'destination'],
    authority: 'owner',
    checked: false,
    amount: 'none',
  },
  12: {
    type: 'transferChecked',
    accounts: ['source', 'mint', 'destination'],
    authority: 'authority',
    checked: true,
  },
  13: {
    type: 'approveChecked',
    accounts: ['source', 'mint', 'delegate'],
    authority: 'owner',
    checked: true,
  },
  14: {
    type: 'mintToChecked',
    accounts: ['mint', 'account'],
    authority: 'mintAuthority',
    checked: true,
  },
  15: { type: 'burnChecked', accounts: ['account', 'mint'], authority: 'authority', checked: true },
};

function parseToken(accounts: string[], data: Buffer): Parsed {
  const spec = TOKEN_INSTRUCTIONS[data[0]];
  if (!spec || accounts.length < spec.accounts.length + 1) return undefined;
  const info: Record<string, unknown> = {};
  spec.accounts.forEach((name, i) => (info[name] = accounts[i]));
  if (spec.amount !== 'none') {
    const amount = data.readBigUInt64LE(1);
    if (spec.checked) info.tokenAmount = uiTokenAmount(amount, data.readUInt8(9));
    else info.amount = amount.toString();
  }
  // More accounts than the authority: a multisig authority and its signers.
  const authority = spec.accounts.length;
  if (accounts.length > authority + 1) {
    info[`multisig${spec.authority[0].toUpperCase()}${spec.authority.slice(1)}`] =
      accounts[authority];
    info.signers = accounts.slice(authority + 1);
  } else {
    info[spec.authority] = accounts[authority];
  }
  return typed('spl-token', spec.type, info);
}

function parseAssociatedToken(accounts: string[], data: Buffer): Parsed {
  const type =
    data.length === 0 || data[0] === 0 ? 'create' : data[0] === 1 ? 'createIdempotent' : '';
  if (!type || accounts.length < 6) return undefined;
  return typed('spl-associated-token-account', type, {
    source: accounts[0],
    account: accounts[1],
    wallet: accounts[2],
    mint: accounts[3],
    systemProgram: accounts[4],
    tokenProgram: accounts[5],
  });
}
