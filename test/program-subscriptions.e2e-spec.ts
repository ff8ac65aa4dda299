import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { Transaction as Web3Transaction } from '@solana/web3.js';
import { onchainPlanId, planPda, subscriptionPda } from '../src/solana/subscriptions-program';
import { billingHelpers } from './helpers/billing';
import { approveAuthority, ProgramAccounts } from './helpers/program-accounts';
import { fund } from './helpers/chain-tx';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';

const DAY = 86_400;
const PYUSD = 1_000_000n;

/**
 * The Subscriptions-program scheme (the default off localnet) through the public confirm and the
 * portal, with the real instruction bytes the service builds. The program's binary is not
 * available offline, so a customer's transaction is recorded on localnet without being executed
 * (`LocalnetChain.recordUnexecuted`: its signatures, blockhash and uniqueness checked as for any
 * send), and the accounts the program would have left are written to match with the official
 * codecs. A subscription is born from a signed `subscribe` instruction of its plan, once:
 * neither an old transaction of the customer nor a replayed subscribe revives it.
 */
describe('Subscriptions program scheme: a subscription is born from its own subscribe, once', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let billing: ReturnType<typeof billingHelpers>;
  let planId: string;
  let mintAddress: string;
  const terms = { amount: 10n * PYUSD, periodHours: 720n, createdAt: 1_790_000_000n };
  let accounts: ProgramAccounts;

  /** Signs a transaction the service built as `signer` and records it as landed (unexecuted). */
  function land(transaction: string, signer: Keypair): string {
    const tx = Transaction.from(Buffer.from(transaction, 'base64'));
    tx.partialSign(signer);
    return t.chain!.chain.recordUnexecuted(tx.serialize());
  }

  /** What `subscribe` leaves: the subscription, bound to the authority's init_id. */
  async function writeSubscription(
    subscriber: string,
    initId: bigint,
    overrides: { expiresAtTs?: bigint } = {},
  ) {
    await accounts.subscription({
      merchant: acme.walletAddress,
      planId,
      subscriber,
      terms,
      initId,
      currentPeriodStartTs: terms.createdAt,
      expiresAtTs: overrides.expiresAtTs ?? 0n,
    });
  }

  /**
   * The customer's checkout under the program, as the page drives it: a first subscription in
   * the mint asks for the authority first (step `authority`); it lands, stamped by the program
   * with its slot; asked again, the service answers with the subscribe bound to that stamp, which
   * lands and leaves the subscription. Returns the subscribe's signature and the init_id.
   */
  async function subscribeOnChain(
    customer: Keypair,
  ): Promise<{ signature: string; initId: bigint; authority: string }> {
    const wallet = customer.publicKey.toBase58();
    const ask = () =>
      t.http
        .post(`/api/checkout/plans/${planId}/transaction`)
        .send({ account: wallet })
        .expect(200);
    const first = await ask();
    expect(first.body.step).toBe('authority');
    expect(first.body.message).toMatch(/^Step 1 of 2: allow subscriptions in PYUSD/);
    const authority = land(first.body.transaction as string, customer);
    const initId = BigInt(t.chain!.chain.slot());
    await accounts.authority(wallet, mintAddress, initId);
    await billing.sendInstructions(customer, [
      await approveAuthority(customer.publicKey, mintAddress),
    ]);
    const second = await ask();
    expect(second.body.step).toBe('subscribe');
    const subscribe = Web3Transaction.from(Buffer.from(second.body.transaction as string, 'base64'))
      .instructions[0];
    expect(subscribe.data.readBigInt64LE(subscribe.data.length - 8)).toBe(initId);
    const signature = land(second.body.transaction as string, customer);
    await writeSubscription(wallet, initId);
    return { signature, initId, authority };
  }
  const confirm = (signature: string) =>
    t.http.post(`/api/checkout/plans/${planId}/confirm`).send({ signature });
  const subscriptionsOf = async (customer: Keypair) =>
    (
      (await t.http.get('/api/subscriptions').set(acme.auth).expect(200)).body as {
        id: string;
        status: string;
        onchainAddress: string;
        customer: { walletAddress: string };
      }[]
    ).filter((s) => s.customer.walletAddress === customer.publicKey.toBase58());

  beforeAll(async () => {
    t = await createTestApp({
      env: { SUBSCRIPTION_SCHEME: 'program', LOCALNET_FINALITY_SLOTS: '0', ROLE: 'api' },
    });
    billing = billingHelpers(t);
    acme = await t.createMerchant('Acme');
    mintAddress = (await billing.chain.mint('PYUSD')).address;
    const plan = await t.http
      .post('/api/plans')
      .set(acme.auth)
      .send({ label: 'Pro', mint: 'PYUSD', amount: '10', intervalSeconds: 30 * DAY })
      .expect(201);
    planId = plan.body.plan.id;
    accounts = new ProgramAccounts(t.chain!.chain);
    // The plan as the merchant's signed `create_plan` would have left it.
    await accounts.plan({
      merchant: acme.walletAddress,
      planId,
      mint: mintAddress,
      terms,
      pullers: [billing.chain.servicePublicKey],
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('confirms the subscribe instruction signed by the subscriber; a merchant cancel is final: neither a replay nor another transaction of the customer revives it', async () => {
    const customer = Keypair.generate();
    fund(t, customer.publicKey.toBase58(), { symbol: 'PYUSD', amount: 100n * PYUSD });
    const { signature, authority } = await subscribeOnChain(customer);
    // The first step (the authority) subscribes nobody.
    const notYet = await confirm(authority).expect(400);
    expect(notYet.body.error.message).toBe(
      'signature is not a subscribe to this plan signed by its subscriber',
    );
    expect(await subscriptionsOf(customer)).toEqual([]);
    const created = await confirm(signature).expect(200);
    expect(created.body).toMatchObject({ planId, created: true, subscribed: true });
    const [subscription] = await subscriptionsOf(customer);
    const plan = await planPda(acme.walletAddress, onchainPlanId(planId));
    expect(subscription).toMatchObject({
      status: 'Active',
      onchainAddress: await subscriptionPda(plan, customer.publicKey.toBase58()),
    });
    const [bound] = await t.sql<{ subscription_id: string; use: string }>(
      'SELECT subscription_id, use FROM subscription_signatures WHERE signature = $1',
      [signature],
    );
    expect(bound).toEqual({ subscription_id: subscription.id, use: 'subscribe' });

    // The merchant cancels; the customer's on-chain delegation stays (only they can revoke it).
    await t.http.post(`/api/subscriptions/${subscription.id}/cancel`).set(acme.auth).expect(200);
    const replay = await confirm(signature).expect(200);
    expect(replay.body).toEqual({
      planId,
      created: false,
      subscribed: false,
      firstPayment: null,
      failureReason: null,
    });
    // Any other transaction the customer signed and paid for, with the delegation still on-chain.
    const other = billing.sendInstructions(customer, [
      SystemProgram.transfer({
        fromPubkey: customer.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: 1_000_000,
      }),
    ]);
    const refused = await confirm(await other).expect(400);
    expect(refused.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: 'signature is not a subscribe to this plan signed by its subscriber',
    });
    expect((await subscriptionsOf(customer)).map((s) => s.status)).toEqual(['Cancelled']);
  });

  it('refuses a subscribe whose on-chain subscription the customer cancelled before the confirm', async () => {
    const customer = Keypair.generate();
    fund(t, customer.publicKey.toBase58(), { symbol: 'PYUSD', amount: 100n * PYUSD });
    const { signature, initId } = await subscribeOnChain(customer);
    // The customer cancelled on-chain before the page confirmed: the subscription expires.
    await writeSubscription(customer.publicKey.toBase58(), initId, { expiresAtTs: 1_800_000_000n });
    const expiring = await confirm(signature).expect(400);
    expect(expiring.body.error.message).toBe(
      "signature did not leave a subscription with this plan's terms on-chain",
    );
    expect(await subscriptionsOf(customer)).toEqual([]);
  });

  it('portal cancel: only the subscriber’s signed revoke of this subscription counts', async () => {
    const customer = Keypair.generate();
    const wallet = customer.publicKey.toBase58();
    fund(t, wallet, { symbol: 'PYUSD', amount: 100n * PYUSD });
    const { signature: subscribed, initId } = await subscribeOnChain(customer);
    await confirm(subscribed).expect(200);
    const [subscription] = await subscriptionsOf(customer);
    const [row] = await t.sql<{ customer_id: string }>(
      'SELECT customer_id FROM subscriptions WHERE id = $1',
      [subscription.id],
    );
    const link = await t.http
      .post(`/api/customers/${row.customer_id}/portal-session`)
      .set(acme.auth)
      .expect(201);
    const token = /\/portal\/([A-Za-z0-9_-]+)$/.exec(link.body.url as string)![1];
    const post = (path: string, body: object) =>
      t.http
        .post(`/api/portal/subscriptions/${subscription.id}/${path}`)
        .set('x-portal-session', token)
        .send(body);

    // Another transaction of the customer's is not a revoke.
    const transfer = await billing.sendInstructions(customer, [
      SystemProgram.transfer({
        fromPubkey: customer.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: 1_000_000,
      }),
    ]);
    const notRevoke = await post('cancel/confirm', { signature: transfer }).expect(400);
    expect(notRevoke.body.error.message).toBe(
      'signature is not the revoke of this subscription signed by its wallet',
    );

    // The revoke the portal builds is the subscriber's cancel_subscription (closing a running
    // subscription is refused by the program); signed and landed, it sets the expiry.
    const built = await post('cancel/transaction', { account: wallet }).expect(200);
    const [cancel] = Web3Transaction.from(
      Buffer.from(built.body.transaction as string, 'base64'),
    ).instructions;
    expect(cancel.data[0]).toBe(12);
    const revoke = land(built.body.transaction as string, customer);
    await writeSubscription(wallet, initId, { expiresAtTs: terms.createdAt + 720n * 3600n });
    const done = await post('cancel/confirm', { signature: revoke }).expect(200);
    expect(done.body).toMatchObject({ cancelled: true });
    const [after] = await t.sql<{ revoked: boolean }>(
      'SELECT revoked_at IS NOT NULL AS revoked FROM subscriptions WHERE id = $1',
      [subscription.id],
    );
    expect(after.revoked).toBe(true);
    // The revoke's signature cannot subscribe anyone.
    await confirm(revoke).expect(400);
  });
  it('a plan whose owner dropped the service key from its pullers: the charge waits, the subscription stays Active, no customer is told it failed', async () => {
    const customer = Keypair.generate();
    fund(t, customer.publicKey.toBase58(), { symbol: 'PYUSD', amount: 100n * PYUSD });
    const { signature } = await subscribeOnChain(customer);
    // Between the subscribe and its confirm (whose first charge runs at once), the merchant's
    // update_plan replaced the pullers: a key rotation done in the wrong order.
    await accounts.plan({
      merchant: acme.walletAddress,
      planId,
      mint: mintAddress,
      terms,
      pullers: [Keypair.generate().publicKey.toBase58()],
    });
    try {
      const confirmed = await confirm(signature).expect(200);
      expect(confirmed.body).toMatchObject({ subscribed: true, firstPayment: 'pending' });
      const [subscription] = await subscriptionsOf(customer);
      expect(subscription.status).toBe('Active');
      const attempts = await t.sql<{ state: string; signature: string | null; last_error: string }>(
        'SELECT state, signature, last_error FROM charge_attempts WHERE subscription_id = $1',
        [subscription.id],
      );
      // Nothing signed or sent; the attempt waits with the reason.
      expect(attempts).toEqual([
        {
          state: 'pending',
          signature: null,
          last_error: expect.stringMatching(
            /removed the service key \w+ from the plan's pullers/,
          ) as string,
        },
      ]);
      const [{ notices }] = await t.sql<{ notices: number }>(
        "SELECT count(*)::int AS notices FROM email_outbox WHERE created_at > now() - interval '1 minute'",
      );
      expect(notices).toBe(0);
    } finally {
      await accounts.plan({
        merchant: acme.walletAddress,
        planId,
        mint: mintAddress,
        terms,
        pullers: [billing.chain.servicePublicKey],
      });
    }
  });
  it("a subscribe the page never confirmed (a phone wallet's) is found by the plan's reference and becomes the subscription, once", async () => {
    const customer = Keypair.generate();
    fund(t, customer.publicKey.toBase58(), { symbol: 'PYUSD', amount: 100n * PYUSD });
    const { signature } = await subscribeOnChain(customer);
    // The subscribe's transaction carries the plan's reference on a zero-lamport self-transfer.
    const landed = t.chain!.chain.getTransaction(signature)!;
    expect(landed).toBeTruthy();
    expect(await subscriptionsOf(customer)).toEqual([]);
    await billing.run();
    await billing.run();
    const found = await subscriptionsOf(customer);
    expect(found.map((s) => s.status)).toEqual(['Active']);
    const [bound] = await t.sql<{ subscription_id: string; use: string }>(
      'SELECT subscription_id, use FROM subscription_signatures WHERE signature = $1',
      [signature],
    );
    expect(bound).toEqual({ subscription_id: found[0].id, use: 'subscribe' });
    // The page's late confirm answers with the same subscription.
    const late = await confirm(signature).expect(200);
    expect(late.body).toMatchObject({ planId, created: false, subscribed: true });
    expect(await subscriptionsOf(customer)).toHaveLength(1);
  });
});
