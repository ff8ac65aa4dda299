import { AccountLayout, AccountState, MintLayout } from '@solana/spl-token';
import { Keypair, PublicKey } from '@solana/web3.js';
import {
  decodeMint,
  isMintData,
  isTokenAccountData,
  uiAmountString,
  uiTokenAmount,
} from './token-accounts';

describe('token accounts', () => {
  const mint = Keypair.generate().publicKey;
  const owner = Keypair.generate().publicKey;
  const delegate = Keypair.generate().publicKey;

  function tokenAccount(amount: bigint, withDelegate = false): Buffer {
    const data = Buffer.alloc(AccountLayout.span);
    AccountLayout.encode(
      {
        mint,
        owner,
        amount,
        delegateOption: withDelegate ? 1 : 0,
        delegate: withDelegate ? delegate : PublicKey.default,
        state: AccountState.Initialized,
        isNativeOption: 0,
        isNative: 0n,
        delegatedAmount: withDelegate ? 400n : 0n,
        closeAuthorityOption: 0,
        closeAuthority: PublicKey.default,
      },
      data,
    );
    return data;
  }

  it('writes amounts as the RPC does: trimmed decimal strings and a float', () => {
    expect(uiAmountString(0n, 6)).toBe('0');
    expect(uiAmountString(1n, 6)).toBe('0.000001');
    expect(uiAmountString(1_500_000n, 6)).toBe('1.5');
    expect(uiAmountString(12_000_000n, 6)).toBe('12');
    expect(uiAmountString(18_446_744_073_709_551_615n, 6)).toBe('18446744073709.551615');
    expect(uiAmountString(42n, 0)).toBe('42');
    expect(uiTokenAmount(1_250_000n, 6)).toEqual({
      amount: '1250000',
      decimals: 6,
      uiAmount: 1.25,
      uiAmountString: '1.25',
    });
  });

  it('reads a mint as spl-token writes it, and tells mints from token accounts', () => {
    const authority = Keypair.generate().publicKey;
    const data = Buffer.alloc(MintLayout.span);
    MintLayout.encode(
      {
        mintAuthorityOption: 1,
        mintAuthority: authority,
        supply: 7n,
        decimals: 6,
        isInitialized: true,
        freezeAuthorityOption: 0,
        freezeAuthority: PublicKey.default,
      },
      data,
    );
    expect(decodeMint(data)).toMatchObject({ supply: 7n, decimals: 6, freezeAuthority: null });
    expect(decodeMint(data).mintAuthority?.equals(authority.toBuffer())).toBe(true);
    expect([isMintData(data), isTokenAccountData(data)]).toEqual([true, false]);
    const account = tokenAccount(5n);
    expect([isMintData(account), isTokenAccountData(account)]).toEqual([false, true]);
    expect(isTokenAccountData(Buffer.alloc(165))).toBe(false); // uninitialized
  });
});
