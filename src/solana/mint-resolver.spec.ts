import { Keypair, PublicKey } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { addressOf, ataOf, TOKEN_2022_PROGRAM } from './mint-resolver';

describe('addressOf', () => {
  it("is each key's base58 address, written once per key object", () => {
    const keys = Array.from({ length: 50 }, () => Keypair.generate().publicKey);
    for (const key of keys) expect(addressOf(key)).toBe(key.toBase58());
    // Written once: a later toBase58 of the same object is not asked again.
    const key = keys[0];
    const spy = jest.spyOn(key, 'toBase58');
    expect(addressOf(key)).toBe(new PublicKey(key.toBytes()).toBase58());
    expect(spy).not.toHaveBeenCalled();
  });

  it("of a derived token account is the account's address", () => {
    const owner = Keypair.generate().publicKey;
    const mint = {
      address: Keypair.generate().publicKey.toBase58(),
      tokenProgram: TOKEN_PROGRAM_ID.toBase58(),
    };
    const ata = ataOf(mint as Parameters<typeof ataOf>[0], owner);
    expect(addressOf(ata)).toBe(ata.toBase58());
    expect(TOKEN_2022_PROGRAM).toBe(TOKEN_2022_PROGRAM_ID.toBase58());
  });
});
