import { PublicKey } from '@solana/web3.js';
import { Account, LiteSvm } from 'litesvm/dist/internal';
import { TOKEN_PROGRAMS } from './mints';
import { encodeBase58 } from './base58';
import {
  decodeMint,
  decodeTokenAccount,
  isMintData,
  isTokenAccountData,
  tokenProgramOf,
  tokenProgramOfAddress,
  UiTokenAmount,
  uiTokenAmount,
} from './token-accounts';
import type { TokenBalance } from './transaction-index';
import { isWritableIndex, Message } from './transaction-wire';

export interface AccountView {
  lamports: bigint;
  owner: string;
  data: Buffer;
  executable: boolean;
  rentEpoch: bigint;
}

/** Lamports and token balances of a message's accounts, by account index. */
export interface Balances {
  lamports: bigint[];
  tokens: Array<TokenBalance | undefined>;
}

/** The keys a v0 message loads from address lookup tables: all writable ones, then read-only. */
export interface LoadedKeys {
  writable: Buffer[];
  readonly: Buffer[];
}

/** Bound of the base58 cache; it is simply emptied when full. */
const CACHE_ENTRIES = 100_000;

const ADDRESS_LOOKUP_TABLE_PROGRAM = new PublicKey(
  'AddressLookupTab1e1111111111111111111111111',
).toBuffer();
/** `LookupTableMeta` as the program serializes it (`ProgramState::LookupTable`), then the keys. */
const LOOKUP_TABLE_META_SIZE = 56;
const LOOKUP_TABLE_STATE = 1;
const U64_MAX = 2n ** 64n - 1n;
/** A deactivated table still resolves while its deactivation slot is in `SlotHashes`. */
const SLOT_HASHES_SLOTS = 512n;

/**
 * Reads accounts out of LiteSVM in the forms the index and the RPC use. Keeps two caches: the
 * base58 of 32-byte keys (transactions name the same accounts over and over, and encoding is
 * the costly part of a read) and the decimals of mints (which never change).
 */
export class AccountReader {
  private readonly addresses = new Map<string, string>();
  private readonly decimals = new Map<string, number>();

  constructor(private readonly svm: LiteSvm) {}

  /** Base58 of a 32-byte key. */
  address(key: Uint8Array): string {
    const bytes = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
    const cacheKey = bytes.toString('latin1');
    let address = this.addresses.get(cacheKey);
    if (address === undefined) {
      address = encodeBase58(bytes);
      if (this.addresses.size >= CACHE_ENTRIES) this.addresses.clear();
      this.addresses.set(cacheKey, address);
    }
    return address;
  }

  account(address: string): AccountView | null {
    const account = this.svm.getAccount(new PublicKey(address).toBytes());
    return account ? this.view(account) : null;
  }

  balance(address: string): bigint {
    return this.svm.getBalance(new PublicKey(address).toBytes()) ?? 0n;
  }

  /** The balance of a token account, or undefined when `address` is not one. */
  tokenAccountBalance(address: string): UiTokenAmount | undefined {
    const account = this.account(address);
    if (!account || !tokenProgramOfAddress(account.owner) || !isTokenAccountData(account.data)) {
      return undefined;
    }
    const { mint, amount } = decodeTokenAccount(account.data);
    const decimals = this.decimalsOf(mint);
    return decimals === undefined ? undefined : uiTokenAmount(amount, decimals);
  }

  /** The token accounts of `owner`, of one mint or of one token program (or both programs). */
  tokenAccountsByOwner(
    owner: string,
    filter: { mint?: string; programId?: string },
  ): Array<{ address: string; account: AccountView }> {
    const ownerBytes = new PublicKey(owner).toBuffer();
    const mintBytes = filter.mint ? new PublicKey(filter.mint).toBuffer() : undefined;
    const programs = filter.programId
      ? [new PublicKey(filter.programId)]
      : [TOKEN_PROGRAMS['spl-token'], TOKEN_PROGRAMS['token-2022']];
    const found: Array<{ address: string; account: AccountView }> = [];
    for (const program of programs) {
      // A scan of the program's accounts: fine for a development chain.
      for (const entry of this.svm.getProgramAccounts(program.toBytes())) {
        const account = this.view(entry.account());
        if (!isTokenAccountData(account.data)) continue;
        const fields = decodeTokenAccount(account.data);
        if (!fields.owner.equals(ownerBytes)) continue;
        if (mintBytes && !fields.mint.equals(mintBytes)) continue;
        found.push({ address: this.address(entry.address), account });
      }
    }
    return found;
  }

  /** Decimals of a mint, or undefined when it is not a mint. */
  decimalsOf(mint: Uint8Array): number | undefined {
    const address = this.address(mint);
    const known = this.decimals.get(address);
    if (known !== undefined) return known;
    const account = this.svm.getAccount(mint);
    if (!account || !tokenProgramOf(account.owner())) return undefined;
    const data = account.data();
    if (!isMintData(data)) return undefined;
    const { decimals } = decodeMint(data);
    this.decimals.set(address, decimals);
    return decimals;
  }

  /**
   * Lamports and token balances of a message's accounts (`keys`: its static keys, then those it
   * loads). Given the balances from before the transaction, read-only accounts are copied from
   * them: the runtime cannot have changed them.
   */
  balances(message: Message, keys: Buffer[], before?: Balances): Balances {
    const lamports: bigint[] = [];
    const tokens: Array<TokenBalance | undefined> = [];
    for (let i = 0; i < keys.length; i++) {
      if (before && !isWritableIndex(message, i)) {
        lamports.push(before.lamports[i]);
        tokens.push(before.tokens[i]);
        continue;
      }
      if (message.instructions.some((ix) => ix.programIdIndex === i)) {
        // Programs hold no tokens; skip copying their account data.
        lamports.push(this.svm.getBalance(keys[i]) ?? 0n);
        tokens.push(undefined);
        continue;
      }
      const account = this.svm.getAccount(keys[i]);
      lamports.push(account ? account.lamports() : 0n);
      tokens.push(account ? this.tokenBalance(i, account) : undefined);
    }
    return { lamports, tokens };
  }

  /**
   * The keys a v0 message loads from its address lookup tables at `slot`, resolved as the
   * runtime resolves them; or the name of the transaction error it fails with. A table's keys
   * appended in `slot` itself are not usable before the next slot, and a deactivated table stops
   * resolving once its deactivation slot has left `SlotHashes`.
   */
  loadAddresses(message: Message, slot: number): LoadedKeys | string {
    const loaded: LoadedKeys = { writable: [], readonly: [] };
    for (const lookup of message.addressTableLookups) {
      const account = this.svm.getAccount(lookup.accountKey);
      if (!account) return 'AddressLookupTableNotFound';
      if (!Buffer.from(account.owner()).equals(ADDRESS_LOOKUP_TABLE_PROGRAM)) {
        return 'InvalidAddressLookupTableOwner';
      }
      const data = view(account.data());
      if (
        data.length < LOOKUP_TABLE_META_SIZE ||
        (data.length - LOOKUP_TABLE_META_SIZE) % 32 !== 0 ||
        data.readUInt32LE(0) !== LOOKUP_TABLE_STATE
      ) {
        return 'InvalidAddressLookupTableData';
      }
      const current = BigInt(slot);
      const deactivation = data.readBigUInt64LE(4);
      if (
        deactivation !== U64_MAX &&
        deactivation !== current &&
        (deactivation > current || current - deactivation > SLOT_HASHES_SLOTS)
      ) {
        return 'AddressLookupTableNotFound';
      }
      const stored = (data.length - LOOKUP_TABLE_META_SIZE) / 32;
      const active = current > data.readBigUInt64LE(12) ? stored : data[20];
      const key = (index: number) =>
        data.subarray(
          LOOKUP_TABLE_META_SIZE + 32 * index,
          LOOKUP_TABLE_META_SIZE + 32 * index + 32,
        );
      const indexes = [...lookup.writableIndexes, ...lookup.readonlyIndexes];
      if (indexes.some((index) => index >= active)) return 'InvalidAddressLookupTableIndex';
      loaded.writable.push(...lookup.writableIndexes.map(key));
      loaded.readonly.push(...lookup.readonlyIndexes.map(key));
    }
    return loaded;
  }

  /** Every account `program` owns (a scan: fine for a development chain). */
  programAccounts(program: string): Array<{ address: string; account: AccountView }> {
    return this.svm.getProgramAccounts(new PublicKey(program).toBytes()).map((entry) => ({
      address: this.address(entry.address),
      account: this.view(entry.account()),
    }));
  }

  view(account: Account): AccountView {
    return {
      lamports: account.lamports(),
      owner: this.address(account.owner()),
      data: view(account.data()),
      executable: account.executable(),
      rentEpoch: account.rentEpoch(),
    };
  }

  private tokenBalance(accountIndex: number, account: Account): TokenBalance | undefined {
    const data = account.data();
    if (!isTokenAccountData(data)) return undefined; // by size first: most accounts end here
    const owner = account.owner();
    if (!tokenProgramOf(owner)) return undefined;
    const fields = decodeTokenAccount(data);
    const decimals = this.decimalsOf(fields.mint);
    if (decimals === undefined) return undefined;
    return {
      accountIndex,
      mint: this.address(fields.mint),
      owner: this.address(fields.owner),
      programId: this.address(owner),
      amount: fields.amount.toString(),
      decimals,
    };
  }
}

function view(data: Uint8Array): Buffer {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}
