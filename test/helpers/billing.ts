import {
  Connection,
  Keypair,
  PublicKey,
  Transaction,
  TransactionInstruction,
} from '@solana/web3.js';
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
    async run() {
      return (await t.http.post('/api/dev/billing/run').set(t.devAuth).expect(200)).body;
    },
    /** Moves the service and chain clocks together. */
    advance(seconds: number) {
      return t.http.post('/api/dev/clock/advance').set(t.devAuth).send({ seconds }).expect(200);
    },
    /** The payer's side of an invoice's checkout: its transaction request, signed and sent. */
    async payInvoice(payer: Keypair, invoiceId: string): Promise<string> {
      const request = await t.http
        .post(`/api/checkout/invoices/${invoiceId}/transaction`)
        .send({ account: payer.publicKey.toBase58() })
        .expect(200);
      return this.sendSigned(payer, request.body.transaction as string);
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
    /**
     * The whole checkout of a wallet (transaction request, signed, sent, confirmed) and the
     * subscription it created, as the merchant's API shows it.
     */
    async subscribe(customer: Keypair, planId: string, merchantAuth: Record<string, string>) {
      const { signature } = await this.signCheckout(customer, planId);
      const confirmed = await t.http
        .post(`/api/checkout/plans/${planId}/confirm`)
        .send({ signature })
        .expect(200);
      const subscription = await this.subscriptionOf(
        merchantAuth,
        planId,
        customer.publicKey.toBase58(),
      );
      return { signature, confirmed: confirmed.body as Record<string, unknown>, subscription };
    },
    /** The wallet's newest subscription to the plan, from the merchant's API. */
    async subscriptionOf(merchantAuth: Record<string, string>, planId: string, wallet: string) {
      const list = (await t.http.get('/api/subscriptions').set(merchantAuth).expect(200)).body as {
        id: string;
        planId: string;
        customer: { walletAddress: string };
      }[];
      const found = list.find((s) => s.planId === planId && s.customer.walletAddress === wallet);
      if (!found) throw new Error(`no subscription of ${wallet} to ${planId}`);
      return (await t.http.get(`/api/subscriptions/${found.id}`).set(merchantAuth).expect(200))
        .body as Record<string, unknown> & { id: string; status: string };
    },
    /** A subscription's charge attempts, by period. */
    attempts(subscriptionId: string) {
      return t.sql<{
        period: number;
        state: string;
        signature: string | null;
        takeovers: number;
        lease_owner: string | null;
        failure_reason: string | null;
        last_error: string | null;
        last_valid_block_height: string | null;
      }>(
        `SELECT period, state, signature, takeovers, lease_owner, failure_reason, last_error,
                last_valid_block_height::text
           FROM charge_attempts WHERE subscription_id = $1 ORDER BY period`,
        [subscriptionId],
      );
    },
    /**
     * Sends `instructions` in one transaction paid by `payer` and signed by `signers` (a
     * transaction of the test's own making: a forged, partial or foreign one); its signature
     * once it landed and succeeded.
     */
    async sendInstructions(
      payer: Keypair,
      instructions: TransactionInstruction[],
      ...signers: Keypair[]
    ): Promise<string> {
      const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash();
      const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight });
      tx.add(...instructions);
      tx.sign(payer, ...signers);
      const signature = bs58.encode(tx.signature!);
      const outcome = await chain.sendAndConfirm({
        signature,
        transaction: tx.serialize().toString('base64'),
        lastValidBlockHeight,
      });
      if (outcome.state !== 'succeeded') throw new Error(`the transaction ${outcome.state}`);
      return signature;
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

/** A door a test opens when it is ready: `wait()` resolves once `open()` is called. */
export function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, wait: () => opened };
}
