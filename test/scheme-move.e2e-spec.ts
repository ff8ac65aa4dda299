import { Connection, Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { getAssociatedTokenAddressSync, TOKEN_2022_PROGRAM_ID } from '@solana/spl-token';
import bs58 from 'bs58';
import { ChargeAttemptsRepository } from '../src/billing/repositories/charge-attempts.repository';
import { WalletReservationsRepository } from '../src/billing/repositories/wallet-reservations.repository';
import { ChainPort, type SignedTx } from '../src/solana/chain.port';
import { SUBSCRIPTIONS_PROGRAM_ADDRESS } from '../src/solana/subscriptions-client/generated';
import { onchainPlanId, planPda, subscriptionPda } from '../src/solana/subscriptions-program';
import { billingHelpers } from './helpers/billing';
import { fund } from './helpers/chain-tx';
import { approveAuthority, ProgramAccounts } from './helpers/program-accounts';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';
import { waitFor } from './helpers/webhook-receiver';

const DAY = 86_400;
const PYUSD = 1_000_000n;
const PRICE = 10n * PYUSD;

/**
 * Moving subscribers between schemes (issue 24; docs/solana.md, "Moving subscribers between
 * schemes"). A deployment that ran the token-delegate scheme now takes new subscriptions under
 * the Subscriptions program: the same database, chain and service key, `SUBSCRIPTION_SCHEME`
 * switched. Its subscribers keep being charged under their approvals until each moves (the
 * portal's re-authorisation, in the program's two steps); a move takes every subscription of
 * the wallet in the mint (they share the approval the program's authority replaces); no period
 * is charged twice, none is skipped.
 *
 * Localnet cannot run the program: a customer's program transaction is recorded unexecuted and
 * the accounts it would have left are written with the program's codecs (`ProgramAccounts`);
 * the service's own pulls under the program are recorded unexecuted with the tokens they move,
 * and settled by their real outcome on the chain.
 */
describe('Moving subscribers from the token-delegate scheme to the Subscriptions program', () => {
  const serviceKey = Keypair.generate();
  let before: TestApp; // the deployment as it ran: token-delegate
  let after: TestApp; // the same deployment, now taking new subscriptions under the program
  let acme: TestMerchant;
  let beta: TestMerchant;
  let billing: ReturnType<typeof billingHelpers>;
  let chain: ChainPort; // the program deployment's
  let accounts: ProgramAccounts;
  let mint: string;
  let acmePlan: string;
  let betaPlan: string;
  const terms = { amount: PRICE, periodHours: 720n, createdAt: 1_790_000_000n };

  let beforeDelegatedSend: { wallet: string; run: () => Promise<void> } | null = null;
  const portal = (token: string) => ({ 'x-portal-session': token });
  const ataOf = (wallet: PublicKey | string) =>
    getAssociatedTokenAddressSync(
      new PublicKey(mint),
      new PublicKey(wallet),
      true,
      TOKEN_2022_PROGRAM_ID,
    ).toBase58();
  const balance = async (wallet: PublicKey | string) =>
    BigInt(
      (await new Connection(before.chain!.url).getTokenAccountBalance(new PublicKey(ataOf(wallet))))
        .value.amount,
    );
  const row = async (id: string) =>
    (
      await after.sql<{
        scheme: string;
        status: string;
        periods_charged: number;
        onchain_address: string;
      }>(
        'SELECT scheme, status, periods_charged, onchain_address FROM subscriptions WHERE id = $1',
        [id],
      )
    )[0];
  const attempts = (id: string) =>
    after.sql<{ period: number; state: string; transaction: string | null }>(
      'SELECT period, state, transaction FROM charge_attempts WHERE subscription_id = $1 ORDER BY period',
      [id],
    );
  /** The programs a charge's stored transaction calls. */
  const programsOf = (transaction: string) =>
    Transaction.from(Buffer.from(transaction, 'base64')).instructions.map((ix) =>
      ix.programId.toBase58(),
    );
  const run = async () =>
    (await after.http.post('/api/dev/billing/run').set(after.devAuth).expect(200)).body as {
      charges: { attempts: number; succeeded: number };
    };
  const advance = (seconds: number) =>
    before.http.post('/api/dev/clock/advance').set(before.devAuth).send({ seconds }).expect(200);

  async function session(merchant: TestMerchant, subscriptionId: string): Promise<string> {
    const [{ customer_id }] = await after.sql<{ customer_id: string }>(
      'SELECT customer_id FROM subscriptions WHERE id = $1',
      [subscriptionId],
    );
    const res = await after.http
      .post(`/api/customers/${customer_id}/portal-session`)
      .set(merchant.auth)
      .expect(201);
    return /\/portal\/([A-Za-z0-9_-]+)$/.exec(res.body.url as string)![1];
  }

  /** A wallet subscribed (under token-delegate, before the switch) to each plan, first charge paid. */
  async function delegatedCustomer(plans: { id: string; merchant: TestMerchant }[]) {
    const customer = Keypair.generate();
    fund(before, customer.publicKey.toBase58(), { symbol: 'PYUSD', amount: 200n * PYUSD });
    const ids: string[] = [];
    for (const plan of plans) {
      const { subscription } = await billing.subscribe(customer, plan.id, plan.merchant.auth);
      ids.push(subscription.id);
    }
    return { customer, wallet: customer.publicKey.toBase58(), ids };
  }

  /** Charge runs until the subscription has paid `periods` periods (a few at most). */
  async function runUntilCharged(id: string, periods: number) {
    for (let i = 0; i < 3 && (await row(id)).periods_charged < periods; i++) await run();
  }

  /**
   * Its periods, each charged once, the last of them under the program, and what the wallet
   * paid for them (200 PYUSD funded).
   */
  async function expectLastUnderProgram(id: string, wallet: string, periods: number) {
    const charges = await attempts(id);
    expect(charges.map((a) => [a.period, a.state])).toEqual(
      Array.from({ length: periods }, (_, i) => [i + 1, 'succeeded']),
    );
    expect(programsOf(charges[periods - 1].transaction!)).toContain(SUBSCRIPTIONS_PROGRAM_ADDRESS);
    expect(await balance(wallet)).toBe(200n * PYUSD - BigInt(periods) * PRICE);
  }

  /** Signs a transaction the service built as `signer` and records it as landed, unexecuted. */
  function land(transaction: string, signer: Keypair): string {
    const tx = Transaction.from(Buffer.from(transaction, 'base64'));
    tx.partialSign(signer);
    return before.chain!.chain.recordUnexecuted(tx.serialize());
  }

  /**
   * The customer's move, as the portal page drives it: step 1 (the program's authority, and the
   * approval given back to the service key) lands; step 2 (the subscribes) lands and leaves each
   * program subscription, and the program's authority as the token account's delegate.
   * `plans`: the plans the second step subscribes to.
   */
  async function moveOnChain(
    customer: Keypair,
    subscriptionId: string,
    token: string,
    plans: { id: string; merchant: TestMerchant }[],
  ): Promise<string> {
    const wallet = customer.publicKey.toBase58();
    const ask = () =>
      after.http
        .post(`/api/portal/subscriptions/${subscriptionId}/reauthorize/transaction`)
        .set(portal(token))
        .send({ account: wallet })
        .expect(200);
    const first = await ask();
    expect(first.body.step).toBe('authority');
    land(first.body.transaction as string, customer);
    const initId = BigInt(before.chain!.chain.slot());
    await accounts.authority(wallet, mint, initId);
    const second = await ask();
    expect(second.body.step).toBe('subscribe');
    const subscribes = Transaction.from(
      Buffer.from(second.body.transaction as string, 'base64'),
    ).instructions.filter((ix) => ix.programId.toBase58() === SUBSCRIPTIONS_PROGRAM_ADDRESS);
    // The authority's re-initialisation (its delegate back), then one subscribe per plan.
    expect(subscribes).toHaveLength(1 + plans.length);
    const signature = land(second.body.transaction as string, customer);
    for (const plan of plans) {
      await accounts.subscription({
        merchant: plan.merchant.walletAddress,
        planId: plan.id,
        subscriber: wallet,
        terms,
        initId,
        currentPeriodStartTs: BigInt(before.chain!.chain.now()),
      });
    }
    await billing.sendInstructions(customer, [await approveAuthority(customer.publicKey, mint)]);
    return signature;
  }

  beforeAll(async () => {
    const key = JSON.stringify([...serviceKey.secretKey]);
    before = await createTestApp({
      chainOptions: { finalitySlots: 0 },
      env: {
        ROLE: 'api',
        SERVICE_KEYPAIR: key,
        LOCALNET_FINALITY_SLOTS: '0',
        SUBSCRIPTION_APPROVAL_PERIODS: '4',
      },
    });
    billing = billingHelpers(before);
    acme = await before.createMerchant('Acme');
    beta = await before.createMerchant('Beta');
    const plan = (merchant: TestMerchant, label: string) =>
      before.http
        .post('/api/plans')
        .set(merchant.auth)
        .send({ label, mint: 'PYUSD', amount: '10', intervalSeconds: 30 * DAY })
        .expect(201);
    acmePlan = (await plan(acme, 'Pro')).body.plan.id;
    betaPlan = (await plan(beta, 'Basic')).body.plan.id;
    mint = (await billing.chain.mint('PYUSD')).address;
    after = await createTestApp({
      databaseUrl: before.databaseUrl,
      clock: before.clock,
      env: {
        ROLE: 'api',
        SERVICE_KEYPAIR: key,
        SOLANA_RPC_URL: before.chain!.url,
        SUBSCRIPTION_SCHEME: 'program',
        LOCALNET_FINALITY_SLOTS: '0',
        SUBSCRIPTION_APPROVAL_PERIODS: '4',
      },
    });
    chain = after.app.get(ChainPort);
    accounts = new ProgramAccounts(before.chain!.chain);
    // Both plans, as each merchant's signed `create_plan` would have left them.
    for (const [merchant, planId] of [
      [acme, acmePlan],
      [beta, betaPlan],
    ] as const) {
      await accounts.plan({
        merchant: merchant.walletAddress,
        planId,
        mint,
        terms,
        pullers: [serviceKey.publicKey.toBase58()],
      });
    }
    // The service's pulls under the program: recorded with the tokens they move (localnet
    // cannot run the program), then settled by their outcome on the chain.
    const real = chain.sendAndConfirm.bind(chain);
    jest.spyOn(chain, 'sendAndConfirm').mockImplementation(async (tx: SignedTx) => {
      const bytes = Buffer.from(tx.transaction, 'base64');
      const pull = Transaction.from(bytes).instructions.find(
        (ix) => ix.programId.toBase58() === SUBSCRIPTIONS_PROGRAM_ADDRESS,
      );
      if (!pull) {
        // A test's moment just before the service's token-delegate charge of a wallet is sent.
        const hook = beforeDelegatedSend;
        const keys = Transaction.from(bytes).instructions.flatMap((ix) =>
          ix.keys.map((k) => k.pubkey.toBase58()),
        );
        if (hook && keys.includes(ataOf(hook.wallet))) {
          beforeDelegatedSend = null;
          await hook.run();
        }
        return real(tx);
      }
      // transfer_subscription's accounts: ..., [3] the subscriber's, [4] the receiver's.
      const [source, destination] = [pull.keys[3], pull.keys[4]].map((k) => k.pubkey.toBase58());
      before.chain!.chain.recordUnexecuted(bytes, {
        tokenTransfers: [{ source, destination, amount: PRICE }],
      });
      return chain.outcome(tx.signature, tx.lastValidBlockHeight);
    });
  }, 120_000);
  afterAll(async () => {
    jest.restoreAllMocks();
    await after?.close();
    await before?.close();
  });

  it('keeps charging the approval after the switch; the customer moves both of its subscriptions in the mint at once; each next period is charged once, under the program; a replay is the same answer', async () => {
    const { customer, wallet, ids } = await delegatedCustomer([
      { id: acmePlan, merchant: acme },
      { id: betaPlan, merchant: beta },
    ]);
    const [acmeSub, betaSub] = ids;
    expect(await balance(wallet)).toBe(200n * PYUSD - 2n * PRICE);
    expect((await row(acmeSub)).scheme).toBe('token-delegate');

    // Period 2, after the switch: charged under the approval, as before.
    await advance(30 * DAY);
    await run();
    expect(await balance(wallet)).toBe(200n * PYUSD - 4n * PRICE);
    for (const id of ids) {
      const charges = await attempts(id);
      expect(charges.map((a) => [a.period, a.state])).toEqual([
        [1, 'succeeded'],
        [2, 'succeeded'],
      ]);
      expect(programsOf(charges[1].transaction!)).not.toContain(SUBSCRIPTIONS_PROGRAM_ADDRESS);
    }

    // The portal offers the move.
    const token = await session(acme, acmeSub);
    const shown = await after.http.get('/api/portal/session').set(portal(token)).expect(200);
    expect(shown.body.subscriptions[0]).toMatchObject({
      id: acmeSub,
      canReauthorize: true,
      movesToProgram: true,
    });

    // Step 1 keeps the approval: the program's authority takes the delegate, and the same
    // transaction gives it back to the service key for what the subscriptions still need.
    const step1 = await after.http
      .post(`/api/portal/subscriptions/${acmeSub}/reauthorize/transaction`)
      .set(portal(token))
      .send({ account: wallet })
      .expect(200);
    expect(step1.body.step).toBe('authority');
    expect(step1.body.message).toMatch(/^Step 1 of 2: allow subscriptions in PYUSD/);
    const instructions = Transaction.from(
      Buffer.from(step1.body.transaction as string, 'base64'),
    ).instructions;
    expect(instructions.map((ix) => ix.programId.toBase58())).toEqual([
      SUBSCRIPTIONS_PROGRAM_ADDRESS,
      TOKEN_2022_PROGRAM_ID.toBase58(),
    ]);
    const approved = await billing.chain.readAuthorization(wallet, 'PYUSD');
    // ApproveChecked: tag 13, amount (u64 LE), decimals; delegate is its third account.
    expect(instructions[1].data[0]).toBe(13);
    expect(instructions[1].data.readBigUInt64LE(1)).toBe(approved.delegatedAmount);
    expect(instructions[1].keys[2].pubkey.toBase58()).toBe(serviceKey.publicKey.toBase58());

    const signature = await moveOnChain(customer, acmeSub, token, [
      { id: acmePlan, merchant: acme },
      { id: betaPlan, merchant: beta },
    ]);
    // The approval is gone: the program's authority is the account's delegate now.
    const now = await billing.chain.readAuthorization(wallet, 'PYUSD');
    expect(now.delegatedToService).toBe(false);

    const confirm = () =>
      after.http
        .post(`/api/portal/subscriptions/${acmeSub}/reauthorize/confirm`)
        .set(portal(token))
        .send({ signature });
    const confirmed = await confirm().expect(200);
    expect(confirmed.body).toMatchObject({
      id: acmeSub,
      status: 'Active',
      paymentsAuthorized: null,
      movesToProgram: false,
    });
    for (const [id, merchant, planId] of [
      [acmeSub, acme, acmePlan],
      [betaSub, beta, betaPlan],
    ] as const) {
      expect(await row(id)).toEqual({
        scheme: 'program',
        status: 'Active',
        periods_charged: 2,
        onchain_address: await subscriptionPda(
          await planPda(merchant.walletAddress, onchainPlanId(planId)),
          wallet,
        ),
      });
    }
    expect(
      await after.sql(
        'SELECT subscription_id, use FROM subscription_signatures WHERE signature = $1',
        [signature],
      ),
    ).toEqual([{ subscription_id: acmeSub, use: 'move' }]);
    // The approval needs to cover nothing of theirs any more (a sibling's would not count them).
    const reservations = after.app.get(WalletReservationsRepository);
    expect(await reservations.reserved(wallet, 'PYUSD', { forApproval: true })).toBe(0n);
    expect(await reservations.reserved(wallet, 'PYUSD')).toBe(0n);
    // The same confirm again: the same answer, nothing more.
    expect((await confirm().expect(200)).body).toEqual(confirmed.body);

    // Period 3: charged once each, under the program.
    await advance(30 * DAY);
    await run();
    await waitFor(
      async () => (await Promise.all(ids.map(row))).every((r) => r.periods_charged === 3),
      30_000,
      () => 'period 3 was not charged',
    );
    expect(await balance(wallet)).toBe(200n * PYUSD - 6n * PRICE);
    for (const id of ids) {
      const charges = await attempts(id);
      expect(charges.map((a) => [a.period, a.state])).toEqual([
        [1, 'succeeded'],
        [2, 'succeeded'],
        [3, 'succeeded'],
      ]);
      expect(programsOf(charges[2].transaction!)).toContain(SUBSCRIPTIONS_PROGRAM_ADDRESS);
    }
    // Nothing more is due: another run charges nothing.
    expect((await run()).charges).toMatchObject({ attempts: 0, succeeded: 0 });
    const lines = (
      await after.http.get('/api/payments?limit=100').set(acme.auth).expect(200)
    ).body.filter((l: { subscriptionId: string }) => l.subscriptionId === acmeSub);
    expect(lines).toHaveLength(3);
  });

  it('refuses a move signed by another wallet, a replayed subscribe, an unrelated transaction and a cancelled subscription; nothing changes', async () => {
    const { customer, wallet, ids } = await delegatedCustomer([{ id: acmePlan, merchant: acme }]);
    const [sub] = ids;
    const token = await session(acme, sub);
    const confirm = (signature: string) =>
      after.http
        .post(`/api/portal/subscriptions/${sub}/reauthorize/confirm`)
        .set(portal(token))
        .send({ signature });
    // The subscribe it was born from, replayed as its move.
    const [{ signature: born }] = await after.sql<{ signature: string }>(
      "SELECT signature FROM subscription_signatures WHERE subscription_id = $1 AND use = 'subscribe'",
      [sub],
    );
    const replay = await confirm(born).expect(400);
    expect(replay.body.error.message).toBe(
      'signature was already used to change a subscription; a signature is used once',
    );
    // Another wallet's move (its own subscription of the plan moved).
    const other = await delegatedCustomer([{ id: acmePlan, merchant: acme }]);
    const otherToken = await session(acme, other.ids[0]);
    const theirs = await moveOnChain(other.customer, other.ids[0], otherToken, [
      { id: acmePlan, merchant: acme },
    ]);
    const notOurs = await confirm(theirs).expect(400);
    expect(notOurs.body.error.message).toBe(
      'signature is not an authorisation of this subscription signed by its wallet',
    );
    // A transaction of the customer that subscribes nothing.
    const unrelated = await billing.sendInstructions(customer, [
      SystemProgram.transfer({
        fromPubkey: customer.publicKey,
        toPubkey: Keypair.generate().publicKey,
        lamports: 1_000_000,
      }),
    ]);
    await confirm(unrelated).expect(400);
    expect((await row(sub)).scheme).toBe('token-delegate');
    // Even with the customer's program subscription running (its move landed), an unrelated
    // transaction is not its move: nothing is recorded or switched by it.
    const initId = BigInt(before.chain!.chain.slot());
    await accounts.authority(wallet, mint, initId);
    await accounts.subscription({
      merchant: acme.walletAddress,
      planId: acmePlan,
      subscriber: wallet,
      terms,
      initId,
    });
    const stillNot = await confirm(unrelated).expect(400);
    expect(stillNot.body.error.message).toBe(
      'signature is not an authorisation of this subscription signed by its wallet',
    );
    expect((await row(sub)).scheme).toBe('token-delegate');
    expect(
      await after.sql('SELECT 1 FROM subscription_signatures WHERE signature = $1', [unrelated]),
    ).toEqual([]);
    expect((await row(other.ids[0])).scheme).toBe('token-delegate'); // never confirmed

    // Cancelled by the merchant: nothing to move.
    await after.http.post(`/api/subscriptions/${sub}/cancel`).set(acme.auth).expect(200);
    const cancelled = await after.http
      .post(`/api/portal/subscriptions/${sub}/reauthorize/transaction`)
      .set(portal(token))
      .send({ account: wallet })
      .expect(409);
    expect(cancelled.body.error.message).toBe('This subscription has ended (it is Cancelled)');
  });

  it('a move nobody confirmed: the charge run finds the approval gone and the program subscription running, moves it, and charges the period once, under the program', async () => {
    const { customer, wallet, ids } = await delegatedCustomer([{ id: betaPlan, merchant: beta }]);
    const [sub] = ids;
    const token = await session(beta, sub);
    const signature = await moveOnChain(customer, sub, token, [{ id: betaPlan, merchant: beta }]);
    expect((await row(sub)).scheme).toBe('token-delegate');
    await advance(30 * DAY);
    await run();
    await waitFor(
      async () => (await row(sub)).periods_charged === 2,
      30_000,
      () => 'period 2 was not charged',
    );
    expect(await row(sub)).toMatchObject({ scheme: 'program', status: 'Active' });
    // The page's confirm arriving after all: the move it was.
    const late = await after.http
      .post(`/api/portal/subscriptions/${sub}/reauthorize/confirm`)
      .set(portal(token))
      .send({ signature })
      .expect(200);
    expect(late.body).toMatchObject({ id: sub, movesToProgram: false, paymentsAuthorized: null });
    await expectLastUnderProgram(sub, wallet, 2);
  });

  it('a try signed under the old scheme is not recorded once the subscription moved (the move and the charge serialise on its row)', async () => {
    const { ids } = await delegatedCustomer([{ id: acmePlan, merchant: acme }]);
    const [sub] = ids;
    const repository = after.app.get(ChargeAttemptsRepository);
    const [{ id: attempt }] = await after.sql<{ id: string }>(
      `INSERT INTO charge_attempts (id, created_at, updated_at, merchant_id, subscription_id,
         period, amount, mint, state, tries, lease_until, lease_owner)
       SELECT gen_random_uuid(), now(), now(), merchant_id, id, 2, 10000000, 'PYUSD', 'pending',
              1, now() + interval '1 minute', 'me'
         FROM subscriptions WHERE id = $1 RETURNING id`,
      [sub],
    );
    const tryOf = (signature: string) => ({
      id: attempt,
      subscriptionId: sub,
      signature,
      transaction: 'AA==',
      lastValidBlockHeight: 1,
      amount: '10000000',
      leaseSeconds: 30,
      owner: 'me',
      now: new Date(),
      scheme: 'token-delegate' as const,
    });
    await after.sql("UPDATE subscriptions SET scheme = 'program' WHERE id = $1", [sub]);
    expect(await repository.recordTry(tryOf(bs58.encode(Buffer.alloc(64, 1))))).toBe(false);
    const standing = await repository.standing(
      { subscriptionId: sub, id: attempt, scheme: 'token-delegate' },
      'me',
    );
    expect(standing).toMatchObject({ moved: true, open: true, held: true });
    // Under the scheme it has now, the same try is recorded.
    expect(
      await repository.recordTry({ ...tryOf(bs58.encode(Buffer.alloc(64, 2))), scheme: 'program' }),
    ).toBe(true);
  });

  it('refuses to switch while a charge of the subscription may still land: a 409 that names it, then the move once it settled', async () => {
    const { customer, ids } = await delegatedCustomer([{ id: betaPlan, merchant: beta }]);
    const [sub] = ids;
    const token = await session(beta, sub);
    const signature = await moveOnChain(customer, sub, token, [{ id: betaPlan, merchant: beta }]);
    // A try of period 2 recorded and not settled (its bytes may still land).
    await after.sql(
      `INSERT INTO charge_attempts (id, created_at, updated_at, merchant_id, subscription_id,
         period, amount, mint, state, tries, signature, transaction, last_valid_block_height,
         lease_until, lease_owner)
       SELECT gen_random_uuid(), now(), now(), merchant_id, id, 2, 10000000, 'PYUSD', 'sent', 1,
              $2, 'AA==', 1, now() + interval '1 minute', 'elsewhere'
         FROM subscriptions WHERE id = $1`,
      [sub, bs58.encode(Buffer.alloc(64, 7))],
    );
    const confirm = () =>
      after.http
        .post(`/api/portal/subscriptions/${sub}/reauthorize/confirm`)
        .set(portal(token))
        .send({ signature });
    const refused = await confirm().expect(409);
    expect(refused.body.error.message).toBe(
      'A payment of this subscription is on its way under the old authorisation: try again ' +
        'in a minute, once it has settled',
    );
    expect((await row(sub)).scheme).toBe('token-delegate');
    // It settles (expired: it never landed).
    await after.sql(
      "UPDATE charge_attempts SET state = 'failed', transaction = NULL WHERE subscription_id = $1 AND period = 2",
      [sub],
    );
    await confirm().expect(200);
    expect((await row(sub)).scheme).toBe('program');
  });

  it("a customer's first subscribe under the program carries its token-delegate subscriptions in the mint along", async () => {
    const { customer, wallet, ids } = await delegatedCustomer([{ id: acmePlan, merchant: acme }]);
    const [acmeSub] = ids;
    const newPlan = (
      await after.http
        .post('/api/plans')
        .set(beta.auth)
        .send({ label: 'Team', mint: 'PYUSD', amount: '10', intervalSeconds: 30 * DAY })
        .expect(201)
    ).body.plan.id as string;
    await accounts.plan({
      merchant: beta.walletAddress,
      planId: newPlan,
      mint,
      terms,
      pullers: [serviceKey.publicKey.toBase58()],
    });
    const ask = () =>
      after.http
        .post(`/api/checkout/plans/${newPlan}/transaction`)
        .send({ account: wallet })
        .expect(200);
    const first = await ask();
    expect(first.body.step).toBe('authority');
    const step1 = Transaction.from(Buffer.from(first.body.transaction as string, 'base64'));
    // The approval is given back to the service key in the same transaction.
    expect(step1.instructions.map((ix) => ix.programId.toBase58())).toEqual([
      SUBSCRIPTIONS_PROGRAM_ADDRESS,
      TOKEN_2022_PROGRAM_ID.toBase58(),
    ]);
    land(first.body.transaction as string, customer);
    const initId = BigInt(before.chain!.chain.slot());
    await accounts.authority(wallet, mint, initId);
    const second = await ask();
    expect(second.body.step).toBe('subscribe');
    expect(second.body.message).toMatch(
      /; your other PYUSD subscription moves to the Subscriptions program with it$/,
    );
    const signature = land(second.body.transaction as string, customer);
    for (const [merchant, planId] of [
      [beta, newPlan],
      [acme, acmePlan],
    ] as const) {
      await accounts.subscription({
        merchant: merchant.walletAddress,
        planId,
        subscriber: wallet,
        terms,
        initId,
        currentPeriodStartTs: BigInt(before.chain!.chain.now()),
      });
    }
    await billing.sendInstructions(customer, [await approveAuthority(customer.publicKey, mint)]);
    // Posted to the portal's move first: a checkout's, confirmed only there (else the new
    // subscription would never be created).
    const token = await session(acme, acmeSub);
    const elsewhere = await after.http
      .post(`/api/portal/subscriptions/${acmeSub}/reauthorize/confirm`)
      .set(portal(token))
      .send({ signature })
      .expect(400);
    expect(elsewhere.body.error.message).toBe(
      'signature is a subscribe at a checkout: confirm it there',
    );
    // And at the carried plan's own checkout: the same (anyone can post a signature there).
    const carriedPlan = await after.http
      .post(`/api/checkout/plans/${acmePlan}/confirm`)
      .send({ signature })
      .expect(400);
    expect(carriedPlan.body.error.message).toBe(
      'signature is a subscribe at the checkout of another plan: confirm it there',
    );
    expect((await row(acmeSub)).scheme).toBe('token-delegate');
    const confirmed = await after.http
      .post(`/api/checkout/plans/${newPlan}/confirm`)
      .send({ signature })
      .expect(200);
    expect(confirmed.body).toMatchObject({ created: true, subscribed: true });
    expect((await row(acmeSub)).scheme).toBe('program');
    const [created] = await after.sql<{ scheme: string }>(
      'SELECT s.scheme FROM subscriptions s WHERE s.plan_id = $1',
      [newPlan],
    );
    expect(created.scheme).toBe('program');
  });

  it('claims each scheme by its own rule: one token-delegate charge per wallet and mint at a time, the program ones as they are', async () => {
    const delegated = await delegatedCustomer([
      { id: acmePlan, merchant: acme },
      { id: betaPlan, merchant: beta },
    ]);
    const moved = await delegatedCustomer([
      { id: acmePlan, merchant: acme },
      { id: betaPlan, merchant: beta },
    ]);
    // The second wallet's two are under the program (as after its move).
    await after.sql("UPDATE subscriptions SET scheme = 'program' WHERE id = ANY($1::uuid[])", [
      moved.ids,
    ]);
    await after.sql(
      "UPDATE subscriptions SET current_period_end = now() - interval '1 minute' WHERE id = ANY($1::uuid[])",
      [[...delegated.ids, ...moved.ids]],
    );
    const claimed = await after.app.get(ChargeAttemptsRepository).claimDue({
      now: new Date(Date.now() + 60 * DAY * 1000),
      limit: 100,
      oneAtATime: true,
      busy: [],
      leaseSeconds: 30,
      owner: 'claim-test',
    });
    const ours = claimed.filter((a) =>
      [...delegated.ids, ...moved.ids].includes(a.subscription_id),
    );
    const of = (ids: string[]) => ours.filter((a) => ids.includes(a.subscription_id));
    expect(of(delegated.ids)).toHaveLength(1);
    expect(of(delegated.ids)[0]).toMatchObject({ s_scheme: 'token-delegate' });
    expect(of(moved.ids).map((a) => a.s_scheme)).toEqual(['program', 'program']);
    await after.sql(
      "UPDATE charge_attempts SET state = 'abandoned' WHERE lease_owner = 'claim-test'",
    );
  });

  it('a customer who does not move is charged under its approval, and asked to move, by e-mail, two periods before it runs out', async () => {
    const customer = Keypair.generate();
    const wallet = customer.publicKey.toBase58();
    fund(before, wallet, { symbol: 'PYUSD', amount: 100n * PYUSD });
    await before.http
      .post('/api/customers')
      .set(acme.auth)
      .send({ walletAddress: wallet, email: 'grace@example.com' })
      .expect(201);
    const { subscription } = await billing.subscribe(customer, acmePlan, acme.auth);
    const emails = () =>
      after.sql<{ subject: string; text_body: string }>(
        `SELECT subject, text_body FROM email_outbox WHERE recipient = 'grace@example.com'`,
      );
    expect(await emails()).toEqual([]); // three periods of four left
    await advance(30 * DAY);
    await run();
    await waitFor(
      async () => (await row(subscription.id)).periods_charged === 2,
      30_000,
      () => 'period 2 was not charged',
    );
    expect((await row(subscription.id)).scheme).toBe('token-delegate');
    const [notice] = await emails();
    expect(notice.subject).toBe('Move your subscription: Pro');
    expect(notice.text_body).toContain('covers 2 more payments of 10 PYUSD');
    expect(notice.text_body).toContain('move it to the Solana Subscriptions program');
    expect(notice.text_body).toMatch(/\/portal\/[A-Za-z0-9_-]+/);
  });

  it('a charge in flight when the move lands is not the end of the subscription: its try fails, the move is taken up, the period is charged once, under the program', async () => {
    const { customer, wallet, ids } = await delegatedCustomer([{ id: betaPlan, merchant: beta }]);
    const [sub] = ids;
    const token = await session(beta, sub);
    await advance(30 * DAY);
    // Just before the period's charge under the approval is sent, the customer's move lands.
    beforeDelegatedSend = {
      wallet,
      run: () => moveOnChain(customer, sub, token, [{ id: betaPlan, merchant: beta }]).then(),
    };
    await run();
    expect(beforeDelegatedSend).toBeNull();
    expect(await row(sub)).toMatchObject({ status: 'Active', periods_charged: 1 });
    // Its try expires unlanded; the next is refused before signing (the approval is gone), the
    // move is taken up, and the period is charged under the program.
    await advance(120);
    const [waiting] = await after.sql<{ state: string; last_error: string }>(
      'SELECT state, last_error FROM charge_attempts WHERE subscription_id = $1 AND period = 2',
      [sub],
    );
    expect(waiting).toMatchObject({ state: 'sent' }); // followed by its signature until it expires
    // Its wait ends and its blockhash expires (real time and block height, which the test
    // clock does not move: written as if they had passed).
    await after.sql(
      `UPDATE charge_attempts SET lease_until = now(), last_valid_block_height = 1
        WHERE subscription_id = $1 AND period = 2`,
      [sub],
    );
    await runUntilCharged(sub, 2);
    expect(await row(sub)).toMatchObject({
      scheme: 'program',
      status: 'Active',
      periods_charged: 2,
    });
    await expectLastUnderProgram(sub, wallet, 2);
  });

  it('an approval used up is not the end either when the customer moved without confirming: the move is taken up, not term_ended', async () => {
    const { customer, wallet, ids } = await delegatedCustomer([{ id: acmePlan, merchant: acme }]);
    const [sub] = ids;
    for (let period = 2; period <= 4; period++) {
      await advance(30 * DAY);
      await run();
    }
    expect(await row(sub)).toMatchObject({ scheme: 'token-delegate', periods_charged: 4 });
    const token = await session(acme, sub);
    await moveOnChain(customer, sub, token, [{ id: acmePlan, merchant: acme }]);
    await advance(30 * DAY);
    await runUntilCharged(sub, 5);
    expect(await row(sub)).toMatchObject({
      scheme: 'program',
      status: 'Active',
      periods_charged: 5,
    });
    expect(await balance(wallet)).toBe(200n * PYUSD - 5n * PRICE);
  });

  it('a move that landed unconfirmed is taken up when the customer asks to move again, and a move posted at the checkout is taken as the move it is', async () => {
    const first = await delegatedCustomer([{ id: acmePlan, merchant: acme }]);
    const token = await session(acme, first.ids[0]);
    await moveOnChain(first.customer, first.ids[0], token, [{ id: acmePlan, merchant: acme }]);
    const again = await after.http
      .post(`/api/portal/subscriptions/${first.ids[0]}/reauthorize/transaction`)
      .set(portal(token))
      .send({ account: first.wallet })
      .expect(409);
    expect(again.body.error.message).toBe(
      'This subscription is under the Subscriptions program already: your move has landed',
    );
    expect((await row(first.ids[0])).scheme).toBe('program');

    // Another customer's move, its signature (public on-chain) posted to the plan's checkout.
    const second = await delegatedCustomer([{ id: betaPlan, merchant: beta }]);
    const token2 = await session(beta, second.ids[0]);
    const signature = await moveOnChain(second.customer, second.ids[0], token2, [
      { id: betaPlan, merchant: beta },
    ]);
    const atCheckout = await after.http
      .post(`/api/checkout/plans/${betaPlan}/confirm`)
      .send({ signature })
      .expect(200);
    expect(atCheckout.body).toMatchObject({ created: false, subscribed: true });
    expect((await row(second.ids[0])).scheme).toBe('program');
    expect(
      await after.sql(
        'SELECT subscription_id, use FROM subscription_signatures WHERE signature = $1',
        [signature],
      ),
    ).toEqual([{ subscription_id: second.ids[0], use: 'move' }]);
    // The portal's confirm of the same signature: the move it was.
    await after.http
      .post(`/api/portal/subscriptions/${second.ids[0]}/reauthorize/confirm`)
      .set(portal(token2))
      .send({ signature })
      .expect(200);
  });

  it('a wallet whose other subscription cannot move yet (its merchant never registered the plan under the program) is offered a re-approval, and its checkouts a 409 naming no one', async () => {
    const gamma = await before.createMerchant('Gamma');
    const gammaPlan = (
      await before.http
        .post('/api/plans')
        .set(gamma.auth)
        .send({ label: 'Legacy', mint: 'PYUSD', amount: '10', intervalSeconds: 30 * DAY })
        .expect(201)
    ).body.plan.id as string;
    const { customer, wallet, ids } = await delegatedCustomer([
      { id: acmePlan, merchant: acme },
      { id: gammaPlan, merchant: gamma },
    ]);
    const token = await session(acme, ids[0]);
    const offered = await after.http
      .post(`/api/portal/subscriptions/${ids[0]}/reauthorize/transaction`)
      .set(portal(token))
      .send({ account: wallet })
      .expect(200);
    expect(offered.body).toMatchObject({
      step: 'subscribe',
      message:
        'Re-authorise Pro: 4 more payments of 10 PYUSD (it cannot move to the Subscriptions program yet)',
    });
    expect(programsOf(offered.body.transaction as string)).not.toContain(
      SUBSCRIPTIONS_PROGRAM_ADDRESS,
    );
    const signature = await billing.sendSigned(customer, offered.body.transaction as string);
    const confirmed = await after.http
      .post(`/api/portal/subscriptions/${ids[0]}/reauthorize/confirm`)
      .set(portal(token))
      .send({ signature })
      .expect(200);
    expect(confirmed.body).toMatchObject({ paymentsAuthorized: 4, movesToProgram: true });
    expect((await row(ids[0])).scheme).toBe('token-delegate');

    const refused = await after.http
      .post(`/api/checkout/plans/${betaPlan}/transaction`)
      .send({ account: wallet })
      .expect(409);
    expect(refused.body.error.message).toBe(
      "This wallet's other PYUSD subscriptions cannot move to the Subscriptions program yet, " +
        'and a subscription under it would end their approval: subscribe from another wallet, ' +
        'or try again later',
    );
    expect(JSON.stringify(refused.body)).not.toContain(gammaPlan);
    expect(JSON.stringify(refused.body)).not.toContain(gamma.walletAddress);
  });

  it('a charge whose subscription another request moved meanwhile is not ended (its approval gone is the move)', async () => {
    const { customer, ids } = await delegatedCustomer([{ id: betaPlan, merchant: beta }]);
    const [sub] = ids;
    const token = await session(beta, sub);
    await advance(30 * DAY);
    // While the period's charge is in hand, the customer's move lands and another request (a
    // portal confirm, say) switches the subscription: the charge then finds the approval gone.
    const real = chain.signCharge.bind(chain);
    const sign = jest.spyOn(chain, 'signCharge').mockImplementation(async (input) => {
      if (input.subscriber !== customer.publicKey.toBase58()) return real(input);
      sign.mockRestore();
      await moveOnChain(customer, sub, token, [{ id: betaPlan, merchant: beta }]);
      await after.sql("UPDATE subscriptions SET scheme = 'program' WHERE id = $1", [sub]);
      return real(input);
    });
    await run();
    await runUntilCharged(sub, 2);
    expect(await row(sub)).toMatchObject({
      status: 'Active',
      scheme: 'program',
      periods_charged: 2,
    });
    const charges = await attempts(sub);
    expect(programsOf(charges[1].transaction!)).toContain(SUBSCRIPTIONS_PROGRAM_ADDRESS);
  });

  it('an instance of the build before inserts a subscription without its scheme (a rolling upgrade): the rule the migration filled the rows with fills it', async () => {
    const { ids } = await delegatedCustomer([{ id: acmePlan, merchant: acme }]);
    const copy = (authorized: string) =>
      after.sql<{ scheme: string }>(
        `INSERT INTO subscriptions (id, merchant_id, plan_id, customer_id, status,
           current_period_end, onchain_address, authorized_amount, created_at, updated_at)
         SELECT gen_random_uuid(), merchant_id, plan_id, customer_id, 'Cancelled', NULL,
                onchain_address, $2, now(), now()
           FROM subscriptions WHERE id = $1 RETURNING scheme`,
        [ids[0], authorized],
      );
    expect(await copy('40000000')).toEqual([{ scheme: 'token-delegate' }]);
    expect(await copy('0')).toEqual([{ scheme: 'program' }]);
  });

  it("a charge taken up under the program pulls the plan's amount, whatever an attempt of the old scheme recorded", async () => {
    const { customer, wallet, ids } = await delegatedCustomer([{ id: acmePlan, merchant: acme }]);
    const [sub] = ids;
    const token = await session(acme, sub);
    const signature = await moveOnChain(customer, sub, token, [{ id: acmePlan, merchant: acme }]);
    await after.http
      .post(`/api/portal/subscriptions/${sub}/reauthorize/confirm`)
      .set(portal(token))
      .send({ signature })
      .expect(200);
    await advance(30 * DAY);
    // Period 2's attempt as the approval left it: the price plus a transfer fee, nothing sent,
    // its holder gone.
    await after.sql(
      `INSERT INTO charge_attempts (id, created_at, updated_at, merchant_id, subscription_id,
         period, amount, mint, state, tries, lease_until, lease_owner)
       SELECT gen_random_uuid(), now(), now(), merchant_id, id, 2, $2, 'PYUSD', 'pending', 1,
              now() - interval '1 second', 'gone'
         FROM subscriptions WHERE id = $1`,
      [sub, (PRICE + 50_000n).toString()],
    );
    await runUntilCharged(sub, 2);
    expect(await row(sub)).toMatchObject({ scheme: 'program', periods_charged: 2 });
    const [charged] = await after.sql<{ amount: string }>(
      'SELECT amount::text FROM charge_attempts WHERE subscription_id = $1 AND period = 2',
      [sub],
    );
    expect(charged.amount).toBe(PRICE.toString());
    expect(await balance(wallet)).toBe(200n * PYUSD - 2n * PRICE);
  });

  it('the approval back with the service key (a move stopped after its first step, or a cancel since): nothing is taken up, whatever runs under the program', async () => {
    const { customer, wallet, ids } = await delegatedCustomer([{ id: betaPlan, merchant: beta }]);
    const [sub] = ids;
    const initId = BigInt(before.chain!.chain.slot());
    await accounts.authority(wallet, mint, initId);
    await accounts.subscription({
      merchant: beta.walletAddress,
      planId: betaPlan,
      subscriber: wallet,
      terms,
      initId,
    });
    // The service key is still the token account's delegate: the approval charges it.
    expect((await billing.chain.readAuthorization(wallet, 'PYUSD')).delegatedToService).toBe(true);
    const token = await session(beta, sub);
    const asked = await after.http
      .post(`/api/portal/subscriptions/${sub}/reauthorize/transaction`)
      .set(portal(token))
      .send({ account: wallet })
      .expect(200);
    expect(asked.body.step).toBe('subscribe');
    expect((await row(sub)).scheme).toBe('token-delegate');
    await advance(30 * DAY);
    await run();
    expect(await row(sub)).toMatchObject({ scheme: 'token-delegate', periods_charged: 2 });
    expect(customer.publicKey.toBase58()).toBe(wallet);
  });

  it("a subscription whose own plan is not registered under the program: the move is a 409 naming it (the merchant's to register), not a silent re-approval", async () => {
    const delta = await before.createMerchant('Delta');
    const deltaPlan = (
      await before.http
        .post('/api/plans')
        .set(delta.auth)
        .send({ label: 'Solo', mint: 'PYUSD', amount: '10', intervalSeconds: 30 * DAY })
        .expect(201)
    ).body.plan.id as string;
    const { wallet, ids } = await delegatedCustomer([{ id: deltaPlan, merchant: delta }]);
    const token = await session(delta, ids[0]);
    const refused = await after.http
      .post(`/api/portal/subscriptions/${ids[0]}/reauthorize/transaction`)
      .set(portal(token))
      .send({ account: wallet })
      .expect(409);
    expect(refused.body.error.message).toMatch(
      new RegExp(`^plan ${deltaPlan} is not registered on-chain`),
    );
  });
});
