import { Connection, Keypair, PublicKey, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { ChainPort } from '../../src/solana/chain.port';
import { signAndSend } from './chain-tx';
import type { TestApp } from './test-app';

/** The billing engine's test moves, through the HTTP API and the app's localnet chain. */
export function billingHelpers(t: TestApp) {
  const chain = t.app.get(ChainPort);
  const connection = new Connection(t.chain!.url, 'confirmed');
  return {
    chain,
    connection,
    /** A wallet's USDC balance; 0 before its token account exists (a merchant before any charge). */
    async balance(wallet: string): Promise<bigint> {
      const account = new PublicKey(await chain.tokenAccount(wallet, 'USDC'));
      if (!(await connection.getAccountInfo(account))) return 0n;
      return BigInt((await connection.getTokenAccountBalance(account)).value.amount);
    },
    /** `POST /api/dev/billing/run`: what the run did. */
    async run(auth: Record<string, string>) {
      return (await t.http.post('/api/dev/billing/run').set(auth).expect(200)).body;
    },
    /** Moves the service and chain clocks together. */
    advance(auth: Record<string, string>, seconds: number) {
      return t.http.post('/api/dev/clock/advance').set(auth).send({ seconds }).expect(200);
    },
    /**
     * The wallet's side of a checkout: the transaction request, signed and sent; the request's
     * answer and the signature the page confirms with.
     */
    async signCheckout(customer: Keypair, planId: string) {
      const req = await t.http
        .post(`/api/checkout/plans/${planId}/transaction`)
        .send({ account: customer.publicKey.toBase58() })
        .expect(200);
      const signature = await this.sendSigned(customer, req.body.transaction as string);
      return { body: req.body as { transaction: string; message: string }, signature };
    },
    /** Signs a transaction the service built (base64) as the wallet and sends it; its signature. */
    async sendSigned(customer: Keypair, transaction: string): Promise<string> {
      const height = await connection.getBlockHeight();
      const outcome = await signAndSend(t, transaction, height + 150, customer);
      if (outcome.state !== 'succeeded') throw new Error(`the transaction ${outcome.state}`);
      const tx = Transaction.from(Buffer.from(transaction, 'base64'));
      tx.partialSign(customer);
      return bs58.encode(tx.signature!);
    },
  };
}
