import { Keypair, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { ChainPort, TxOutcome } from '../../src/solana/chain.port';
import type { TestApp } from './test-app';

/**
 * Signs an unsigned transaction the API returned (base64) with `signers`, as a wallet would,
 * and sends it through the app's own chain port; the outcome once it is settled.
 */
export async function signAndSend(
  t: TestApp,
  unsignedTx: string,
  lastValidBlockHeight: number,
  ...signers: Keypair[]
): Promise<TxOutcome> {
  const tx = Transaction.from(Buffer.from(unsignedTx, 'base64'));
  tx.partialSign(...signers);
  return t.app.get(ChainPort).sendAndConfirm({
    signature: bs58.encode(tx.signature!),
    transaction: tx.serialize().toString('base64'),
    lastValidBlockHeight,
  });
}

/** Funds `wallet` with SOL (and optionally a stablecoin) from the test chain's faucet. */
export function fund(t: TestApp, wallet: string, mint?: { symbol: string; amount: bigint }): void {
  t.chain!.chain.faucet({
    wallet,
    lamports: 2_000_000_000n,
    ...(mint ? { mint: mint.symbol, amount: mint.amount } : {}),
  });
}
