import {
  AccountLayout,
  AccountState,
  ExtensionType,
  MintLayout,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  unpackMint,
} from '@solana/spl-token';
import { AccountInfo, Keypair, PublicKey } from '@solana/web3.js';
import { describeExtensions, isPaused, NO_EXTENSIONS, readMintExtensions } from './mint-extensions';
import { tokenAccountState } from './token-account-state';

/** Where Token-2022 puts the account type byte, after a base account's length (165). */
const ACCOUNT_TYPE_AT = 165;
const MINT_TYPE = 1;
const ACCOUNT_TYPE = 2;

const key = () => Keypair.generate().publicKey;
const u16 = (n: number) => Buffer.from([n & 0xff, n >> 8]);
const u64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(n);
  return b;
};
const tlv = (type: ExtensionType, data: Buffer) =>
  Buffer.concat([u16(type), u16(data.length), data]);

/** The bytes of a 6-decimal Token-2022 mint carrying `entries` (TLV), as the program lays them. */
function mintBytes(entries: Buffer[]): Buffer {
  const base = Buffer.alloc(MintLayout.span);
  MintLayout.encode(
    {
      mintAuthorityOption: 1,
      mintAuthority: key(),
      supply: 0n,
      decimals: 6,
      isInitialized: true,
      freezeAuthorityOption: 1,
      freezeAuthority: key(),
    },
    base,
  );
  const padded = Buffer.concat([base, Buffer.alloc(ACCOUNT_TYPE_AT - base.length)]);
  return Buffer.concat([padded, Buffer.from([MINT_TYPE]), ...entries]);
}

const info = (data: Buffer, owner = TOKEN_2022_PROGRAM_ID): AccountInfo<Buffer> => ({
  data,
  owner,
  lamports: 1,
  executable: false,
});

describe('Token-2022 mint extensions, read with spl-token', () => {
  const address = key();
  const hookProgram = key();
  const hookAuthority = key();
  const delegate = key();
  const pauser = key();
  const confidentialAuthority = key();
  const fee = (epoch: bigint, max: bigint, bps: number) =>
    Buffer.concat([u64(epoch), u64(max), u16(bps)]);

  const everything = mintBytes([
    tlv(
      ExtensionType.TransferFeeConfig,
      Buffer.concat([key().toBuffer(), key().toBuffer(), u64(0n), fee(0n, 0n, 0), fee(5n, 9n, 25)]),
    ),
    tlv(
      ExtensionType.ConfidentialTransferMint,
      Buffer.concat([confidentialAuthority.toBuffer(), Buffer.from([0]), Buffer.alloc(32)]),
    ),
    tlv(
      ExtensionType.TransferHook,
      Buffer.concat([hookAuthority.toBuffer(), hookProgram.toBuffer()]),
    ),
    tlv(ExtensionType.PermanentDelegate, delegate.toBuffer()),
    tlv(ExtensionType.PausableConfig, Buffer.concat([pauser.toBuffer(), Buffer.from([1])])),
    tlv(ExtensionType.DefaultAccountState, Buffer.from([AccountState.Frozen])),
  ]);

  it('reads every extension the service acts on, each authority in base58', () => {
    const mint = unpackMint(address, info(everything), TOKEN_2022_PROGRAM_ID);
    const e = readMintExtensions(mint);
    expect(e.types).toEqual([
      'TransferFeeConfig',
      'ConfidentialTransferMint',
      'TransferHook',
      'PermanentDelegate',
      'PausableConfig',
      'DefaultAccountState',
    ]);
    expect(e.transferFee?.newerTransferFee).toEqual({
      epoch: 5n,
      maximumFee: 9n,
      transferFeeBasisPoints: 25,
    });
    expect(e).toMatchObject({
      transferHook: { authority: hookAuthority.toBase58(), programId: hookProgram.toBase58() },
      permanentDelegate: delegate.toBase58(),
      pausable: { authority: pauser.toBase58(), paused: true },
      defaultAccountState: 'frozen',
      confidentialTransfer: {
        authority: confidentialAuthority.toBase58(),
        autoApproveNewAccounts: false,
      },
    });
    expect(isPaused(mint)).toBe(true);
    expect(describeExtensions('PYUSD', address.toBase58(), e)).toBe(
      `PYUSD (${address.toBase58()}): TransferFeeConfig, ConfidentialTransferMint, TransferHook, ` +
        `PermanentDelegate, PausableConfig, DefaultAccountState; transfer fee 25 bps (max 9) ` +
        `from epoch 5; transfer hook program ${hookProgram.toBase58()}; pausable (PAUSED now); ` +
        `permanent delegate ${delegate.toBase58()}; new accounts start frozen; confidential ` +
        `transfers configured (never used)`,
    );
  });

  it('a hook with no program (PYUSD and USDG as issued) reads as programId null: nothing to resolve', () => {
    const mint = unpackMint(
      address,
      info(
        mintBytes([
          tlv(
            ExtensionType.TransferHook,
            Buffer.concat([hookAuthority.toBuffer(), Buffer.alloc(32)]),
          ),
          tlv(ExtensionType.PausableConfig, Buffer.concat([Buffer.alloc(32), Buffer.from([0])])),
        ]),
      ),
      TOKEN_2022_PROGRAM_ID,
    );
    expect(readMintExtensions(mint)).toMatchObject({
      transferHook: { authority: hookAuthority.toBase58(), programId: null },
      pausable: { authority: null, paused: false },
      permanentDelegate: null,
      defaultAccountState: null,
      confidentialTransfer: null,
      transferFee: null,
    });
    expect(isPaused(mint)).toBe(false);
  });

  it('an SPL Token mint has none', () => {
    const base = Buffer.alloc(MintLayout.span);
    MintLayout.encode(
      {
        mintAuthorityOption: 0,
        mintAuthority: PublicKey.default,
        supply: 0n,
        decimals: 6,
        isInitialized: true,
        freezeAuthorityOption: 0,
        freezeAuthority: PublicKey.default,
      },
      base,
    );
    const mint = unpackMint(address, info(base, TOKEN_PROGRAM_ID), TOKEN_PROGRAM_ID);
    expect(readMintExtensions(mint)).toBe(NO_EXTENSIONS);
    expect(describeExtensions('USDC', address.toBase58(), NO_EXTENSIONS)).toBe(
      `USDC (${address.toBase58()}): no Token-2022 extensions`,
    );
  });
});

describe('Confidential balances are never money', () => {
  /** A Token-2022 token account with a ConfidentialTransferAccount whose balances are all set. */
  function confidentialAccount(amount: bigint, owner: PublicKey): AccountInfo<Buffer> {
    const base = Buffer.alloc(AccountLayout.span);
    AccountLayout.encode(
      {
        mint: key(),
        owner,
        amount,
        delegateOption: 0,
        delegate: PublicKey.default,
        state: AccountState.Initialized,
        isNativeOption: 0,
        isNative: 0n,
        delegatedAmount: 0n,
        closeAuthorityOption: 0,
        closeAuthority: PublicKey.default,
      },
      base,
    );
    // approved, ElGamal key, pending balance lo/hi, available balance, decryptable balance,
    // flags and counters: every byte set, as an account holding confidential funds would.
    const confidential = Buffer.alloc(295, 0x7f);
    return info(
      Buffer.concat([
        base,
        Buffer.from([ACCOUNT_TYPE]),
        tlv(ExtensionType.ConfidentialTransferAccount, confidential),
      ]),
    );
  }

  it('the balance the charge path and the checkout read is the public amount alone: pending and available confidential balances count as nothing', () => {
    const service = key();
    const account = key();
    expect(
      tokenAccountState(account, confidentialAccount(0n, key()), TOKEN_2022_PROGRAM_ID, service),
    ).toMatchObject({ exists: true, frozen: false, balance: 0n });
    expect(
      tokenAccountState(account, confidentialAccount(7n, key()), TOKEN_2022_PROGRAM_ID, service)
        .balance,
    ).toBe(7n);
  });
});
