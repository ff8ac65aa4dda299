import { Keypair } from '@solana/web3.js';
import { billingHelpers } from './helpers/billing';
import { fund } from './helpers/chain-tx';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';
import { waitFor } from './helpers/webhook-receiver';

const USDC = 1_000_000n;
const DAY = 86_400;

/**
 * A transaction the RPC lists but does not serve (a provider whose history lags, or lost it)
 * holds up nothing after it: the watchers' walks park it and go on, every sweep tries it again,
 * and once it is served it is settled, once (through the API, PostgreSQL and localnet, whose
 * `unservedTransactions` fault makes `getTransaction` answer null for it).
 */
describe('Watchers: a signature that cannot be read blocks nothing', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let billing: ReturnType<typeof billingHelpers>;

  const run = () => billing.run();
  const unserve = (...signatures: string[]) =>
    t.chain!.faults.set({ unservedTransactions: signatures });
  const parked = () =>
    t.sql<{ signature: string; kind: string; merchant_id: string; tries: number }>(
      `SELECT signature, kind, merchant_id, tries FROM unread_signatures ORDER BY signature`,
    );
  const wallet = () => {
    const k = Keypair.generate();
    fund(t, k.publicKey.toBase58(), { symbol: 'USDC', amount: 100n * USDC });
    return k;
  };

  beforeAll(async () => {
    t = await createTestApp({ env: { LOCALNET_FINALITY_SLOTS: '0', ROLE: 'api' } });
    billing = billingHelpers(t);
    acme = await t.createMerchant('Acme');
  });
  afterAll(async () => {
    await t?.close();
  });
  afterEach(() => {
    t?.chain?.faults.set({ unservedTransactions: [] });
  });

  describe('the invoice payment watcher', () => {
    const create = async (total: string) =>
      (
        await t.http
          .post('/api/invoices')
          .set(acme.auth)
          .send({
            walletAddress: Keypair.generate().publicKey.toBase58(),
            mint: 'USDC',
            lineItems: [{ description: 'Work', quantity: 1, unitAmount: total }],
          })
          .expect(201)
      ).body.invoice as { id: string };
    const invoice = async (id: string) =>
      (await t.http.get(`/api/invoices/${id}`).set(acme.auth).expect(200)).body as {
        status: string;
        amountPaid: string;
      };
    const lines = async (invoiceId: string) =>
      (await t.http.get(`/api/payments?invoiceId=${invoiceId}`).set(acme.auth).expect(200))
        .body as { amount: string; signature: string; status: string }[];
    /** Pays the invoice through its checkout's Solana Pay transaction request: the signature. */
    const pay = async (invoiceId: string) => {
      const payer = wallet();
      const req = await t.http
        .post(`/api/checkout/invoices/${invoiceId}/transaction`)
        .send({ account: payer.publicKey.toBase58() })
        .expect(200);
      return billing.sendSigned(payer, req.body.transaction as string);
    };

    /** Runs the engine until the invoice is Paid (finality may lag the confirmation a slot). */
    const paid = (id: string) =>
      waitFor(
        async () => {
          await run();
          return (await invoice(id)).status === 'Paid';
        },
        15_000,
        () => `invoice ${id} never became Paid`,
      );

    it('pays B while A is not served, then A once it is, once', async () => {
      const a = await create('10');
      const b = await create('20');
      await run(); // the merchant's accounts get their cursors, caught up
      const paidA = await pay(a.id);
      unserve(paidA);
      const paidB = await pay(b.id);

      // A is listed before B in the account's history, and cannot be read: B is paid anyway.
      const first = await run();
      expect(first.invoices.paymentsRecorded).toBe(1);
      expect(await lines(b.id)).toMatchObject([{ amount: '20', signature: paidB }]);
      await paid(b.id);
      expect(await invoice(a.id)).toMatchObject({ status: 'Open', amountPaid: '0' });
      expect(await lines(a.id)).toEqual([]);
      // Parked, and tried again by every sweep since.
      const [parkedA] = await parked();
      expect(await parked()).toEqual([
        { signature: paidA, kind: 'merchant_account', merchant_id: acme.id, tries: parkedA.tries },
      ]);
      await run();
      expect(await parked()).toEqual([{ ...parkedA, tries: parkedA.tries + 1 }]);
      expect(await lines(a.id)).toEqual([]);

      // Served again: the next sweep records A, once, and A is Paid.
      unserve();
      expect((await run()).invoices.paymentsRecorded).toBe(1);
      expect(await parked()).toEqual([]);
      await paid(a.id);
      expect(await invoice(a.id)).toMatchObject({ status: 'Paid', amountPaid: '10' });
      expect(await lines(a.id)).toMatchObject([
        { amount: '10', signature: paidA, status: 'finalized' },
      ]);
      await run();
      expect(await lines(a.id)).toHaveLength(1);
      expect(await lines(b.id)).toHaveLength(1);
    });
  });

  describe('the reconciling subscribe watcher', () => {
    let plan: string;
    const subscriptions = async (customer: Keypair) =>
      (
        (await t.http.get('/api/subscriptions').set(acme.auth).expect(200)).body as {
          planId: string;
          status: string;
          customer: { walletAddress: string };
        }[]
      ).filter(
        (s) => s.planId === plan && s.customer.walletAddress === customer.publicKey.toBase58(),
      );

    beforeAll(async () => {
      plan = (
        await t.http
          .post('/api/plans')
          .set(acme.auth)
          .send({ label: 'Pro', mint: 'USDC', amount: '10', intervalSeconds: 30 * DAY })
          .expect(201)
      ).body.plan.id as string;
    });

    it("creates Y's subscription while X's subscribe is not served, then X's once it is, charged once", async () => {
      const [x, y] = [wallet(), wallet()];
      // Both sign the checkout and close the tab: only the watcher can find them.
      const { signature: subscribedX } = await billing.signCheckout(x, plan);
      unserve(subscribedX);
      await billing.signCheckout(y, plan);

      expect((await run()).subscriptionsCreated).toBe(1);
      expect((await subscriptions(y)).map((s) => s.status)).toEqual(['Active']);
      expect(await subscriptions(x)).toEqual([]);
      expect(await parked()).toEqual([
        { signature: subscribedX, kind: 'plan_subscribes', merchant_id: acme.id, tries: 0 },
      ]);

      unserve();
      expect((await run()).subscriptionsCreated).toBe(1);
      expect((await subscriptions(x)).map((s) => s.status)).toEqual(['Active']);
      expect(await parked()).toEqual([]);
      expect((await run()).subscriptionsCreated).toBe(0);
      expect(await subscriptions(x)).toHaveLength(1);
      for (const customer of [x, y]) {
        expect(await billing.balance(customer.publicKey.toBase58())).toBe(90n * USDC);
      }
    });
  });
});
