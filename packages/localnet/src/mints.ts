import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import type { PublicKey } from '@solana/web3.js';

/** The stablecoins localnet issues as mainnet does. */
export type MintSymbol = 'USDC' | 'PYUSD' | 'USDG';

/** All three have 6 decimals on every cluster. */
export const STABLECOIN_DECIMALS = 6;

/** The token program a mint belongs to. */
export type TokenProgramKind = 'spl-token' | 'token-2022';

export const TOKEN_PROGRAMS: Record<TokenProgramKind, PublicKey> = {
  'spl-token': TOKEN_PROGRAM_ID,
  'token-2022': TOKEN_2022_PROGRAM_ID,
};

/** A mint the chain creates: which stablecoin, at which address, under which program. */
export interface MintInfo {
  symbol: MintSymbol;
  address: string;
  tokenProgram: TokenProgramKind;
}

/**
 * The mints as mainnet-beta has them (addresses and programs): what a chain started with no mint
 * list creates, each address replaceable.
 */
export function mainnetMints(addresses: Partial<Record<MintSymbol, string>> = {}): MintInfo[] {
  return [
    {
      symbol: 'USDC',
      address: addresses.USDC ?? 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
      tokenProgram: 'spl-token',
    },
    {
      symbol: 'PYUSD',
      address: addresses.PYUSD ?? '2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo',
      tokenProgram: 'token-2022',
    },
    {
      symbol: 'USDG',
      address: addresses.USDG ?? '2u1tszSeqZ3qBWF3uNGPFc8TzMk2tdiwknnRMWGWjGWH',
      tokenProgram: 'token-2022',
    },
  ];
}
