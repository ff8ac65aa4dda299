import type { PaymentRequirements } from '@x402/core/types';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { Keypair } from '@solana/web3.js';
import type { ChildProcess } from 'node:child_process';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { X402_NETWORKS } from '../src/solana/exact-transfers';
import { X402Reconciler } from '../src/x402/x402-reconciler';
import { PendingSettlement, X402Repository } from '../src/x402/x402.repository';
import { X402Service } from '../src/x402/x402.service';
import { billingHelpers } from './helpers/billing';
import { fund } from './helpers/chain-tx';
import { exited, Instances } from './helpers/instances';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';
import { waitFor } from './helpers/webhook-receiver';

const USDC = 1_000_000n;
const PRICE = '25000';

interface Settled {
  success: boolean;
  errorReason?: string;
  transaction: string;
}

/**
 * x402 settlement exactly once (docs/x402.md): one payment presented to three instances on one
 * database at once settles once; an instance killed after sending leaves a Pending settlement
 * that another concludes by its signature (the ledger line once, never a second send); one
 * killed with its transaction lost is Failed once its blockhash expires, its fee given back.
 */
describe('x402 settlement: once across instances and kills', () => {
  let t: TestApp;
  let instances: Instances;
  let acme: TestMerchant;
  let billing: ReturnType<typeof billingHelpers>;
  let requirements: PaymentRequirements;
  let urls: string[];
  const serviceKey = Keypair.generate();

  /** A payer holding 1 USDC and its payment of `requirements`, built by the official client. */
  const payment = async () => {
    const keypair = Keypair.generate();
    fund(t, keypair.publicKey.toBase58(), { symbol: 'USDC', amount: USDC });
    const scheme = new ExactSvmClient(await createKeyPairSignerFromBytes(keypair.secretKey), {
      rpcUrl: t.chain!.url,
    });
    const created = await scheme.createPaymentPayload(2, requirements);
    return {
      wallet: keypair.publicKey.toBase58(),
      body: {
        x402Version: 2,
        paymentPayload: {
          x402Version: 2,
          resource: { url: 'https://api.acme.test/report' },
          accepted: requirements,
          payload: created.payload,
        },
        paymentRequirements: requirements,
      },
    };
  };
  const settleAt = async (url: string, body: object): Promise<Settled> => {
    const res = await fetch(`${url}/x402/settle`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...acme.auth },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Settled;
  };
  const settlementsOf = (payer: string) =>
    t.sql<{ status: string; signature: string; error: string | null; payment_id: string | null }>(
      `SELECT status, signature, error, payment_id FROM x402_settlements WHERE payer = $1`,
      [payer],
    );
  const linesOf = (payer: string) =>
    t.sql<{ id: string; signature: string; amount: string }>(
      `SELECT id, signature, amount::text FROM payments WHERE kind = 'per_request' AND payer = $1`,
      [payer],
    );
  const eventsOf = (lineId: string) =>
    t.sql(
      `SELECT id FROM events WHERE type = 'payment.per_request'
          AND payload->'data'->'object'->>'id' = $1`,
      [lineId],
    );
  const spent = async () =>
    BigInt(
      (
        (await t.http.get('/x402/fee-budget').set(acme.auth).expect(200)).body as {
          spentLamports: string;
        }
      ).spentLamports,
    );
  /** Runs the reconciler, the sender's grace (30 s) past, until `done`. */
  const reconcileUntil = async (done: () => Promise<boolean>, ms: number, what: string) =>
    waitFor(
      async () => {
        t.clock.set(new Date(Date.now() + 60_000));
        await t.app.get(X402Reconciler).reconcile();
        return done();
      },
      ms,
      () => what,
    );

  beforeAll(async () => {
    const secret = JSON.stringify([...serviceKey.secretKey]);
    t = await createTestApp({
      env: {
        LOCALNET_FINALITY_SLOTS: '0',
        SERVICE_KEYPAIR: secret,
        WATCH_INTERVAL_MS: '3600000',
        CHARGE_RUN_INTERVAL_MS: '3600000',
      },
    });
    billing = billingHelpers(t);
    acme = await t.createMerchant('Acme');
    instances = new Instances({
      DATABASE_URL: t.databaseUrl,
      SOLANA_RPC_URL: t.chain!.url,
      SERVICE_KEYPAIR: secret,
      ROLE: 'api',
    });
    const [a, b] = await Promise.all([instances.serving(), instances.serving()]);
    const server: Server = t.app.getHttpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    urls = [`http://127.0.0.1:${(server.address() as AddressInfo).port}`, a.url, b.url];
    requirements = {
      scheme: 'exact',
      network: X402_NETWORKS.localnet as `${string}:${string}`,
      amount: PRICE,
      asset: (await billing.chain.mint('USDC')).address,
      payTo: acme.walletAddress,
      maxTimeoutSeconds: 60,
      extra: { feePayer: serviceKey.publicKey.toBase58() },
    };
  }, 300_000);
  afterAll(async () => {
    t?.chain?.faults.set({ dropSends: 0, delaySlots: 0 });
    instances?.stopAll();
    await t?.close();
  });

  it('one payment presented to three instances at once settles once: one success, two duplicate_settlement, one ledger line, one event, one debit', async () => {
    const { wallet, body } = await payment();
    const before = await spent();
    const answers = await Promise.all(urls.map((url) => settleAt(url, body)));

    const won = answers.filter((a) => a.success);
    expect(won).toHaveLength(1);
    expect(answers.filter((a) => !a.success).map((a) => a.errorReason)).toEqual([
      'duplicate_settlement',
      'duplicate_settlement',
    ]);
    const lines = await linesOf(wallet);
    expect(lines).toEqual([
      { id: expect.any(String), signature: won[0].transaction, amount: PRICE },
    ]);
    expect(await eventsOf(lines[0].id)).toHaveLength(1);
    expect(await billing.balance(wallet)).toBe(USDC - BigInt(PRICE));
    const [settlement] = await settlementsOf(wallet);
    expect(settlement).toMatchObject({ status: 'Settled', payment_id: lines[0].id });
    // Its fee counted once.
    expect((await spent()) - before).toBe(
      billing.chain.networkFee(
        (
          await t.sql<{ transaction: string }>(
            `SELECT transaction FROM x402_settlements WHERE signature = $1`,
            [won[0].transaction],
          )
        )[0].transaction,
      ),
    );
  });

  it('an instance killed after sending: another concludes the settlement by signature, the ledger line once, nothing sent twice', async () => {
    const victim = await instances.serving();
    const { wallet, body } = await payment();
    // The transaction lands ~10 s after it is sent: the victim is waiting for it when it dies.
    t.chain!.faults.set({ delaySlots: 25 });
    void settleAt(victim.url, body).catch(() => undefined);
    await waitFor(
      async () => (await settlementsOf(wallet)).length === 1,
      20_000,
      () => 'the victim never wrote its settlement',
    );
    // Sent (the chain holds it for later), and not concluded: the victim dies now.
    await waitFor(
      () => Promise.resolve(t.chain!.faults.state().held === 1),
      20_000,
      () => 'the victim never sent its transaction',
    );
    victim.child.kill('SIGKILL');
    await exited(victim.child);
    expect((await settlementsOf(wallet))[0].status).toBe('Pending');
    t.chain!.faults.set({ delaySlots: 0 });

    await waitFor(
      async () => (await billing.balance(wallet)) === USDC - BigInt(PRICE),
      30_000,
      () => 'the transfer never landed',
    );
    // The sender's conclusion and the reconciler's at once (as when a slow sender wakes):
    // each a compare-and-set on Pending, so one writes the ledger line and the other nothing.
    const pending = (
      await t.app.get(X402Repository).pending(new Date(Date.now() + 60_000), 100)
    ).filter((p) => p.payer === wallet);
    expect(pending).toHaveLength(1);
    const outcome = await billing.chain.outcome(
      pending[0].signature,
      Number(pending[0].last_valid_block_height),
    );
    expect(outcome.state).toBe('succeeded');
    const x402 = t.app.get(X402Service);
    expect(
      await Promise.all([x402.conclude(pending[0], outcome), x402.conclude(pending[0], outcome)]),
    ).toEqual(['settled', 'settled']);
    const [settlement] = await settlementsOf(wallet);
    const lines = await linesOf(wallet);
    expect(lines).toEqual([
      { id: settlement.payment_id, signature: settlement.signature, amount: PRICE },
    ]);
    expect(await eventsOf(lines[0].id)).toHaveLength(1);
    // Concluded once: another pass changes nothing.
    await t.app.get(X402Reconciler).reconcile();
    expect(await linesOf(wallet)).toHaveLength(1);
    expect(await billing.balance(wallet)).toBe(USDC - BigInt(PRICE));
  });

  it('an instance killed with its transaction lost: Failed once the blockhash expired, its fee given back, no ledger line', async () => {
    const victim: { child: ChildProcess; url: string } = await instances.serving();
    // A fee spent today already, so that a second give-back would show (the day's spend is
    // never below 0).
    expect((await settleAt(urls[0], (await payment()).body)).success).toBe(true);
    const { wallet, body } = await payment();
    const before = await spent();
    expect(before).toBeGreaterThan(0n);
    t.chain!.faults.set({ dropSends: 1 });
    void settleAt(victim.url, body).catch(() => undefined);
    await waitFor(
      async () => (await settlementsOf(wallet)).length === 1,
      20_000,
      () => 'the victim never wrote its settlement',
    );
    await waitFor(
      () => Promise.resolve(t.chain!.faults.state().dropSends === 0),
      20_000,
      () => 'the send was never made',
    );
    victim.child.kill('SIGKILL');
    await exited(victim.child);
    expect(await spent()).toBeGreaterThan(before);

    await reconcileUntil(
      async () => (await settlementsOf(wallet))[0].status === 'Failed',
      150_000,
      'the reconciler never failed it',
    );
    expect((await settlementsOf(wallet))[0].error).toBe('expired');
    expect(await spent()).toBe(before);
    // Concluded again (a second reconciler that read it Pending): the fee is given back once.
    const [failed] = await t.sql<PendingSettlement>(
      `SELECT id, merchant_id, signature, payer, mint, amount::text, network_fee::text,
              resource_url, last_valid_block_height::text, network
         FROM x402_settlements WHERE payer = $1`,
      [wallet],
    );
    await t.app.get(X402Service).conclude(failed, { state: 'expired' });
    expect(await spent()).toBe(before);
    expect(await linesOf(wallet)).toEqual([]);
    expect(await billing.balance(wallet)).toBe(USDC);
  }, 200_000);
});
