import { mainnetMints } from '@stablecoin-billing/localnet';
import { mintTable } from './mints';

describe('the mint table and the localnet chain', () => {
  it("localnet's default mints are the service's localnet (and mainnet) table, address and program", () => {
    expect(mainnetMints()).toEqual(mintTable('localnet'));
    expect(mainnetMints()).toEqual(mintTable('mainnet-beta'));
  });

  it('an override reaches both the same way', () => {
    const USDC = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
    expect(mainnetMints({ USDC })).toEqual(mintTable('localnet', { USDC }));
  });
});
