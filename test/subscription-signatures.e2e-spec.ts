import {
  createApproveCheckedInstruction,
  createRevokeInstruction,
  createTransferCheckedInstruction,
} from '@solana/spl-token';
import { Keypair, PublicKey } from '@solana/web3.js';
import { memo } from '../src/solana/transactions';
import { billingHelpers, gate } from './helpers/billing';
import { fund } from './helpers/chain-tx';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';

const DAY = 86_400;
const USDC = 1_000_000n;
const PERIODS = 12n;

/**
 * A subscription is born from its own signature, once (token-delegate scheme, through the HTTP
 * API, PostgreSQL and localnet): what a confirm accepts is read from the transaction's
 * instructions, and a signature the service accepted can never create or change anything again,
 * whichever endpoint it is posted to. Also the portal's refusals that guard a customer's money.
 */
describe('Subscriptions: bound to their own signatures', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let billing: ReturnType<typeof billingHelpers>;
  let pro: string; // 10 USDC every 30 days
  let basic: string; // 4 USDC every 30 days
  let service: PublicKey;
  let usdc: { address: PublicKey; program: PublicKey };

  const confirm = (planId: string, signature: string) =>
    t.http.post(`/api/checkout/plans/${planId}/confirm`).send({ signature });
  const balance = (wallet: Keypair) => billing.balance(wallet.publicKey.toBase58());
  const subscriptions = async (wallet: Keypair) =>
    (
      (await t.http.get('/api/subscriptions').set(acme.auth).expect(200)).body as {
        id: string;
        planId: string;
        status: string;
        customer: { walletAddress: string };
      }[]
    ).filter((s) => s.customer.walletAddress === wallet.publicKey.toBase58());
  const portal = (token: string) => ({ 'x-portal-session': token });
  async function session(subscriptionId: string): Promise<string> {
    const [row] = await t.sql<{ customer_id: string }>(
      'SELECT customer_id FROM subscriptions WHERE id = $1',
      [subscriptionId],
    );
    const res = await t.http
      .post(`/api/customers/${row.customer_id}/portal-session`)
      .set(acme.auth)
      .expect(201);
    return /\/portal\/([A-Za-z0-9_-]+)$/.exec(res.body.url as string)![1];
  }
  const wallet = (usdcAmount: bigint) => {
    const k = Keypair.generate();
    fund(t, k.publicKey.toBase58(), { symbol: 'USDC', amount: usdcAmount });
    return k;
  };
  const ata = async (owner: Keypair) =>
    new PublicKey(await billing.chain.tokenAccount(owner.publicKey.toBase58(), 'USDC'));
  /** An approval of `delegate` on the owner's USDC account for `amount`, signed by the owner. */
  const approve = async (owner: Keypair, amount: bigint, delegate = service) =>
    createApproveCheckedInstruction(
      await ata(owner),
      usdc.address,
      delegate,
      owner.publicKey,
      amount,
      6,
      [],
      usdc.program,
    );
  /** The wallet's checkout transaction for the plan, signed and sent (not confirmed). */
  const checkout = async (customer: Keypair, planId: string) =>
    (await billing.signCheckout(customer, planId)).signature;

  beforeAll(async () => {
    t = await createTestApp({ env: { LOCALNET_FINALITY_SLOTS: '0', ROLE: 'api' } });
    billing = billingHelpers(t);
    acme = await t.createMerchant('Acme');
    service = new PublicKey(billing.chain.servicePublicKey);
    const mint = await billing.chain.mint('USDC');
    usdc = { address: new PublicKey(mint.address), program: new PublicKey(mint.tokenProgram) };
    const plan = async (label: string, amount: string) =>
      (
        await t.http
          .post('/api/plans')
          .set(acme.auth)
          .send({ label, mint: 'USDC', amount, intervalSeconds: 30 * DAY })
          .expect(201)
      ).body.plan.id as string;
    pro = await plan('Pro', '10');
    basic = await plan('Basic', '4');
  });
  afterAll(async () => {
    await t?.close();
  });
  afterEach(() => jest.restoreAllMocks());

  describe('the public confirm', () => {
    it('a re-authorisation replayed at the public confirm after a merchant cancel revives nothing', async () => {
      const customer = wallet(100n * USDC);
      const { subscription } = await billing.subscribe(customer, pro, acme.auth);
      const token = await session(subscription.id);
      const built = await t.http
        .post(`/api/portal/subscriptions/${subscription.id}/reauthorize/transaction`)
        .set(portal(token))
        .send({ account: customer.publicKey.toBase58() })
        .expect(200);
      const reauthorization = await billing.sendSigned(customer, built.body.transaction as string);
      await t.http
        .post(`/api/portal/subscriptions/${subscription.id}/reauthorize/confirm`)
        .set(portal(token))
        .send({ signature: reauthorization })
        .expect(200);
      await t.http.post(`/api/subscriptions/${subscription.id}/cancel`).set(acme.auth).expect(200);
      const before = await balance(customer);

      const replay = await confirm(pro, reauthorization).expect(400);
      expect(replay.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        message: 'signature was already used to change a subscription; a signature is used once',
        details: [{ field: 'signature' }],
      });
      expect((await subscriptions(customer)).map((s) => s.status)).toEqual(['Cancelled']);
      await billing.advance(30 * DAY);
      expect((await billing.run()).charges.attempts).toBe(0);
      expect(await balance(customer)).toBe(before);
    });

    it('a subscribe confirmed while the wallet is subscribed is bound to that subscription: after a cancel it creates nothing', async () => {
      const customer = wallet(100n * USDC);
      const a = await checkout(customer, pro);
      expect((await confirm(pro, a).expect(200)).body).toMatchObject({ created: true });
      // The wallet signs a second subscribe of the plan (another tab, another app): a valid one,
      // approving a share on top of what the first still needs.
      const b = await billing.sendInstructions(customer, [
        memo(`subscribe:v1:${pro}`),
        await approve(customer, 2n * PERIODS * 10n * USDC),
      ]);
      expect(b).not.toBe(a);
      expect((await confirm(pro, b).expect(200)).body).toEqual({
        planId: pro,
        created: false,
        subscribed: true,
        firstPayment: 'paid',
        failureReason: null,
      });
      const [live] = await subscriptions(customer);
      const [bound] = await t.sql<{ subscription_id: string; use: string }>(
        'SELECT subscription_id, use FROM subscription_signatures WHERE signature = $1',
        [b],
      );
      expect(bound).toEqual({ subscription_id: live.id, use: 'subscribe' });

      await t.http.post(`/api/subscriptions/${live.id}/cancel`).set(acme.auth).expect(200);
      const before = await balance(customer);
      for (const signature of [a, b]) {
        expect((await confirm(pro, signature).expect(200)).body).toEqual({
          planId: pro,
          created: false,
          subscribed: false,
          firstPayment: null,
          failureReason: null,
        });
      }
      expect((await subscriptions(customer)).map((s) => s.status)).toEqual(['Cancelled']);
      expect(await balance(customer)).toBe(before);
    });

    it('a subscribe confirmed for its plan is refused at another plan, and creates nothing there', async () => {
      const customer = wallet(100n * USDC);
      const signature = await checkout(customer, pro);
      await confirm(pro, signature).expect(200);
      const other = await confirm(basic, signature).expect(400);
      expect(other.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        message: 'signature belongs to a subscribe of another plan',
      });
      expect((await subscriptions(customer)).map((s) => s.planId)).toEqual([pro]);
      expect(await balance(customer)).toBe(90n * USDC);
    });

    it('reads the instructions: a memo alone, an approval without the memo, another delegate or another transaction of the wallet are refused', async () => {
      const customer = wallet(100n * USDC);
      const share = PERIODS * 10n * USDC;
      const refusals = [
        // The subscribe memo, and no approval.
        await billing.sendInstructions(customer, [memo(`subscribe:v1:${pro}`)]),
        // An approval of the service key, without the plan's memo.
        await billing.sendInstructions(customer, [await approve(customer, share)]),
        // The memo with an approval of someone else.
        await billing.sendInstructions(customer, [
          memo(`subscribe:v1:${pro}`),
          await approve(customer, share, Keypair.generate().publicKey),
        ]),
        // Any other transaction the wallet paid for (a transfer to the merchant).
        await billing.sendInstructions(customer, [
          createTransferCheckedInstruction(
            await ata(customer),
            usdc.address,
            await ata(customer),
            customer.publicKey,
            1n,
            6,
            [],
            usdc.program,
          ),
        ]),
      ];
      for (const signature of refusals) {
        const res = await confirm(pro, signature).expect(400);
        expect(res.body.error).toMatchObject({
          code: 'VALIDATION_ERROR',
          message: 'signature is not a subscribe to this plan signed by its subscriber',
        });
      }
      expect(await subscriptions(customer)).toEqual([]);
      expect(await balance(customer)).toBe(100n * USDC); // the self-transfer moved nothing
    });

    it('the subscriber is who signed the approval, not who paid the fee: a sponsor may pay', async () => {
      const customer = wallet(100n * USDC);
      const sponsor = Keypair.generate();
      fund(t, sponsor.publicKey.toBase58());
      const signature = await billing.sendInstructions(
        sponsor,
        [memo(`subscribe:v1:${pro}`), await approve(customer, PERIODS * 10n * USDC)],
        customer,
      );
      expect((await confirm(pro, signature).expect(200)).body).toMatchObject({ created: true });
      expect((await subscriptions(customer)).map((s) => s.status)).toEqual(['Active']);
      expect(await subscriptions(sponsor)).toEqual([]);
      expect(await balance(customer)).toBe(90n * USDC);
    });

    it('two confirms of one wallet racing over one approval: one subscription, the other refused', async () => {
      for (let round = 0; round < 3; round++) {
        const customer = wallet(100n * USDC);
        // Both built before either is sent: each approves only its own share, and the one sent
        // last replaces the other's approval.
        const proTx = await t.http
          .post(`/api/checkout/plans/${pro}/transaction`)
          .send({ account: customer.publicKey.toBase58() })
          .expect(200);
        const basicTx = await t.http
          .post(`/api/checkout/plans/${basic}/transaction`)
          .send({ account: customer.publicKey.toBase58() })
          .expect(200);
        const basicSig = await billing.sendSigned(customer, basicTx.body.transaction as string);
        const proSig = await billing.sendSigned(customer, proTx.body.transaction as string);
        // Both confirms read the chain, then meet at the database together.
        const reads = gate();
        const both = gate();
        let arrived = 0;
        const read = billing.chain.authorizationLeft.bind(billing.chain);
        jest.spyOn(billing.chain, 'authorizationLeft').mockImplementation(async (...args) => {
          const state = await read(...args);
          if (++arrived === 2) reads.open();
          await both.wait();
          return state;
        });
        const racing = Promise.all([confirm(pro, proSig), confirm(basic, basicSig)]);
        await reads.wait();
        both.open();
        const answers = await racing;
        jest.restoreAllMocks();
        expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
        const refused = answers.find((a) => a.status === 400)!;
        expect(refused.body.error.details[0].message).toMatch(/does not cover this plan/);
        expect(await subscriptions(customer)).toHaveLength(1);
        // The one that was created is covered and charged; nothing was taken for the other.
        const [created] = await subscriptions(customer);
        expect(await balance(customer)).toBe(
          100n * USDC - (created.planId === pro ? 10n : 4n) * USDC,
        );
      }
    });
  });

  describe('the reconciling watcher', () => {
    it('does not skip a subscribe it could not read (the RPC failed): the next sweep creates it', async () => {
      await billing.run(); // the plan's earlier subscribes are behind its cursor
      const customer = wallet(100n * USDC);
      await checkout(customer, pro); // signed and sent; the page never confirms
      const read = jest
        .spyOn(billing.chain, 'readTransaction')
        .mockRejectedValueOnce(new Error('fetch failed'));
      expect((await billing.run()).subscriptionsCreated).toBe(0);
      expect(read).toHaveBeenCalledTimes(1);
      expect(await subscriptions(customer)).toEqual([]);
      // The RPC answers again: the same subscribe is read and confirmed, and charged once.
      expect((await billing.run()).subscriptionsCreated).toBe(1);
      expect((await subscriptions(customer)).map((s) => s.status)).toEqual(['Active']);
      expect(await balance(customer)).toBe(90n * USDC);
      expect((await billing.run()).subscriptionsCreated).toBe(0);
    });
  });

  describe('the portal', () => {
    /** A subscriber with a session, and what the portal's confirms are posted to. */
    async function subscriber(usdcAmount = 100n * USDC) {
      const customer = wallet(usdcAmount);
      const { subscription } = await billing.subscribe(customer, pro, acme.auth);
      const token = await session(subscription.id);
      const post = (path: string, body: object) =>
        t.http
          .post(`/api/portal/subscriptions/${subscription.id}/${path}`)
          .set(portal(token))
          .send(body);
      return { customer, id: subscription.id, token, post };
    }
    const authorized = async (id: string) =>
      (
        await t.sql<{ authorized_amount: string }>(
          'SELECT authorized_amount::text FROM subscriptions WHERE id = $1',
          [id],
        )
      )[0].authorized_amount;

    it("re-authorise: only the subscription wallet's own signed approval with the plan's memo counts, once", async () => {
      const { customer, id, post } = await subscriber();
      const stranger = wallet(100n * USDC);
      const share = PERIODS * 10n * USDC;
      const before = await authorized(id);
      // Paid by the subscription wallet, but the approval is the stranger's (memo and all).
      const foreign = await billing.sendInstructions(
        customer,
        [memo(`subscribe:v1:${pro}`), await approve(stranger, share)],
        stranger,
      );
      // The wallet's own approval, without the plan's memo.
      const bare = await billing.sendInstructions(customer, [await approve(customer, share)]);
      for (const signature of [foreign, bare]) {
        const res = await post('reauthorize/confirm', { signature }).expect(400);
        expect(res.body.error).toMatchObject({
          code: 'VALIDATION_ERROR',
          message: 'signature is not an authorisation of this subscription signed by its wallet',
        });
      }
      expect(await authorized(id)).toBe(before);

      const good = await billing.sendInstructions(customer, [
        memo(`subscribe:v1:${pro}`),
        await approve(customer, share),
      ]);
      await post('reauthorize/confirm', { signature: good }).expect(200);
      const after = await authorized(id);
      expect(BigInt(after)).toBe(10n * USDC + share); // what it was charged, plus a fresh share
      // The same confirm again changes nothing; the signature cannot cancel, nor subscribe.
      await post('reauthorize/confirm', { signature: good }).expect(200);
      expect(await authorized(id)).toBe(after);
      const reused = await post('cancel/confirm', { signature: good }).expect(400);
      expect(reused.body.error.message).toBe(
        'signature was already used to change a subscription; a signature is used once',
      );
      await confirm(pro, good).expect(400);
    });

    it("cancel: only the subscription wallet's own signed revoke with the plan's memo counts", async () => {
      const { customer, id, post } = await subscriber();
      const stranger = wallet(100n * USDC);
      const foreign = await billing.sendInstructions(
        customer,
        [
          memo(`revoke:v1:${pro}`),
          createRevokeInstruction(await ata(stranger), stranger.publicKey, [], usdc.program),
        ],
        stranger,
      );
      const bare = await billing.sendInstructions(customer, [
        createRevokeInstruction(await ata(customer), customer.publicKey, [], usdc.program),
      ]);
      for (const signature of [foreign, bare]) {
        const res = await post('cancel/confirm', { signature }).expect(400);
        expect(res.body.error).toMatchObject({
          code: 'VALIDATION_ERROR',
          message: 'signature is not the revoke of this subscription signed by its wallet',
        });
      }
      const view = await t.http.get(`/api/subscriptions/${id}`).set(acme.auth).expect(200);
      expect(view.body).toMatchObject({ status: 'Active' });
      const [row] = await t.sql<{ revoked: boolean }>(
        'SELECT revoked_at IS NOT NULL AS revoked FROM subscriptions WHERE id = $1',
        [id],
      );
      expect(row.revoked).toBe(false);
    });

    it('cancel of a PastDue subscription completes it at once (nothing paid it forward)', async () => {
      const { customer, id, post } = await subscriber(15n * USDC);
      await billing.advance(30 * DAY);
      expect((await billing.run()).charges).toMatchObject({ failed: 1 });
      const built = await post('cancel/transaction', {
        account: customer.publicKey.toBase58(),
      }).expect(200);
      const signature = await billing.sendSigned(customer, built.body.transaction as string);
      const done = await post('cancel/confirm', { signature }).expect(200);
      expect(done.body).toMatchObject({ status: 'Completed', cancelled: true });
      const merchantView = await t.http.get(`/api/subscriptions/${id}`).set(acme.auth).expect(200);
      expect(merchantView.body).toMatchObject({
        status: 'Completed',
        failureReason: 'authorization_gone',
      });
    });

    it('settle: refused with its reason when the token account is frozen or the authorisation no longer covers the payment; nothing moves', async () => {
      const settleable = async () => {
        const sub = await subscriber(15n * USDC);
        await billing.advance(30 * DAY);
        await billing.run();
        fund(t, sub.customer.publicKey.toBase58(), { symbol: 'USDC', amount: 50n * USDC });
        return sub;
      };
      const unchanged = async (id: string) => {
        const view = await t.http.get(`/api/subscriptions/${id}`).set(acme.auth).expect(200);
        expect(view.body).toMatchObject({ status: 'PastDue', failureReason: 'insufficient_funds' });
        const resumed = await t.sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM events
            WHERE type = 'subscription.resumed' AND payload->'data'->'object'->>'id' = $1`,
          [id],
        );
        expect(resumed).toEqual([{ n: 0 }]);
      };

      // Frozen by the issuer (its state byte, as a freeze instruction sets it).
      const frozen = await settleable();
      const address = await billing.chain.tokenAccount(
        frozen.customer.publicKey.toBase58(),
        'USDC',
      );
      const account = t.chain!.chain.getAccount(address)!;
      const data = Buffer.from(account.data);
      data[108] = 2; // AccountState.Frozen
      t.chain!.chain.setAccount(address, { ...account, data });
      const refusedFrozen = await frozen.post('settle', {}).expect(409);
      expect(refusedFrozen.body.error).toMatchObject({
        code: 'CONFLICT',
        message: 'Your token account is frozen by the stablecoin issuer',
      });
      await unchanged(frozen.id);

      // The customer approved less than a payment since (another app's approval replaced ours).
      const short = await settleable();
      await billing.sendInstructions(short.customer, [await approve(short.customer, 1n)]);
      const before = await balance(short.customer);
      const refusedShort = await short.post('settle', {}).expect(409);
      expect(refusedShort.body.error).toMatchObject({
        code: 'CONFLICT',
        message: 'Your authorisation no longer covers this payment: re-authorise first',
      });
      await unchanged(short.id);
      expect(await balance(short.customer)).toBe(before);
    });
  });
});
