/**
 * Token accounts and mints of both token programs, read from their raw bytes on the transaction
 * path (pre/post token balances of every transaction), where decoding by hand keeps allocation
 * to what the RPC returns; and `uiTokenAmount`, as the RPC writes amounts. The `jsonParsed`
 * account data is decoded with spl-token itself (parsed-token-data.ts).
 */
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';

export const TOKEN_PROGRAM = TOKEN_PROGRAM_ID.toBuffer();
export const TOKEN_2022_PROGRAM = TOKEN_2022_PROGRAM_ID.toBuffer();
const TOKEN_PROGRAM_ADDRESS = TOKEN_PROGRAM_ID.toBase58();
const TOKEN_2022_PROGRAM_ADDRESS = TOKEN_2022_PROGRAM_ID.toBase58();

/** Sizes of the base layouts; Token-2022 appends an account-type byte and extensions after 165. */
export const MINT_SIZE = 82;
export const TOKEN_ACCOUNT_SIZE = 165;
/** A multisig is told apart by its size alone (as the RPC's decoder does). */
const MULTISIG_SIZE = 355;
const ACCOUNT_TYPE_OFFSET = 165;
const ACCOUNT_TYPE_MINT = 1;
const ACCOUNT_TYPE_ACCOUNT = 2;

export interface UiTokenAmount {
  amount: string;
  decimals: number;
  uiAmount: number;
  uiAmountString: string;
}

/** Which token program owns an account, by its owner bytes; undefined for any other owner. */
export function tokenProgramOf(owner: Uint8Array): 'spl-token' | 'spl-token-2022' | undefined {
  const bytes = Buffer.from(owner.buffer, owner.byteOffset, owner.byteLength);
  if (bytes.equals(TOKEN_PROGRAM)) return 'spl-token';
  if (bytes.equals(TOKEN_2022_PROGRAM)) return 'spl-token-2022';
  return undefined;
}

/** Which token program a base58 owner is, if any. */
export function tokenProgramOfAddress(owner: string): 'spl-token' | 'spl-token-2022' | undefined {
  if (owner === TOKEN_PROGRAM_ADDRESS) return 'spl-token';
  if (owner === TOKEN_2022_PROGRAM_ADDRESS) return 'spl-token-2022';
  return undefined;
}

/** Whether the data of a token-program account is an (initialized) token account. */
export function isTokenAccountData(data: Uint8Array): boolean {
  if (data.length < TOKEN_ACCOUNT_SIZE || data.length === MULTISIG_SIZE) return false;
  if (data.length > TOKEN_ACCOUNT_SIZE && data[ACCOUNT_TYPE_OFFSET] !== ACCOUNT_TYPE_ACCOUNT) {
    return false;
  }
  return data[108] !== 0; // state: 0 = uninitialized
}

/** Whether the data of a token-program account is an (initialized) mint. */
export function isMintData(data: Uint8Array): boolean {
  if (data.length === MINT_SIZE) return data[45] === 1;
  if (
    data.length === MULTISIG_SIZE ||
    data.length <= ACCOUNT_TYPE_OFFSET ||
    data[ACCOUNT_TYPE_OFFSET] !== ACCOUNT_TYPE_MINT
  ) {
    return false;
  }
  return data[45] === 1;
}

export interface TokenAccountFields {
  mint: Buffer;
  owner: Buffer;
  amount: bigint;
  delegate: Buffer | null;
  /** 0 uninitialized, 1 initialized, 2 frozen. */
  state: number;
  /** Rent-exempt reserve of a wrapped-SOL account. */
  nativeReserve: bigint | null;
  delegatedAmount: bigint;
  closeAuthority: Buffer | null;
}

function view(data: Uint8Array): Buffer {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/** Reads a token account (layout of `spl_token::state::Account`, shared by Token-2022). */
export function decodeTokenAccount(data: Uint8Array): TokenAccountFields {
  const bytes = view(data);
  const option = (offset: number): boolean => bytes.readUInt32LE(offset) === 1;
  return {
    mint: bytes.subarray(0, 32),
    owner: bytes.subarray(32, 64),
    amount: bytes.readBigUInt64LE(64),
    delegate: option(72) ? bytes.subarray(76, 108) : null,
    state: bytes[108],
    nativeReserve: option(109) ? bytes.readBigUInt64LE(113) : null,
    delegatedAmount: bytes.readBigUInt64LE(121),
    closeAuthority: option(129) ? bytes.subarray(133, 165) : null,
  };
}

export interface MintFields {
  mintAuthority: Buffer | null;
  supply: bigint;
  decimals: number;
  isInitialized: boolean;
  freezeAuthority: Buffer | null;
}

/** Reads a mint (layout of `spl_token::state::Mint`, shared by Token-2022). */
export function decodeMint(data: Uint8Array): MintFields {
  const bytes = view(data);
  return {
    mintAuthority: bytes.readUInt32LE(0) === 1 ? bytes.subarray(4, 36) : null,
    supply: bytes.readBigUInt64LE(36),
    decimals: bytes[44],
    isInitialized: bytes[45] === 1,
    freezeAuthority: bytes.readUInt32LE(46) === 1 ? bytes.subarray(50, 82) : null,
  };
}

/** `amount` in whole tokens, trailing zeros trimmed ("1.5", "0", "12"), as the RPC writes it. */
export function uiAmountString(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const digits = amount.toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, -decimals);
  const fraction = digits.slice(-decimals).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

export function uiTokenAmount(amount: bigint, decimals: number): UiTokenAmount {
  return {
    amount: amount.toString(),
    decimals,
    // The RPC's own float (amount / 10^decimals); clients that care read the strings.
    uiAmount: Number(amount) / 10 ** decimals,
    uiAmountString: uiAmountString(amount, decimals),
  };
}
