import { address } from '@solana/kit';
import {
  AccountDiscriminator,
  getPlanEncoder,
  getSubscriptionAuthorityEncoder,
  getSubscriptionDelegationEncoder,
  MAX_PLAN_DESTINATIONS,
  MAX_PLAN_PULLERS,
  SUBSCRIPTIONS_PROGRAM_ADDRESS,
  ZERO_ADDRESS,
} from '@solana/subscriptions';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import {
  onchainPlanId,
  planPda,
  subscriptionAuthorityPda,
  subscriptionPda,
} from '../src/solana/subscriptions-program';
import { billingHelpers } from './helpers/billing';
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
  const pad = (items: string[], size: number) =>
    [...items, ...Array.from({ length: size - items.length }, () => ZERO_ADDRESS)].map((a) =>
      address(a),
    );

  /** Signs a transaction the service built as `signer` and records it as landed (unexecuted). */
  function land(transaction: string, signer: Keypair): string {
    const tx = Transaction.from(Buffer.from(transaction, 'base64'));
    tx.partialSign(signer);
    return t.chain!.chain.recordUnexecuted(tx.serialize());
  }

  /** What `initialize_subscription_authority` + `subscribe` leave: the authority and the delegation. */
  async function writeSubscription(subscriber: string, overrides: { expiresAtTs?: bigint } = {}) {
    const plan = await planPda(acme.walletAddress, onchainPlanId(planId));
    t.chain!.chain.setAccount(await subscriptionAuthorityPda(subscriber, mintAddress), {
      lamports: 2_000_000n,
      owner: SUBSCRIPTIONS_PROGRAM_ADDRESS,
      data: new Uint8Array(
        getSubscriptionAuthorityEncoder().encode({
          discriminator: AccountDiscriminator.SubscriptionAuthority,
          user: address(subscriber),
          tokenMint: address(mintAddress),
          payer: address(subscriber),
          bump: 254,
          initId: 0n,
        }),
      ),
    });
    t.chain!.chain.setAccount(await subscriptionPda(plan, subscriber), {
      lamports: 2_000_000n,
      owner: SUBSCRIPTIONS_PROGRAM_ADDRESS,
      data: new Uint8Array(
        getSubscriptionDelegationEncoder().encode({
          header: {
            discriminator: AccountDiscriminator.SubscriptionDelegation,
            version: 1,
            bump: 253,
            delegator: address(subscriber),
            delegatee: address(plan),
            payer: address(subscriber),
            initId: 0n,
          },
          terms,
          amountPulledInPeriod: 0n,
          currentPeriodStartTs: terms.createdAt,
          expiresAtTs: overrides.expiresAtTs ?? 0n,
        }),
      ),
    });
  }

  /** The customer's checkout: the service's subscribe transaction, signed, landed, its accounts written. */
  async function subscribeOnChain(customer: Keypair): Promise<string> {
    const req = await t.http
      .post(`/api/checkout/plans/${planId}/transaction`)
      .send({ account: customer.publicKey.toBase58() })
      .expect(200);
    const signature = land(req.body.transaction as string, customer);
    await writeSubscription(customer.publicKey.toBase58());
    return signature;
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
    // The plan as the merchant's signed `create_plan` would have left it.
    t.chain!.chain.setAccount(await planPda(acme.walletAddress, onchainPlanId(planId)), {
      lamports: 10_000_000n,
      owner: SUBSCRIPTIONS_PROGRAM_ADDRESS,
      data: new Uint8Array(
        getPlanEncoder().encode({
          discriminator: AccountDiscriminator.Plan,
          owner: address(acme.walletAddress),
          bump: 255,
          status: 1,
          data: {
            planId: onchainPlanId(planId),
            mint: address(mintAddress),
            terms,
            endTs: 0n,
            destinations: pad([acme.walletAddress], MAX_PLAN_DESTINATIONS),
            pullers: pad([billing.chain.servicePublicKey], MAX_PLAN_PULLERS),
            metadataUri: '',
          },
        }),
      ),
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('confirms the subscribe instruction signed by the subscriber; a merchant cancel is final: neither a replay nor another transaction of the customer revives it', async () => {
    const customer = Keypair.generate();
    fund(t, customer.publicKey.toBase58(), { symbol: 'PYUSD', amount: 100n * PYUSD });
    const signature = await subscribeOnChain(customer);
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
    const signature = await subscribeOnChain(customer);
    // The customer cancelled on-chain before the page confirmed: the delegation expires.
    await writeSubscription(customer.publicKey.toBase58(), { expiresAtTs: 1_800_000_000n });
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
    await confirm(await subscribeOnChain(customer)).expect(200);
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

    // The revoke the portal builds, signed by the subscriber, closes the delegation.
    const built = await post('cancel/transaction', { account: wallet }).expect(200);
    const revoke = land(built.body.transaction as string, customer);
    const plan = await planPda(acme.walletAddress, onchainPlanId(planId));
    t.chain!.chain.setAccount(await subscriptionPda(plan, wallet), {
      lamports: 0n,
      owner: '11111111111111111111111111111111',
      data: new Uint8Array(),
    });
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
});
