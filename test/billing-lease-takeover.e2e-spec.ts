import { Keypair } from '@solana/web3.js';
import { billingHelpers } from './helpers/billing';
import { fund } from './helpers/chain-tx';
import { Instances } from './helpers/instances';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';
import { waitFor } from './helpers/webhook-receiver';

const USDC = 1_000_000n;
const DAY = 86_400;

/**
 * One period, one charge, even when transactions are dropped, land late and an instance stalls
 * past its lease (the defect this closes: a worker whose dropped try expired cleared the attempt
 * after another had taken it over and recorded a second try; a third was then signed while the
 * second could still land, and both did). Three service processes on one database and one
 * localnet, with localnet's fault switches: the first try is lost twice (its send and the
 * resend by the instance that takes over), every try lands 100 slots (40 s) late, and the
 * instance that sent the first try is stopped (SIGSTOP) until another has recorded a second,
 * then woken. The period is charged exactly once on the chain and once in the ledger.
 */
describe('Billing engine: a lease taken over from a stalled instance, with dropped and late transactions', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let billing: ReturnType<typeof billingHelpers>;
  let instances: Instances;
  const serviceKey = Keypair.generate();

  beforeAll(async () => {
    t = await createTestApp({
      env: { ROLE: 'api', SERVICE_KEYPAIR: JSON.stringify([...serviceKey.secretKey]) },
    });
    billing = billingHelpers(t);
    acme = await t.createMerchant('Acme');
    instances = new Instances({
      DATABASE_URL: t.databaseUrl,
      SOLANA_RPC_URL: t.chain!.url,
      SERVICE_KEYPAIR: JSON.stringify([...serviceKey.secretKey]),
      ROLE: 'worker',
      CHARGE_RUN_INTERVAL_MS: '1000',
      CHARGE_LEASE_SECONDS: '3',
      WATCH_INTERVAL_MS: '3600000',
    });
  }, 300_000);
  afterAll(async () => {
    instances?.stopAll();
    t?.chain?.faults.set({ dropSends: 0, delaySlots: 0 });
    await t?.close();
  });

  it('each period is charged exactly once, on the chain and in the ledger', async () => {
    const plan = await t.http
      .post('/api/plans')
      .set(acme.auth)
      .send({ label: 'Pro', mint: 'USDC', amount: '10', intervalSeconds: 30 * DAY })
      .expect(201);
    const customer = Keypair.generate();
    const wallet = customer.publicKey.toBase58();
    fund(t, wallet, { symbol: 'USDC', amount: 100n * USDC });
    const { subscription } = await billing.subscribe(customer, plan.body.plan.id, acme.auth);
    expect(await billing.balance(wallet)).toBe(90n * USDC);
    await billing.advance(30 * DAY); // period 2 is due
    const attempt = async () =>
      (await billing.attempts(subscription.id)).find((a) => a.period === 2);

    // Every send from now on is lost twice, then lands 40 s late.
    t.chain!.faults.set({ dropSends: 2, delaySlots: 100 });
    const first = await instances.start();
    await waitFor(
      async () => (await attempt())?.state === 'sent' && t.chain!.faults.state().dropSends === 1,
      60_000,
      () => 'no try was sent',
    );
    const tx1 = (await attempt())!.signature!;
    first.kill('SIGSTOP'); // stalls mid-confirm: its lease is no longer renewed

    // Another instance takes the attempt over, settles tx1 by its signature (resends it: lost
    // again), and once tx1 can never land, signs and records tx2, which lands late.
    await instances.start();
    await instances.start();
    await waitFor(
      async () => {
        const now = await attempt();
        return now?.signature !== null && now?.signature !== tx1;
      },
      150_000,
      () => 'no second try was recorded',
    );
    expect((await attempt())!.takeovers).toBeGreaterThanOrEqual(1);
    const tx2 = (await attempt())!.signature!;

    // The stalled instance wakes while tx2 is still on its way: its expired tx1 must not wipe
    // tx2's record (a third try would follow, and both would land).
    first.kill('SIGCONT');
    await waitFor(
      async () => (await attempt())?.state === 'succeeded',
      120_000,
      () => 'never charged',
    );
    expect((await attempt())!.signature).toBe(tx2);
    // Nothing else is on its way: every transaction sent has landed or died.
    t.chain!.faults.set({ delaySlots: 0 });
    await waitFor(
      () => t.chain!.faults.state().held === 0,
      120_000,
      () => 'transactions held',
    );
    instances.stopAll();

    // The chain: two periods paid, not three. The ledger: each period once, with its signature.
    expect(await billing.balance(wallet)).toBe(80n * USDC);
    expect(await billing.balance(acme.walletAddress)).toBe(20n * USDC);
    const ledger = (
      await t.http.get(`/api/payments?subscriptionId=${subscription.id}`).set(acme.auth)
    ).body as { period: number; status: string; signature: string }[];
    expect(
      ledger
        .filter((l) => l.status !== 'failed')
        .map((l) => l.period)
        .sort(),
    ).toEqual([1, 2]);
    expect(ledger.find((l) => l.period === 2)!.signature).toBe(tx2);
    const status = await billing.connection.getSignatureStatus(tx1, {
      searchTransactionHistory: true,
    });
    expect(status.value).toBeNull(); // tx1 never landed
  }, 600_000);
});
