import { createApproveCheckedInstruction } from '@solana/spl-token';
import { Keypair, PublicKey } from '@solana/web3.js';
import { ChainPort } from '../src/solana/chain.port';
import { UnsignedTxBuilder } from '../src/solana/transactions';
import { billingHelpers, gate } from './helpers/billing';
import { fund, signAndSend } from './helpers/chain-tx';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';

const DAY = 86_400;
const USDC = 1_000_000n;
/** Each subscription's share of the shared approval: this many periods of its plan. */
const PERIODS = 3n;

/**
 * Token-delegate scheme: a token account has one delegate, so every subscription of a wallet in
 * one mint, whichever merchant it is with, lives on one approval of the service key. Through the
 * hosted checkout's API with real keypairs: each subscribe approves what all of them still need,
 * each charge takes its own share, and an approval that shrinks or is replaced affects exactly
 * the subscriptions it no longer covers. Also the customer notices of a charge (e-mails through
 * the outbox) and a frozen token account.
 */
describe('Billing engine: one approval shared by a wallet’s subscriptions', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let beta: TestMerchant;
  let chain: ChainPort;
  const plans: Record<'pro' | 'basic' | 'addon', { id: string; amount: bigint }> = {} as never;
  /** Each plan's merchant's id. */
  const planMerchant: Record<string, string> = {};

  let billing: ReturnType<typeof billingHelpers>;
  const balance = (wallet: string) => billing.balance(wallet);
  /** The subscription's ledger lines, oldest first: status and note. */
  const ledger = async (merchant: TestMerchant, id: string) =>
    (
      (await t.http.get(`/api/payments?subscriptionId=${id}`).set(merchant.auth).expect(200))
        .body as { status: string; note: string | null }[]
    )
      .reverse()
      .map((p) => ({ status: p.status, note: p.note }));
  const delegated = async (wallet: string) =>
    (await chain.readAuthorization(wallet, 'USDC')).delegatedAmount;
  const run = () => billing.run();
  const advance = (days: number) => billing.advance(days * DAY);
  // The test clock stands still unless moved.
  const tick = () => billing.advance(1);
  const subscription = async (merchant: TestMerchant, id: string) =>
    (await t.http.get(`/api/subscriptions/${id}`).set(merchant.auth).expect(200)).body;

  /** The wallet's side of a checkout: the transaction request (not sent yet). */
  async function request(customer: Keypair, planId: string) {
    const res = await t.http
      .post(`/api/checkout/plans/${planId}/transaction`)
      .send({ account: customer.publicKey.toBase58() })
      .expect(200);
    return res.body.transaction as string;
  }
  const signAndSendTx = (customer: Keypair, transaction: string) =>
    billing.sendSigned(customer, transaction);
  const confirm = (planId: string, signature: string) =>
    t.http.post(`/api/checkout/plans/${planId}/confirm`).send({ signature });
  async function subscribe(customer: Keypair, planId: string): Promise<string> {
    const signature = await signAndSendTx(customer, await request(customer, planId));
    const res = await confirm(planId, signature).expect(200);
    expect(res.body).toEqual({
      planId,
      created: true,
      subscribed: true,
      firstPayment: 'paid',
      failureReason: null,
    });
    const merchant = [acme, beta].find((m) => m.id === planMerchant[planId])!;
    return (await billing.subscriptionOf(merchant.auth, planId, customer.publicKey.toBase58())).id;
  }
  const share = (plan: { amount: bigint }) => PERIODS * plan.amount;
  /** The customer approves the service key for `amount` in USDC by hand, outside the service. */
  async function approveByHand(customer: Keypair, amount: bigint): Promise<void> {
    const mint = await chain.mint('USDC');
    const builder = (chain as unknown as { unsigned: UnsignedTxBuilder }).unsigned;
    const ata = new PublicKey(await chain.tokenAccount(customer.publicKey.toBase58(), 'USDC'));
    const approve = await builder.build(customer.publicKey, [
      createApproveCheckedInstruction(
        ata,
        new PublicKey(mint.address),
        new PublicKey(chain.servicePublicKey),
        customer.publicKey,
        amount,
        6,
        [],
        new PublicKey(mint.tokenProgram),
      ),
    ]);
    expect(
      (await signAndSend(t, approve.transaction, approve.lastValidBlockHeight, customer)).state,
    ).toBe('succeeded');
  }

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        LOCALNET_FINALITY_SLOTS: '0',
        SUBSCRIPTION_APPROVAL_PERIODS: String(PERIODS),
        // Only the test's own runs sweep and charge: a scheduled sweep confirming a subscribe
        // before the page does made `created` false (seen once on a busy machine).
        WATCH_INTERVAL_MS: '3600000',
        CHARGE_RUN_INTERVAL_MS: '3600000',
      },
    });
    billing = billingHelpers(t);
    ({ chain } = billing);
    acme = await t.createMerchant('Acme');
    beta = await t.createMerchant('Beta');
    const plan = async (merchant: TestMerchant, label: string, amount: bigint) => {
      const res = await t.http
        .post('/api/plans')
        .set(merchant.auth)
        .send({ label, mint: 'USDC', amount: String(amount), intervalSeconds: 30 * DAY })
        .expect(201);
      planMerchant[res.body.plan.id as string] = merchant.id;
      return { id: res.body.plan.id as string, amount: amount * USDC };
    };
    plans.pro = await plan(acme, 'Pro', 10n);
    plans.basic = await plan(beta, 'Basic', 4n);
    plans.addon = await plan(acme, 'Add-on', 2n);
  });
  afterAll(() => t.close());

  it('two, then three subscriptions across merchants: each subscribe approves them all; each charge takes its own share', async () => {
    const customer = Keypair.generate();
    const wallet = customer.publicKey.toBase58();
    fund(t, wallet, { symbol: 'USDC', amount: 100n * USDC });
    const acmeBefore = await balance(acme.walletAddress);
    const betaBefore = await balance(beta.walletAddress);

    // One subscription: its share, less the first charge.
    const pro = await subscribe(customer, plans.pro.id);
    expect(await delegated(wallet)).toBe(share(plans.pro) - plans.pro.amount);

    // Two, with another merchant: the new approval also covers what Pro still needs.
    const basic = await subscribe(customer, plans.basic.id);
    expect(await delegated(wallet)).toBe(
      share(plans.pro) - plans.pro.amount + share(plans.basic) - plans.basic.amount,
    );

    // Three: still one approval, now for all three.
    const addon = await subscribe(customer, plans.addon.id);
    const remaining = [plans.pro, plans.basic, plans.addon].reduce(
      (sum, p) => sum + share(p) - p.amount,
      0n,
    );
    expect(await delegated(wallet)).toBe(remaining);
    expect((await subscription(acme, pro)).status).toBe('Active');
    expect((await subscription(beta, basic)).status).toBe('Active');

    // A period later every one is charged once, its own amount, to its own merchant: each
    // signed once and recorded under the version of the approval it was judged under (a
    // version moved by anything between the claim's reading and the recording, other than a
    // sibling, would make each sign again).
    await advance(30);
    const signings = jest.spyOn(chain, 'signCharge');
    try {
      expect((await run()).charges).toMatchObject({ succeeded: 3, failed: 0, completed: 0 });
      expect(signings).toHaveBeenCalledTimes(3);
    } finally {
      signings.mockRestore();
    }
    const perPeriod = plans.pro.amount + plans.basic.amount + plans.addon.amount;
    expect(await balance(wallet)).toBe(100n * USDC - 2n * perPeriod);
    expect((await balance(acme.walletAddress)) - acmeBefore).toBe(
      2n * (plans.pro.amount + plans.addon.amount),
    );
    expect((await balance(beta.walletAddress)) - betaBefore).toBe(2n * plans.basic.amount);
    expect(await delegated(wallet)).toBe(remaining - perPeriod);
    for (const [merchant, id] of [
      [acme, pro],
      [beta, basic],
      [acme, addon],
    ] as const) {
      const res = await t.http
        .get(`/api/payments?subscriptionId=${id}`)
        .set(merchant.auth)
        .expect(200);
      // One line a period; each confirmed, or finalized already when its settlement read the
      // outcome late (a loaded machine: localnet finalizes a few slots on).
      expect(res.body).toHaveLength(2);
      for (const p of res.body as { status: string }[]) {
        expect(['confirmed', 'finalized']).toContain(p.status);
      }
    }

    // The third period uses up each one's authorised term (three periods); at the fourth each
    // is Completed, `term_ended`, and nothing more moves.
    await advance(30);
    await run();
    expect(await balance(wallet)).toBe(100n * USDC - 3n * perPeriod);
    await advance(30);
    await run();
    for (const [merchant, id] of [
      [acme, pro],
      [beta, basic],
      [acme, addon],
    ] as const) {
      expect(await subscription(merchant, id)).toMatchObject({
        status: 'Completed',
        failureReason: 'term_ended',
      });
    }
    expect(await balance(wallet)).toBe(100n * USDC - 3n * perPeriod);
    expect(await delegated(wallet)).toBe(0n);
  });

  it('an approval that shrinks ends exactly the subscriptions it no longer covers, newest first', async () => {
    const customer = Keypair.generate();
    const wallet = customer.publicKey.toBase58();
    fund(t, wallet, { symbol: 'USDC', amount: 100n * USDC });
    // Subscribed one after the other (the test clock stands still unless moved: a second apart,
    // so that which is older is the order they were made in, not a tie broken by id).
    const pro = await subscribe(customer, plans.pro.id);
    await tick();
    const basic = await subscribe(customer, plans.basic.id);
    await tick();
    const addon = await subscribe(customer, plans.addon.id);

    // The customer approves again by hand: enough for the two oldest, not for the third.
    await approveByHand(
      customer,
      share(plans.pro) - plans.pro.amount + (share(plans.basic) - plans.basic.amount),
    );

    await advance(30);
    await run();
    expect(await subscription(acme, pro)).toMatchObject({ status: 'Active' });
    expect(await subscription(beta, basic)).toMatchObject({ status: 'Active' });
    expect(await subscription(acme, addon)).toMatchObject({
      status: 'Completed',
      failureReason: 'authorization_gone',
    });
    expect(await ledger(acme, addon)).toEqual([
      { status: 'confirmed', note: null },
      { status: 'failed', note: 'authorization_gone' },
    ]);
    expect(await ledger(acme, pro)).toEqual([
      { status: 'confirmed', note: null },
      { status: 'confirmed', note: null },
    ]);
    expect(await balance(wallet)).toBe(
      100n * USDC - 2n * (plans.pro.amount + plans.basic.amount) - plans.addon.amount,
    );
  });

  it('an approval that covers the older ones but not everyone charges the older ones: the claim reads what all the others need, and what the older ones need when the approval falls short of that', async () => {
    const customer = Keypair.generate();
    const wallet = customer.publicKey.toBase58();
    fund(t, wallet, { symbol: 'USDC', amount: 100n * USDC });
    // The cheap ones first, the dear one last (a second apart: older is the order made in).
    const basic = await subscribe(customer, plans.basic.id);
    await tick();
    const addon = await subscribe(customer, plans.addon.id);
    await tick();
    const pro = await subscribe(customer, plans.pro.id);

    // Enough for the two oldest (8 + 4 USDC), far from what all three need (32): each of the
    // two oldest is covered with what the older ones need, not with what all the others need.
    await approveByHand(
      customer,
      share(plans.basic) - plans.basic.amount + (share(plans.addon) - plans.addon.amount),
    );

    await advance(30);
    await run();
    expect(await subscription(beta, basic)).toMatchObject({
      status: 'Active',
      failureReason: null,
    });
    expect(await subscription(acme, addon)).toMatchObject({
      status: 'Active',
      failureReason: null,
    });
    expect(await subscription(acme, pro)).toMatchObject({
      status: 'Completed',
      failureReason: 'authorization_gone',
    });
    expect(await ledger(beta, basic)).toEqual([
      { status: 'confirmed', note: null },
      { status: 'confirmed', note: null },
    ]);
    expect(await ledger(acme, addon)).toEqual([
      { status: 'confirmed', note: null },
      { status: 'confirmed', note: null },
    ]);
    expect(await ledger(acme, pro)).toEqual([
      { status: 'confirmed', note: null },
      { status: 'failed', note: 'authorization_gone' },
    ]);
    expect(await balance(wallet)).toBe(
      100n * USDC - 2n * (plans.basic.amount + plans.addon.amount) - plans.pro.amount,
    );
    // What is left of the approval: what the two oldest still need after this period.
    expect(await delegated(wallet)).toBe(
      share(plans.basic) - 2n * plans.basic.amount + (share(plans.addon) - 2n * plans.addon.amount),
    );
  });

  it('two checkouts open at once: the subscribe sent last replaced the other approval, so it is refused, never created short; a new request covers both', async () => {
    const customer = Keypair.generate();
    const wallet = customer.publicKey.toBase58();
    fund(t, wallet, { symbol: 'USDC', amount: 100n * USDC });
    // Both transactions are built before either is sent: each approves only its own share.
    const proTx = await request(customer, plans.pro.id);
    const basicTx = await request(customer, plans.basic.id);

    const basicSig = await signAndSendTx(customer, basicTx);
    const basic = await confirm(plans.basic.id, basicSig).expect(200);
    expect(basic.body).toMatchObject({ subscribed: true, created: true });

    // Pro's approval (its share alone) replaces Basic's: it does not cover both, so Pro is
    // refused and nothing is created or charged for it. Basic is still covered.
    const proSig = await signAndSendTx(customer, proTx);
    const refused = await confirm(plans.pro.id, proSig).expect(400);
    expect(refused.body.error.details[0]).toMatchObject({ field: 'signature' });
    expect(refused.body.error.details[0].message).toMatch(/does not cover this plan/);
    const live = await t.sql<{ n: string }>(
      `SELECT count(*) AS n FROM subscriptions s JOIN customers c ON c.id = s.customer_id
        WHERE c.wallet_address = $1 AND s.plan_id = $2`,
      [wallet, plans.pro.id],
    );
    expect(live[0].n).toBe('0');
    expect(await balance(wallet)).toBe(100n * USDC - plans.basic.amount);

    // The checkout asks again: the new transaction approves what both need.
    const pro = await subscribe(customer, plans.pro.id);
    expect(pro).toEqual(expect.any(String));
    expect(await delegated(wallet)).toBe(
      share(plans.pro) - plans.pro.amount + share(plans.basic) - plans.basic.amount,
    );
  });

  it('a subscribe built while another subscription’s charge is in flight leaves that charge its allowance: the charge lands after the approval and the new subscription is still covered', async () => {
    const customer = Keypair.generate();
    const wallet = customer.publicKey.toBase58();
    fund(t, wallet, { symbol: 'USDC', amount: 100n * USDC });
    const pro = await subscribe(customer, plans.pro.id);
    await advance(30);

    // Pro's second charge is recorded (in flight) and held before it is sent.
    const door = gate();
    const reached = gate();
    const real = chain.sendAndConfirm.bind(chain);
    const sends = jest.spyOn(chain, 'sendAndConfirm').mockImplementation(async (tx) => {
      const [row] = await t.sql<{ subscription_id: string }>(
        `SELECT subscription_id FROM charge_attempts WHERE signature = $1`,
        [tx.signature],
      );
      if (row?.subscription_id === pro) {
        reached.open();
        await door.wait();
      }
      return real(tx);
    });
    try {
      const running = run();
      await reached.wait();
      // Meanwhile the customer subscribes to Basic: the approval is built and lands first.
      const basicTx = await request(customer, plans.basic.id);
      const signature = await signAndSendTx(customer, basicTx);
      // Then Pro's charge lands, taking its period out of the new approval.
      door.open();
      await running;
      expect(await balance(wallet)).toBe(100n * USDC - 2n * plans.pro.amount);
      // What is left still covers both: Basic is created and charged, Pro goes on.
      const res = await confirm(plans.basic.id, signature).expect(200);
      expect(res.body).toMatchObject({ created: true, subscribed: true, firstPayment: 'paid' });
      expect(await delegated(wallet)).toBe(
        share(plans.pro) - 2n * plans.pro.amount + share(plans.basic) - plans.basic.amount,
      );
      expect(await subscription(acme, pro)).toMatchObject({ status: 'Active' });
    } finally {
      door.open();
      sends.mockRestore();
    }
  });

  it('e-mails the customer: two periods before the approval runs out, and when a charge fails', async () => {
    const customer = Keypair.generate();
    const wallet = customer.publicKey.toBase58();
    fund(t, wallet, { symbol: 'USDC', amount: plans.pro.amount });
    await t.http
      .post('/api/customers')
      .set(acme.auth)
      .send({ walletAddress: wallet, email: 'ada@example.com' })
      .expect((res) => expect([200, 201]).toContain(res.status));
    const emails = () =>
      t.sql<{ recipient: string; subject: string; text_body: string; html_body: string }>(
        `SELECT recipient, subject, text_body, html_body FROM email_outbox
          WHERE recipient = 'ada@example.com' ORDER BY created_at`,
      );

    // The first charge leaves two periods of a three-period approval: re-authorise.
    const id = await subscribe(customer, plans.pro.id);
    const [low] = await emails();
    expect(low.subject).toBe('Re-authorise your subscription: Pro');
    expect(low.text_body).toContain('covers 2 more payments of 10 USDC');
    // The link opens this customer's portal, where the subscription can be re-authorised.
    await expectPortalLink(low.text_body, wallet, id);
    expect(low.html_body).toContain(`href="`);

    // A period later the balance is empty: PastDue, and the customer is told what happened.
    await advance(30);
    expect((await run()).charges.failed).toBeGreaterThanOrEqual(1);
    expect(await subscription(acme, id)).toMatchObject({
      status: 'PastDue',
      failureReason: 'insufficient_funds',
    });
    const all = await emails();
    expect(all).toHaveLength(2);
    expect(all[1].subject).toBe('Payment failed: Pro (Acme)');
    expect(all[1].text_body).toContain('We could not collect your payment of 10 USDC');
    await expectPortalLink(all[1].text_body, wallet, id);
  });

  /** The e-mail's link is a portal session of the subscription's customer. */
  async function expectPortalLink(text: string, wallet: string, subscriptionId: string) {
    const token = /\/portal\/([A-Za-z0-9_-]+)/.exec(text)?.[1];
    expect(token).toBeDefined();
    const portal = await t.http
      .get('/api/portal/session')
      .set('x-portal-session', token!)
      .expect(200);
    expect(portal.body.walletAddress).toBe(wallet);
    expect(portal.body.subscriptions.map((s: { id: string }) => s.id)).toContain(subscriptionId);
  }

  it('a frozen token account: the charge is not sent, PastDue with its own reason', async () => {
    const customer = Keypair.generate();
    const wallet = customer.publicKey.toBase58();
    fund(t, wallet, { symbol: 'USDC', amount: 50n * USDC });
    const id = await subscribe(customer, plans.basic.id);
    const before = await balance(wallet);

    // The issuer freezes the account (its state byte, as a freeze instruction would set it).
    const address = await chain.tokenAccount(wallet, 'USDC');
    const account = t.chain!.chain.getAccount(address)!;
    const data = Buffer.from(account.data);
    data[108] = 2; // AccountState.Frozen
    t.chain!.chain.setAccount(address, { ...account, data });

    await advance(30);
    expect((await run()).charges.failed).toBeGreaterThanOrEqual(1);
    expect(await subscription(beta, id)).toMatchObject({
      status: 'PastDue',
      failureReason: 'account_frozen',
    });
    expect(await balance(wallet)).toBe(before);
    expect(await ledger(beta, id)).toEqual([
      { status: 'confirmed', note: null },
      { status: 'failed', note: 'account_frozen' },
    ]);
    const events = await t.http
      .get('/api/events?type=subscription.past_due')
      .set(beta.auth)
      .expect(200);
    expect(
      events.body.some((e: { data: { object: { id: string } } }) => e.data.object.id === id),
    ).toBe(true);
  });
});
