import {
  getAssociatedTokenAddressSync,
  getEpochFee,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  type TransferFee,
  type TransferFeeConfig,
  unpackMint,
} from '@solana/spl-token';
import { Commitment, Connection, EpochSchedule, PublicKey } from '@solana/web3.js';
import type { ResolvedMint } from './chain.port';
import { NO_EXTENSIONS, readMintExtensions } from './mint-extensions';
import { MintInfo, MintSymbol, STABLECOIN_DECIMALS } from './mints';

/**
 * The mints as this chain has them: the token program is whichever program owns the mint account
 * (the chain is the authority, not the table), only 6-decimal mints are accepted, and the
 * Token-2022 extensions are read from the account (`readMintExtensions`), never assumed.
 * Resolved once per mint; a failed lookup (an RPC blip) is not remembered. `onResolved` is told
 * of each mint once (the start-up log of its extensions).
 */
export class MintResolver {
  private readonly resolved = new Map<MintSymbol, Promise<ResolvedMint>>();

  constructor(
    private readonly connection: Connection,
    private readonly commitment: Commitment,
    private readonly table: MintInfo[],
    private readonly onResolved: (mint: ResolvedMint) => void = () => undefined,
  ) {}

  /** The symbols of the mint table. */
  get symbols(): MintSymbol[] {
    return this.table.map((m) => m.symbol);
  }

  mint(symbol: MintSymbol): Promise<ResolvedMint> {
    let resolved = this.resolved.get(symbol);
    if (!resolved) {
      resolved = this.read(symbol);
      this.resolved.set(symbol, resolved);
      resolved.then(
        (mint) => this.onResolved(mint),
        () => this.resolved.delete(symbol),
      );
    }
    return resolved;
  }

  /** The mint as read again (its transfer hook changed): what the next `mint()` returns. */
  update(mint: ResolvedMint): void {
    this.resolved.set(mint.symbol, Promise.resolve(mint));
  }

  /** The owner's associated token account for the mint, under the mint's token program. */
  async tokenAccount(symbol: MintSymbol, owner: string): Promise<PublicKey> {
    const mint = await this.mint(symbol);
    return ataOf(mint, owner);
  }

  private async read(symbol: MintSymbol): Promise<ResolvedMint> {
    const entry = this.table.find((m) => m.symbol === symbol);
    if (!entry) throw new Error(`Unknown mint ${symbol}`);
    const address = new PublicKey(entry.address);
    const info = await this.connection.getAccountInfo(address, this.commitment);
    if (!info) throw new Error(`Mint ${symbol} (${entry.address}) does not exist on this cluster`);
    if (!info.owner.equals(TOKEN_PROGRAM_ID) && !info.owner.equals(TOKEN_2022_PROGRAM_ID)) {
      throw new Error(`Mint ${symbol} (${entry.address}) is not owned by a token program`);
    }
    const mint = unpackMint(address, info, info.owner);
    // Amounts are converted at 6 decimals everywhere: a mint with others would scale every charge.
    if (mint.decimals !== STABLECOIN_DECIMALS) {
      throw new Error(
        `Mint ${symbol} (${entry.address}) has ${mint.decimals} decimals; the service bills in ` +
          `${STABLECOIN_DECIMALS}-decimal stablecoins only`,
      );
    }
    return {
      symbol,
      address: entry.address,
      tokenProgram: info.owner.toBase58(),
      decimals: mint.decimals,
      extensions: info.owner.equals(TOKEN_2022_PROGRAM_ID)
        ? readMintExtensions(mint)
        : NO_EXTENSIONS,
    };
  }
}

/** The associated token account of `owner` for a resolved mint (off-curve owners allowed). */
export function ataOf(mint: ResolvedMint, owner: string | PublicKey): PublicKey {
  const key = `${mint.tokenProgram}:${mint.address}:${owner.toString()}`;
  const known = derivedAccounts.get(key);
  if (known) return known;
  const ata = getAssociatedTokenAddressSync(
    new PublicKey(mint.address),
    typeof owner === 'string' ? new PublicKey(owner) : owner,
    true,
    new PublicKey(mint.tokenProgram),
  );
  if (derivedAccounts.size >= DERIVED_ACCOUNTS_KEPT) {
    derivedAccounts.delete(derivedAccounts.keys().next().value!); // the oldest
  }
  derivedAccounts.set(key, ata);
  return ata;
}

/** Token-2022's program address (a mint it owns may charge a transfer fee). */
export const TOKEN_2022_PROGRAM = TOKEN_2022_PROGRAM_ID.toBase58();

const addresses = new WeakMap<PublicKey, string>();

/**
 * A key's base58 address, written once per key object: web3.js writes it anew on every
 * `toBase58()` (base58 is quadratic in pure JS), and a charge names its two token accounts (kept
 * by `ataOf`) five times.
 */
export function addressOf(key: PublicKey): string {
  let address = addresses.get(key);
  if (address === undefined) {
    address = key.toBase58();
    addresses.set(key, address);
  }
  return address;
}

/**
 * The public key of a base58 address, decoded once (a charge names the same few accounts,
 * programs and mints again and again). Bounded: the oldest go first.
 */
export function publicKeyOf(address: string): PublicKey {
  const known = decodedKeys.get(address);
  if (known) return known;
  const key = new PublicKey(address);
  if (decodedKeys.size >= DERIVED_ACCOUNTS_KEPT) {
    decodedKeys.delete(decodedKeys.keys().next().value!); // the oldest
  }
  decodedKeys.set(address, key);
  return key;
}

const decodedKeys = new Map<string, PublicKey>();

/**
 * Token account addresses already derived (a derivation hashes until it finds an address off the
 * curve, ~0.1 ms of CPU; every charge needs two). Bounded: the oldest go first.
 */
const derivedAccounts = new Map<string, PublicKey>();
const DERIVED_ACCOUNTS_KEPT = 50_000;

/** How long a mint's transfer fee configuration, and the current epoch, are taken as read. */
const FEE_CONFIG_TTL_MS = 60_000;

/**
 * The Token-2022 transfer fees of mints: each mint's `TransferFeeConfig` (read at most once a
 * minute: its authority may schedule a new fee, which takes effect two epochs later), and the
 * fee in force at a slot's epoch (the epoch schedule is read once). A mint without the
 * extension (USDC under SPL Token) has none.
 */
export class MintFees {
  private readonly configs = new Map<
    string,
    { at: number; config: Promise<TransferFeeConfig | null> }
  >();
  private schedule?: Promise<EpochSchedule>;
  private epoch?: { at: number; value: Promise<number> };

  constructor(
    private readonly connection: Connection,
    private readonly commitment: Commitment,
    private readonly now: () => number = Date.now,
  ) {}

  /** The fee a transfer of the mint landing at `slot` pays; null without one. */
  async at(mint: string, slot: number): Promise<TransferFee | null> {
    const config = await this.config(mint);
    if (!config) return null;
    const schedule = await this.epochSchedule();
    return getEpochFee(config, BigInt(schedule.getEpoch(slot)));
  }

  /** The fee a transfer of the mint pays now; null without one. */
  async current(mint: string): Promise<TransferFee | null> {
    const config = await this.config(mint);
    if (!config) return null;
    return getEpochFee(config, BigInt(await this.currentEpoch()));
  }

  private config(mint: string): Promise<TransferFeeConfig | null> {
    const cached = this.configs.get(mint);
    if (cached && this.now() - cached.at < FEE_CONFIG_TTL_MS) return cached.config;
    const config = this.connection
      .getAccountInfo(new PublicKey(mint), this.commitment)
      .then((info) => {
        if (!info || !info.owner.equals(TOKEN_2022_PROGRAM_ID)) return null;
        // The same extension read as the mint's resolution, again (a fee can be scheduled).
        return readMintExtensions(unpackMint(new PublicKey(mint), info, info.owner)).transferFee;
      });
    this.configs.set(mint, { at: this.now(), config });
    config.catch(() => this.configs.delete(mint)); // an RPC blip is not remembered
    return config;
  }

  private epochSchedule(): Promise<EpochSchedule> {
    this.schedule ??= this.connection.getEpochSchedule();
    this.schedule.catch(() => (this.schedule = undefined));
    return this.schedule;
  }

  private currentEpoch(): Promise<number> {
    const cached = this.epoch;
    if (cached && this.now() - cached.at < FEE_CONFIG_TTL_MS) return cached.value;
    const value = this.connection.getEpochInfo(this.commitment).then((info) => info.epoch);
    this.epoch = { at: this.now(), value };
    value.catch(() => (this.epoch = undefined));
    return value;
  }
}
