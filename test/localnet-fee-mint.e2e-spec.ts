import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAccount,
  getAssociatedTokenAddressSync,
  getMint,
  getTransferFeeAmount,
  getTransferFeeConfig,
  TOKEN_2022_PROGRAM_ID,
  unpackMint,
} from '@solana/spl-token';
import {
  Connection,
  Keypair,
  PublicKey,
  sendAndConfirmTransaction,
  Transaction,
} from '@solana/web3.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalnetChain } from '@stablecoin-billing/localnet';
import { mintTable } from '../src/solana/mints';
import { startTestChain, TestChain } from './helpers/test-chain';

const [, PYUSD, USDG] = mintTable('localnet').map((m) => new PublicKey(m.address));
const UNIT = 1_000_000n;
/** Far above any fee these transfers can owe: the rate alone decides. */
const NO_CAP = 1_000_000_000_000n;

function ata(mint: PublicKey, owner: PublicKey): PublicKey {
  return getAssociatedTokenAddressSync(mint, owner, true, TOKEN_2022_PROGRAM_ID);
}

// web3.js keeps a block-height poll (a 1 s sleep) running a moment after a confirmation.
afterAll(() => new Promise((resolve) => setTimeout(resolve, 1100)));

describe('Localnet stablecoins with a Token-2022 transfer fee (transferFees option)', () => {
  let tc: TestChain;
  let connection: Connection;
  const alice = Keypair.generate();
  const bob = Keypair.generate();

  beforeAll(async () => {
    tc = await startTestChain(undefined, {
      transferFees: {
        PYUSD: { basisPoints: 100, maximumFee: NO_CAP },
        USDG: { basisPoints: 100, maximumFee: 250_000n },
      },
    });
    connection = new Connection(tc.url, 'confirmed');
    for (const mint of ['PYUSD', 'USDG']) {
      tc.chain.faucet({
        wallet: alice.publicKey.toBase58(),
        lamports: 2_000_000_000n,
        mint,
        amount: 500n * UNIT,
      });
    }
  });
  afterAll(async () => {
    await tc.close();
  });

  /** alice sends `amount` of `mint` to bob with transferChecked (creating bob's account). */
  async function transfer(mint: PublicKey, amount: bigint): Promise<void> {
    const tx = new Transaction().add(
      createAssociatedTokenAccountIdempotentInstruction(
        alice.publicKey,
        ata(mint, bob.publicKey),
        bob.publicKey,
        mint,
        TOKEN_2022_PROGRAM_ID,
      ),
      createTransferCheckedInstruction(
        ata(mint, alice.publicKey),
        mint,
        ata(mint, bob.publicKey),
        alice.publicKey,
        amount,
        6,
        [],
        TOKEN_2022_PROGRAM_ID,
      ),
    );
    await sendAndConfirmTransaction(connection, tx, [alice], { commitment: 'confirmed' });
  }

  async function held(mint: PublicKey, owner: PublicKey) {
    const account = await getAccount(
      connection,
      ata(mint, owner),
      'confirmed',
      TOKEN_2022_PROGRAM_ID,
    );
    return { amount: account.amount, withheld: getTransferFeeAmount(account)?.withheldAmount };
  }

  it('creates the mints with the fee in force from epoch 0, older and newer alike', async () => {
    for (const [mint, maximumFee] of [
      [PYUSD, NO_CAP],
      [USDG, 250_000n],
    ] as const) {
      const config = getTransferFeeConfig(
        await getMint(connection, mint, 'confirmed', TOKEN_2022_PROGRAM_ID),
      );
      const fee = { epoch: 0n, maximumFee, transferFeeBasisPoints: 100 };
      expect(config?.olderTransferFee).toEqual(fee);
      expect(config?.newerTransferFee).toEqual(fee);
    }
  });

  it('withholds 1 of 100 PYUSD at 100 bps: the destination gets 99, the fee is withheld on it', async () => {
    await transfer(PYUSD, 100n * UNIT);
    expect(await held(PYUSD, bob.publicKey)).toEqual({ amount: 99n * UNIT, withheld: 1n * UNIT });
    expect(await held(PYUSD, alice.publicKey)).toEqual({ amount: 400n * UNIT, withheld: 0n });
  });

  it('rounds the fee up: 150 base units at 100 bps withhold 2', async () => {
    await transfer(PYUSD, 150n);
    expect(await held(PYUSD, bob.publicKey)).toEqual({
      amount: 99n * UNIT + 148n,
      withheld: 1n * UNIT + 2n,
    });
  });

  it('caps the fee at maximumFee: 100 USDG at 100 bps, capped at 0.25, withhold 0.25', async () => {
    await transfer(USDG, 100n * UNIT);
    expect(await held(USDG, bob.publicKey)).toEqual({
      amount: 100n * UNIT - 250_000n,
      withheld: 250_000n,
    });
    expect(await held(USDG, alice.publicKey)).toEqual({ amount: 400n * UNIT, withheld: 0n });
  });
});

describe('Localnet transferFees on a persisted chain', () => {
  it('applies to a chain it creates, and a restored chain keeps the mints it has', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'localnet-fees-'));
    /** The mint's fee rate now in force, read from the chain in process. */
    const feeOf = (chain: LocalnetChain, mint: PublicKey) => {
      const account = chain.getAccount(mint.toBase58())!;
      const decoded = unpackMint(
        mint,
        {
          data: account.data,
          executable: false,
          owner: new PublicKey(account.owner),
          lamports: Number(account.lamports),
        },
        TOKEN_2022_PROGRAM_ID,
      );
      return getTransferFeeConfig(decoded)?.newerTransferFee.transferFeeBasisPoints;
    };
    try {
      const created = await LocalnetChain.open({ dataDir, mints: mintTable('localnet') });
      expect(feeOf(created, PYUSD)).toBe(0);
      await created.close();
      const logged: string[] = [];
      const restored = await LocalnetChain.open({
        dataDir,
        mints: mintTable('localnet'),
        transferFees: { PYUSD: { basisPoints: 100, maximumFee: NO_CAP } },
        log: (line) => logged.push(line),
      });
      try {
        expect(feeOf(restored, PYUSD)).toBe(0);
        expect(logged).toContainEqual(expect.stringContaining('PYUSD exists already'));
      } finally {
        await restored.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses a fee the token program would refuse, before creating anything', async () => {
    await expect(
      LocalnetChain.open({
        mints: mintTable('localnet'),
        transferFees: { USDG: { basisPoints: 10_001, maximumFee: 0n } },
      }),
    ).rejects.toThrow(/USDG transfer fee must be 0..10000 basis points/);
    await expect(
      LocalnetChain.open({
        mints: mintTable('localnet'),
        transferFees: { PYUSD: { basisPoints: 1, maximumFee: -1n } },
      }),
    ).rejects.toThrow(/PYUSD maximum transfer fee/);
  });
});
