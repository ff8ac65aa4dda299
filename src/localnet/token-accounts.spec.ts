import { AccountLayout, AccountState, MintLayout } from '@solana/spl-token';
import { Keypair, PublicKey } from '@solana/web3.js';
import {
  decodeMint,
  encodeMint,
  isMintData,
  isTokenAccountData,
  parseTokenData,
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

  it('encodes a mint that spl-token decodes, and tells mints from token accounts', () => {
    const authority = Keypair.generate().publicKey;
    const data = encodeMint(authority.toBytes(), 6);
    const decoded = MintLayout.decode(data);
    expect(decoded.mintAuthority.equals(authority)).toBe(true);
    expect(decoded).toMatchObject({ decimals: 6, isInitialized: true, supply: 0n });
    expect(decoded.freezeAuthorityOption).toBe(0);
    expect(decodeMint(data).mintAuthority?.equals(authority.toBuffer())).toBe(true);
    expect([isMintData(data), isTokenAccountData(data)]).toEqual([true, false]);
    const account = tokenAccount(5n);
    expect([isMintData(account), isTokenAccountData(account)]).toEqual([false, true]);
    expect(isTokenAccountData(Buffer.alloc(165))).toBe(false); // uninitialized
  });

  it('parses token accounts into the jsonParsed shape, optional fields only when set', () => {
    const decimals = () => 6;
    expect(parseTokenData('spl-token', tokenAccount(2_000_000n), decimals)).toEqual({
      program: 'spl-token',
      parsed: {
        type: 'account',
        info: {
          isNative: false,
          mint: mint.toBase58(),
          owner: owner.toBase58(),
          state: 'initialized',
          tokenAmount: { amount: '2000000', decimals: 6, uiAmount: 2, uiAmountString: '2' },
        },
      },
      space: 165,
    });
    const parsed = parseTokenData('spl-token', tokenAccount(1n, true), decimals);
    expect(parsed?.parsed.info).toMatchObject({
      delegate: delegate.toBase58(),
      delegatedAmount: { amount: '400', uiAmountString: '0.0004' },
    });
    // Without its mint the account cannot be parsed (the RPC falls back to base64).
    expect(parseTokenData('spl-token', tokenAccount(1n), () => undefined)).toBeUndefined();
    expect(parseTokenData('spl-token', Buffer.alloc(10), decimals)).toBeUndefined();
  });

  it('lists Token-2022 extensions after the account type byte', () => {
    // A Token-2022 associated token account: base, account type 2, ImmutableOwner (type 7, no data).
    const data = Buffer.concat([tokenAccount(3n), Buffer.from([2, 7, 0, 0, 0])]);
    expect(parseTokenData('spl-token-2022', data, () => 6)).toMatchObject({
      program: 'spl-token-2022',
      parsed: { type: 'account', info: { extensions: [{ extension: 'immutableOwner' }] } },
      space: 170,
    });
  });
});
