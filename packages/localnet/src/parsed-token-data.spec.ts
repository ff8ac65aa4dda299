import {
  AccountLayout,
  AccountState,
  createAssociatedTokenAccountIdempotentInstruction,
  getAssociatedTokenAddressSync,
  TOKEN_2022_PROGRAM_ID,
} from '@solana/spl-token';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { Account, LiteSvm } from 'litesvm/dist/internal';
import { mainnetMints } from './mints';
import { parseTokenData } from './parsed-token-data';
import { buildMint } from './stablecoin-mints';

describe('jsonParsed token data', () => {
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

  it('a token account: the RPC shape, optional fields only when set', () => {
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

  describe('PYUSD and USDG as issued, built by the real Token-2022 program', () => {
    const svm = new LiteSvm();
    svm.setBlockhashCheck(false);
    const authority = Keypair.generate();
    svm.setAccount(
      authority.publicKey.toBytes(),
      new Account(10n ** 15n, new Uint8Array(0), SystemProgram.programId.toBytes(), false, 0n),
    );
    const mints = mainnetMints();
    for (const info of mints) buildMint(svm, info, authority);
    const a = authority.publicKey.toBase58();
    const read = (address: PublicKey) => {
      const account = svm.getAccount(address.toBytes())!;
      const program = new PublicKey(account.owner()).equals(TOKEN_2022_PROGRAM_ID)
        ? 'spl-token-2022'
        : 'spl-token';
      return parseTokenData(program, account.data(), () => 6);
    };

    it.each([
      ['PYUSD', 'PayPal USD'],
      ['USDG', 'Global Dollar'],
    ])('%s: 6 decimals, our authority, and every extension with its settings', (symbol, name) => {
      const info = mints.find((m) => m.symbol === symbol)!;
      const parsed = read(new PublicKey(info.address));
      expect(parsed?.program).toBe('spl-token-2022');
      expect(parsed?.parsed).toEqual({
        type: 'mint',
        info: {
          mintAuthority: a,
          supply: '0',
          decimals: 6,
          isInitialized: true,
          freezeAuthority: a,
          extensions: [
            { extension: 'mintCloseAuthority', state: { closeAuthority: a } },
            {
              extension: 'confidentialTransferMint',
              state: { authority: a, autoApproveNewAccounts: false, auditorElgamalPubkey: null },
            },
            {
              extension: 'confidentialTransferFeeConfig',
              state: expect.objectContaining({ authority: a, harvestToMintEnabled: true }),
            },
            {
              extension: 'transferFeeConfig',
              state: {
                transferFeeConfigAuthority: a,
                withdrawWithheldAuthority: a,
                withheldAmount: 0,
                olderTransferFee: { epoch: 0, maximumFee: 0, transferFeeBasisPoints: 0 },
                newerTransferFee: { epoch: 0, maximumFee: 0, transferFeeBasisPoints: 0 },
              },
            },
            { extension: 'transferHook', state: { authority: a, programId: null } },
            { extension: 'permanentDelegate', state: { delegate: a } },
            {
              extension: 'metadataPointer',
              state: { authority: a, metadataAddress: info.address },
            },
            {
              extension: 'tokenMetadata',
              state: expect.objectContaining({
                updateAuthority: a,
                mint: info.address,
                name,
                symbol,
                additionalMetadata: [],
              }),
            },
          ],
        },
      });
    });

    it('USDC: a plain SPL Token mint with a freeze authority', () => {
      const usdc = mints.find((m) => m.symbol === 'USDC')!;
      expect(read(new PublicKey(usdc.address))).toEqual({
        program: 'spl-token',
        parsed: {
          type: 'mint',
          info: {
            mintAuthority: a,
            supply: '0',
            decimals: 6,
            isInitialized: true,
            freezeAuthority: a,
          },
        },
        space: 82,
      });
    });

    it('a PYUSD token account carries the extensions its mint requires', () => {
      const pyusd = new PublicKey(mints.find((m) => m.symbol === 'PYUSD')!.address);
      const ata = getAssociatedTokenAddressSync(pyusd, owner, false, TOKEN_2022_PROGRAM_ID);
      const tx = new Transaction({
        feePayer: authority.publicKey,
        blockhash: svm.latestBlockhash(),
        lastValidBlockHeight: 0,
      }).add(
        createAssociatedTokenAccountIdempotentInstruction(
          authority.publicKey,
          ata,
          owner,
          pyusd,
          TOKEN_2022_PROGRAM_ID,
        ),
      );
      tx.sign(authority);
      svm.sendLegacyTransaction(tx.serialize());
      expect(read(ata)?.parsed.info).toMatchObject({
        mint: pyusd.toBase58(),
        owner: owner.toBase58(),
        extensions: [
          { extension: 'immutableOwner' },
          { extension: 'transferFeeAmount', state: { withheldAmount: 0 } },
          { extension: 'transferHookAccount', state: { transferring: false } },
        ],
      });
    });
  });
});
