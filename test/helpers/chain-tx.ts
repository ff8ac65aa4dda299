import { createAssociatedTokenAccountIdempotentInstruction } from '@solana/spl-token';
import { Keypair, PublicKey, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { ChainPort, TxOutcome } from '../../src/solana/chain.port';
import type { MintSymbol } from '../../src/solana/mints';
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

/**
 * What a merchant's first registration does on-chain: creates its receiving token account of
 * each mint (the merchant signs and pays the rent), so invoices can be paid and plans charged.
 * Through the test chain directly (a test's setup, not what is under test).
 */
export async function openReceivingAccounts(
  t: TestApp,
  merchant: Keypair,
  mints: MintSymbol[] = ['USDC', 'PYUSD', 'USDG'],
): Promise<void> {
  const chain = t.app.get(ChainPort);
  fund(t, merchant.publicKey.toBase58());
  const instructions = [];
  for (const symbol of mints) {
    const mint = await chain.mint(symbol);
    instructions.push(
      createAssociatedTokenAccountIdempotentInstruction(
        merchant.publicKey,
        new PublicKey(await chain.tokenAccount(merchant.publicKey.toBase58(), symbol)),
        merchant.publicKey,
        new PublicKey(mint.address),
        new PublicKey(mint.tokenProgram),
      ),
    );
  }
  const { blockhash } = t.chain!.chain.latestBlockhash();
  const tx = new Transaction({ feePayer: merchant.publicKey, recentBlockhash: blockhash });
  tx.add(...instructions);
  tx.sign(merchant);
  t.chain!.chain.sendTransaction(tx.serialize());
}
