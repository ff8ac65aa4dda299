import {
  getAssociatedTokenAddressSync,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  unpackMint,
} from '@solana/spl-token';
import { Commitment, Connection, PublicKey } from '@solana/web3.js';
import type { ResolvedMint } from './chain.port';
import { MintInfo, MintSymbol, STABLECOIN_DECIMALS } from './mints';

/**
 * The mints as this chain has them: the token program is whichever program owns the mint account
 * (the chain is the authority, not the table), and only 6-decimal mints are accepted. Resolved
 * once per mint; a failed lookup (an RPC blip) is not remembered.
 */
export class MintResolver {
  private readonly resolved = new Map<MintSymbol, Promise<ResolvedMint>>();

  constructor(
    private readonly connection: Connection,
    private readonly commitment: Commitment,
    private readonly table: MintInfo[],
  ) {}

  mint(symbol: MintSymbol): Promise<ResolvedMint> {
    let resolved = this.resolved.get(symbol);
    if (!resolved) {
      resolved = this.read(symbol);
      this.resolved.set(symbol, resolved);
      resolved.catch(() => this.resolved.delete(symbol));
    }
    return resolved;
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

/**
 * Token account addresses already derived (a derivation hashes until it finds an address off the
 * curve, ~0.1 ms of CPU; every charge needs two). Bounded: the oldest go first.
 */
const derivedAccounts = new Map<string, PublicKey>();
const DERIVED_ACCOUNTS_KEPT = 50_000;
