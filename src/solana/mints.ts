import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import type { PublicKey } from '@solana/web3.js';
import { MONEY_DECIMALS } from '../common/money';
import type { SolanaCluster } from '../config/app-config';

/** The stablecoins the service bills in (spec: `mint`). */
export const MINT_SYMBOLS = ['USDC', 'PYUSD', 'USDG'] as const;
export type MintSymbol = (typeof MINT_SYMBOLS)[number];

/** Whether a stored text is one of the service's mints. */
export function isMintSymbol(value: string): value is MintSymbol {
  return (MINT_SYMBOLS as readonly string[]).includes(value);
}

/** All three have 6 decimals on every cluster (DESIGN section 6): the money module's. */
export const STABLECOIN_DECIMALS = MONEY_DECIMALS;

/** The token program a mint belongs to. The chain is the authority: the service reads the owner. */
export type TokenProgramKind = 'spl-token' | 'token-2022';

export const TOKEN_PROGRAMS: Record<TokenProgramKind, PublicKey> = {
  'spl-token': TOKEN_PROGRAM_ID,
  'token-2022': TOKEN_2022_PROGRAM_ID,
};

export interface MintInfo {
  symbol: MintSymbol;
  address: string;
  /** The program it belongs to on mainnet-beta; localnet creates it under the same program. */
  tokenProgram: TokenProgramKind;
}

/**
 * Mint addresses per cluster (DESIGN section 6). Localnet creates the mainnet mints at their
 * mainnet addresses with a local mint authority. Each address can be overridden by configuration.
 */
const MINT_ADDRESSES: Record<SolanaCluster, Record<MintSymbol, string>> = {
  'mainnet-beta': {
    USDC: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    PYUSD: '2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo',
    USDG: '2u1tszSeqZ3qBWF3uNGPFc8TzMk2tdiwknnRMWGWjGWH',
  },
  devnet: {
    USDC: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
    PYUSD: 'CXk2AMBfi3TwaEL2468s6zP8xq9NxTXjp9gjMgzeUynM',
    USDG: '4F6PM96JJxngmHnZLBh9n58RH4aTVNWvDs2nuwrT5BP7',
  },
  localnet: {
    USDC: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    PYUSD: '2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo',
    USDG: '2u1tszSeqZ3qBWF3uNGPFc8TzMk2tdiwknnRMWGWjGWH',
  },
};

const MAINNET_PROGRAMS: Record<MintSymbol, TokenProgramKind> = {
  USDC: 'spl-token',
  PYUSD: 'token-2022',
  USDG: 'token-2022',
};

/** The mint table of a cluster, with any per-symbol address overrides applied. */
export function mintTable(
  cluster: SolanaCluster,
  overrides: Partial<Record<MintSymbol, string>> = {},
): MintInfo[] {
  return MINT_SYMBOLS.map((symbol) => ({
    symbol,
    address: overrides[symbol] ?? MINT_ADDRESSES[cluster][symbol],
    tokenProgram: MAINNET_PROGRAMS[symbol],
  }));
}
