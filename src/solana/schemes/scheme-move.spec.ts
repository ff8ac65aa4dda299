import { Keypair, PublicKey } from '@solana/web3.js';
import { TransactionTooLargeError, type ResolvedMint } from '../chain.port';
import { NO_EXTENSIONS } from '../mint-extensions';
import { memo, UnsignedTxBuilder } from '../transactions';
import type { ProgramScheme } from './program.scheme';
import { moveTransaction } from './scheme-move';
import type { TokenDelegateScheme } from './token-delegate.scheme';

const wallet = Keypair.generate().publicKey;
const mint: ResolvedMint = {
  symbol: 'PYUSD',
  address: Keypair.generate().publicKey.toBase58(),
  tokenProgram: 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb',
  decimals: 6,
  extensions: NO_EXTENSIONS,
};
const builder = new UnsignedTxBuilder({
  get: () =>
    Promise.resolve({
      blockhash: Keypair.generate().publicKey.toBase58(),
      lastValidBlockHeight: 100,
      slot: 7,
    }),
});
const plan = () => ({
  merchantWallet: Keypair.generate().publicKey.toBase58(),
  planId: '0b8f5a3e-3c1f-4c8e-9d0a-6a0c9d3f5e21',
  amount: 10_000_000n,
  periodHours: 720,
});
/** The program's side of a move, answering `step` with instructions of `bytes` each. */
const program = (step: 'authority' | 'subscribe', count: number, bytes: number) =>
  ({
    subscribeAll: () =>
      Promise.resolve({
        step,
        instructions: Array.from({ length: count }, () => memo('x'.repeat(bytes), [wallet])),
      }),
  }) as unknown as ProgramScheme;
const delegate = {
  approveService: () => memo('approve', [wallet]),
} as unknown as TokenDelegateScheme;

describe('moveTransaction', () => {
  it("the authority's step gives the approval back to the service key when subscriptions still need it, and only then", async () => {
    const input = { subscriber: wallet.toBase58(), mint: 'PYUSD' as const, plans: [plan()] };
    const kept = await moveTransaction(
      { program: program('authority', 1, 10), delegate },
      builder,
      { ...input, keepApproved: 5n },
      mint,
    );
    const none = await moveTransaction(
      { program: program('authority', 1, 10), delegate },
      builder,
      { ...input, keepApproved: 0n },
      mint,
    );
    expect(kept.step).toBe('authority');
    expect(Buffer.from(kept.transaction, 'base64').includes(Buffer.from('approve'))).toBe(true);
    expect(Buffer.from(none.transaction, 'base64').includes(Buffer.from('approve'))).toBe(false);
  });

  it('a move that does not fit in one transaction is a 409 saying what to do, not a 503', async () => {
    const moving = moveTransaction(
      { program: program('subscribe', 3, 400), delegate },
      builder,
      { subscriber: wallet.toBase58(), mint: 'PYUSD', plans: [plan(), plan()], keepApproved: 0n },
      mint,
    );
    await expect(moving).rejects.toBeInstanceOf(TransactionTooLargeError);
    await expect(moving).rejects.toMatchObject({
      code: 'CONFLICT',
      message:
        'These 2 subscriptions do not fit in one transaction: cancel one, then move the others',
    });
  });

  it('refuses a move of nothing', async () => {
    await expect(
      moveTransaction(
        { program: program('subscribe', 1, 10), delegate },
        builder,
        {
          subscriber: new PublicKey(wallet).toBase58(),
          mint: 'PYUSD',
          plans: [],
          keepApproved: 0n,
        },
        mint,
      ),
    ).rejects.toBeInstanceOf(RangeError);
  });
});
