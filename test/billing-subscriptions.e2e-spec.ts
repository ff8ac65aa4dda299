import { Connection, Keypair } from '@solana/web3.js';
import { ChainPort } from '../src/solana/chain.port';
import { verifyWebhookSignature } from '../src/webhooks/signature';
import { billingHelpers } from './helpers/billing';
import { signAndSend, fund } from './helpers/chain-tx';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';
import { waitFor, WebhookReceiver } from './helpers/webhook-receiver';

const DAY = 86_400;
const USDC = 1_000_000n;

/**
 * A subscription's whole life through the HTTP API, on real PostgreSQL and the localnet chain,
 * with real keypairs signing what the service builds (token-delegate scheme).
 */
describe('Billing engine: a subscription from checkout to its end', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let connection: Connection;
  let chain: ChainPort;
  let receiver: WebhookReceiver;
  let planId: string;
  let billing: ReturnType<typeof billingHelpers>;

  const balance = (wallet: string) => billing.balance(wallet);
  const run = () => billing.run();
  const advance = (days: number) => billing.advance(days * DAY);
  const sub = async (id: string) =>
    (await t.http.get(`/api/subscriptions/${id}`).set(acme.auth).expect(200)).body;

  /** The checkout flow a wallet runs: transaction request, sign, send (the page then confirms). */
  async function subscribe(customer: Keypair, plan = planId) {
    const { body, signature } = await billing.signCheckout(customer, plan);
    expect(body.message).toBe('Subscribe to Pro (Acme): 10 USDC every 30 days');
    return { signature };
  }

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        LOCALNET_FINALITY_SLOTS: '0',
        // Only the test's own runs sweep and charge (the closed-tab test counts what its run
        // created; a scheduled sweep could get there first).
        WATCH_INTERVAL_MS: '3600000',
        CHARGE_RUN_INTERVAL_MS: '3600000',
      },
    });
    billing = billingHelpers(t);
    ({ chain, connection } = billing);
    acme = await t.createMerchant('Acme');
    receiver = await new WebhookReceiver().start();
    await t.http
      .put('/api/settings/webhook')
      .set(acme.auth)
      .send({ webhookUrl: receiver.url })
      .expect(200);
    const plan = await t.http
      .post('/api/plans')
      .set(acme.auth)
      .send({ label: 'Pro', mint: 'USDC', amount: '10', intervalSeconds: 30 * DAY })
      .expect(201);
    planId = plan.body.plan.id;
  });
  afterAll(async () => {
    await receiver.stop();
    await t.close();
  });

  it('subscribe, charge every period, pause, resume, fail, recover, revoke; cancel stops charges', async () => {
    const customer = Keypair.generate();
    const wallet = customer.publicKey.toBase58();
    fund(t, wallet, { symbol: 'USDC', amount: 30n * USDC });

    // Subscribe at the hosted checkout: verified on-chain, Active, first period charged at once.
    const { signature } = await subscribe(customer);
    const confirmed = await t.http
      .post(`/api/checkout/plans/${planId}/confirm`)
      .send({ signature })
      .expect(200);
    // The public answer says what the page shows, nothing about the subscription itself.
    expect(confirmed.body).toEqual({
      planId,
      created: true,
      subscribed: true,
      firstPayment: 'paid',
      failureReason: null,
    });
    const subscription = await billing.subscriptionOf(acme.auth, planId, wallet);
    expect(subscription).toMatchObject({ status: 'Active', customer: { walletAddress: wallet } });
    expect(subscription.lastChargeAt).not.toBeNull();
    const id = subscription.id;
    expect(await balance(wallet)).toBe(20n * USDC);
    expect(await balance(acme.walletAddress)).toBe(10n * USDC);
    // Idempotent per signature: the same subscription, nothing charged again.
    const again = await t.http
      .post(`/api/checkout/plans/${planId}/confirm`)
      .send({ signature })
      .expect(200);
    expect(again.body).toMatchObject({ planId, created: false, subscribed: true });
    expect(await balance(wallet)).toBe(20n * USDC);
    // A second subscribe of the same plan by the same wallet is refused (409).
    await t.http
      .post(`/api/checkout/plans/${planId}/transaction`)
      .send({ account: wallet })
      .expect(409);

    // Not yet due: a run charges nothing.
    expect((await run()).charges.succeeded).toBe(0);

    // One period later: the second charge.
    await advance(30);
    expect((await run()).charges).toMatchObject({ succeeded: 1, failed: 0 });
    expect(await balance(wallet)).toBe(10n * USDC);

    // Paused: no charge however long it stays paused.
    await t.http.post(`/api/subscriptions/${id}/pause`).set(acme.auth).expect(200);
    await advance(45);
    expect((await run()).charges.succeeded).toBe(0);
    expect(await balance(wallet)).toBe(10n * USDC);

    // Resumed: one charge at the next run (nothing billed back), period re-anchored.
    await t.http.post(`/api/subscriptions/${id}/resume`).set(acme.auth).expect(200);
    expect((await run()).charges.succeeded).toBe(1);
    expect((await run()).charges.succeeded).toBe(0);
    expect(await balance(wallet)).toBe(0n);
    const resumed = await sub(id);
    expect(new Date(resumed.currentPeriodEnd).getTime()).toBe(
      new Date(resumed.lastChargeAt).getTime() + 30 * DAY * 1000,
    );

    // Insufficient funds: PastDue with its reason and subscription.past_due.
    await advance(30);
    expect((await run()).charges).toMatchObject({ succeeded: 0, failed: 1 });
    expect(await sub(id)).toMatchObject({ status: 'PastDue', failureReason: 'insufficient_funds' });

    // Top up, resume: charged once, Active again.
    t.clock.advance(1000); // events are ordered by their domain time
    await t.http
      .post('/api/dev/faucet')
      .set(t.devAuth)
      .send({ walletAddress: wallet, mint: 'USDC', amount: '25' })
      .expect(200);
    await t.http.post(`/api/subscriptions/${id}/resume`).set(acme.auth).expect(200);
    expect((await run()).charges.succeeded).toBe(1);
    expect(await sub(id)).toMatchObject({ status: 'Active', failureReason: null });
    expect(await balance(wallet)).toBe(15n * USDC);

    // The customer revokes the approval on-chain: at the next charge the subscription completes.
    const revoke = await chain.buildRevoke({
      subscriber: wallet,
      merchantWallet: acme.walletAddress,
      planId,
      mint: 'USDC',
    });
    expect(
      (await signAndSend(t, revoke.transaction, revoke.lastValidBlockHeight, customer)).state,
    ).toBe('succeeded');
    await advance(30);
    expect((await run()).charges).toMatchObject({ succeeded: 0, completed: 1 });
    expect(await sub(id)).toMatchObject({
      status: 'Completed',
      failureReason: 'authorization_gone',
    });
    expect(await balance(wallet)).toBe(15n * USDC);

    // The ledger: every charge with its signature; on-chain balances equal it to the base unit.
    const ledger = (
      await t.http.get(`/api/payments?subscriptionId=${id}`).set(acme.auth).expect(200)
    ).body as {
      status: string;
      amount: string;
      signature: string | null;
      period: number;
      note: string | null;
    }[];
    const landed = ledger.filter((p) => p.status !== 'failed');
    expect(landed.map((p) => p.period).sort()).toEqual([1, 2, 3, 4]);
    expect(
      ledger
        .filter((p) => p.status === 'failed')
        .map((p) => p.note)
        .sort(),
    ).toEqual(['authorization_gone', 'insufficient_funds']);
    const charged = landed.reduce((sum, p) => sum + BigInt(Math.round(Number(p.amount) * 1e6)), 0n);
    expect(charged).toBe(40n * USDC);
    expect(await balance(acme.walletAddress)).toBe(charged);
    expect(30n * USDC + 25n * USDC - (await balance(wallet))).toBe(charged);
    for (const p of landed) {
      const status = await connection.getSignatureStatus(p.signature!, {
        searchTransactionHistory: true,
      });
      expect(status.value?.err).toBeNull();
    }

    // Events in order, and every webhook verifies.
    const types = (
      await t.sql<{ type: string }>(
        `SELECT type FROM events WHERE merchant_id = $1 AND type LIKE 'subscription.%'
          ORDER BY created_at, id`,
        [acme.id],
      )
    ).map((e) => e.type);
    expect(types).toEqual([
      'subscription.created',
      'subscription.activated',
      'subscription.paused',
      'subscription.resumed',
      'subscription.past_due',
      'subscription.resumed',
      'subscription.completed',
    ]);
    const [{ count }] = await t.sql<{ count: string }>(
      `SELECT count(*) FROM events WHERE merchant_id = $1`,
      [acme.id],
    );
    await waitFor(
      () => receiver.received.length >= Number(count),
      10_000,
      () => 'webhooks',
    );
    for (const hook of receiver.received) {
      expect(
        verifyWebhookSignature(
          hook.rawBody,
          hook.headers['service-signature'] as string,
          acme.webhookSecret,
        ),
      ).toBe(true);
    }
    expect(receiver.received.filter((h) => h.body.type === 'payment.received')).toHaveLength(4);
  });

  it('a merchant cancel stops every charge at once', async () => {
    const customer = Keypair.generate();
    const wallet = customer.publicKey.toBase58();
    fund(t, wallet, { symbol: 'USDC', amount: 100n * USDC });
    const { signature } = await subscribe(customer);
    await t.http.post(`/api/checkout/plans/${planId}/confirm`).send({ signature }).expect(200);
    const { id } = await billing.subscriptionOf(acme.auth, planId, wallet);
    expect(await balance(wallet)).toBe(90n * USDC);
    await t.http.post(`/api/subscriptions/${id}/cancel`).set(acme.auth).expect(200);
    await advance(90);
    await run();
    expect(await balance(wallet)).toBe(90n * USDC);
    expect((await sub(id)).status).toBe('Cancelled');
    // Replaying the subscribe's signature at the public confirm revives nothing.
    const replay = await t.http
      .post(`/api/checkout/plans/${planId}/confirm`)
      .send({ signature })
      .expect(200);
    expect(replay.body).toEqual({
      planId,
      created: false,
      subscribed: false,
      firstPayment: null,
      failureReason: null,
    });
    await advance(30);
    expect((await run()).charges.attempts).toBe(0);
    expect(await balance(wallet)).toBe(90n * USDC);
    expect((await sub(id)).status).toBe('Cancelled');
  });

  it('a customer who closes the tab after signing still gets a subscription (reconciling watcher)', async () => {
    const customer = Keypair.generate();
    const wallet = customer.publicKey.toBase58();
    fund(t, wallet, { symbol: 'USDC', amount: 50n * USDC });
    await subscribe(customer); // signed and sent; the page never confirms
    const result = await run();
    expect(result.subscriptionsCreated).toBe(1);
    const subs = (await t.http.get('/api/subscriptions').set(acme.auth).expect(200)).body as {
      customer: { walletAddress: string };
      status: string;
    }[];
    expect(subs.filter((s) => s.customer.walletAddress === wallet)).toMatchObject([
      { status: 'Active' },
    ]);
    expect(await balance(wallet)).toBe(40n * USDC);
    expect((await run()).subscriptionsCreated).toBe(0);
  });

  it('refuses a signature that is not a subscribe of this plan, and an unknown one', async () => {
    const other = await t.http
      .post('/api/plans')
      .set(acme.auth)
      .send({ label: 'Other', mint: 'USDC', amount: '1', intervalSeconds: DAY })
      .expect(201);
    const customer = Keypair.generate();
    fund(t, customer.publicKey.toBase58(), { symbol: 'USDC', amount: 50n * USDC });
    const { signature } = await subscribe(customer);
    const wrong = await t.http
      .post(`/api/checkout/plans/${other.body.plan.id}/confirm`)
      .send({ signature })
      .expect(400);
    expect(wrong.body.error.code).toBe('VALIDATION_ERROR');
    const unknown = await t.http
      .post(`/api/checkout/plans/${planId}/confirm`)
      .send({ signature: '1'.repeat(64) })
      .expect(400);
    expect(unknown.body.error.details[0].field).toBe('signature');
  });
});
