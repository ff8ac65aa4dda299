import { createTransferCheckedInstruction } from '@solana/spl-token';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { ChargeRunService } from '../src/billing/charge-run.service';
import { ChainPort, ChargeInput, SignedTx, TxOutcome } from '../src/solana/chain.port';
import { billingHelpers, gate } from './helpers/billing';
import { fund } from './helpers/chain-tx';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';
import { waitFor } from './helpers/webhook-receiver';

const DAY = 86_400;
const USDC = 1_000_000n;
const LEASE_SECONDS = 2;

/**
 * A period is charged once whatever commits, dies or stalls between a charge's claim, its
 * record, its send and its settlement, on real PostgreSQL and the localnet chain. Each test holds
 * one step of a real charge at a gate (the chain adapter's own method is called once the gate
 * opens), does what a merchant, a customer or another instance would do meanwhile, and then
 * checks the chain, the attempt and the ledger.
 */
describe('Billing engine: charges under interleavings and dead instances', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let billing: ReturnType<typeof billingHelpers>;
  let chain: ChainPort;
  let planId: string;
  const serviceKey = Keypair.generate();
  const env = {
    ROLE: 'api',
    LOCALNET_FINALITY_SLOTS: '0',
    CHARGE_LEASE_SECONDS: String(LEASE_SECONDS),
    // A closing instance hands back what it holds after this grace (docs/operations.md).
    SHUTDOWN_GRACE_MS: '200',
    SERVICE_KEYPAIR: JSON.stringify([...serviceKey.secretKey]),
  };

  const run = () => billing.run();
  const balance = (wallet: string) => billing.balance(wallet);
  const ledger = async (id: string) =>
    (await t.http.get(`/api/payments?subscriptionId=${id}`).set(acme.auth).expect(200)).body as {
      status: string;
      period: number;
      signature: string | null;
      amount: string;
    }[];

  /** Every test's subscriptions end with it, so that no later run charges them. */
  const live: string[] = [];
  afterEach(async () => {
    for (const id of live.splice(0)) {
      await t.http.post(`/api/subscriptions/${id}/cancel`).set(acme.auth);
    }
  });

  /** A funded wallet subscribed to the plan (first period charged), and a period later. */
  async function dueSubscription() {
    const customer = Keypair.generate();
    const wallet = customer.publicKey.toBase58();
    fund(t, wallet, { symbol: 'USDC', amount: 100n * USDC });
    const { subscription } = await billing.subscribe(customer, planId, acme.auth);
    expect(await balance(wallet)).toBe(90n * USDC);
    live.push(subscription.id);
    await billing.advance(30 * DAY);
    return { customer, wallet, id: subscription.id };
  }

  /** Waits until the attempt's lease has run out (database time), as after its holder died. */
  const leaseEnded = (id: string) =>
    waitFor(
      async () =>
        (
          await t.sql<{ ended: boolean }>(
            `SELECT bool_and(lease_until < now()) AS ended FROM charge_attempts
              WHERE subscription_id = $1 AND state IN ('pending', 'sent')`,
            [id],
          )
        )[0].ended === true,
      10_000,
      () => 'the lease never ended',
    );

  /** Holds the next call of `method` on `on` at a gate, then calls the real method. */
  function holdNext<K extends 'signCharge' | 'sendAndConfirm'>(on: ChainPort, method: K) {
    const door = gate();
    const reached = gate();
    const real = on[method].bind(on) as (arg: ChargeInput & SignedTx) => Promise<unknown>;
    jest.spyOn(on, method).mockImplementationOnce((async (arg: ChargeInput & SignedTx) => {
      reached.open();
      await door.wait();
      return real(arg);
    }) as never);
    return { reached: reached.wait, open: door.open };
  }

  beforeAll(async () => {
    t = await createTestApp({ env });
    billing = billingHelpers(t);
    chain = billing.chain;
    acme = await t.createMerchant('Acme');
    const plan = await t.http
      .post('/api/plans')
      .set(acme.auth)
      .send({ label: 'Pro', mint: 'USDC', amount: '10', intervalSeconds: 30 * DAY })
      .expect(201);
    planId = plan.body.plan.id;
  });
  afterAll(async () => {
    await t?.close();
  });
  afterEach(() => jest.restoreAllMocks());

  it.each(['pause', 'cancel'] as const)(
    'a %s that commits between the claim and the record: nothing is sent, the attempt is abandoned',
    async (action) => {
      const { wallet, id } = await dueSubscription();
      const held = holdNext(chain, 'signCharge');
      const running = run();
      await held.reached(); // claimed: the attempt is open, nothing signed yet
      expect(await billing.attempts(id)).toMatchObject([
        { period: 1, state: 'succeeded' },
        { period: 2, state: 'pending', signature: null },
      ]);
      await t.http.post(`/api/subscriptions/${id}/${action}`).set(acme.auth).expect(200);
      held.open();
      const { charges } = await running;
      expect(charges).toMatchObject({ attempts: 1, succeeded: 0, abandoned: 1, deferred: 0 });
      expect(await billing.attempts(id)).toMatchObject([
        { period: 1, state: 'succeeded' },
        { period: 2, state: 'abandoned', signature: null },
      ]);
      expect(await balance(wallet)).toBe(90n * USDC);
      expect((await ledger(id)).map((p) => p.period)).toEqual([1]);
    },
  );

  it('a charge that lands after a pause committed still pays its period: a resume charges nothing more', async () => {
    const { wallet, id } = await dueSubscription();
    const before = await billing.subscriptionOf(acme.auth, planId, wallet);
    const held = holdNext(chain, 'sendAndConfirm');
    const running = run();
    await held.reached(); // recorded and about to be sent
    expect((await billing.attempts(id))[1]).toMatchObject({ period: 2, state: 'sent' });
    await t.http.post(`/api/subscriptions/${id}/pause`).set(acme.auth).expect(200);
    held.open();
    expect((await running).charges).toMatchObject({ succeeded: 1 });
    const paused = await billing.subscriptionOf(acme.auth, planId, wallet);
    expect(paused).toMatchObject({ status: 'PastDue' });
    // The period it paid for moved on, although the subscription was no longer Active.
    expect(new Date(paused.currentPeriodEnd as string).getTime()).toBe(
      new Date(before.currentPeriodEnd as string).getTime() + 30 * DAY * 1000,
    );
    await t.http.post(`/api/subscriptions/${id}/resume`).set(acme.auth).expect(200);
    expect((await run()).charges).toMatchObject({ attempts: 0, succeeded: 0 });
    expect(await balance(wallet)).toBe(80n * USDC);
    expect((await ledger(id)).map((p) => p.period).sort()).toEqual([1, 2]);
    // And the next period is charged when it comes, once.
    await billing.advance(30 * DAY);
    expect((await run()).charges).toMatchObject({ attempts: 1, succeeded: 1 });
    expect(await balance(wallet)).toBe(70n * USDC);
  });

  describe('with a second instance on the same database and chain', () => {
    let other: TestApp | undefined;

    beforeEach(async () => {
      other = await createTestApp({
        databaseUrl: t.databaseUrl,
        clock: t.clock,
        env: { ...env, SOLANA_RPC_URL: t.chain!.url },
      });
    });
    afterEach(async () => {
      await other?.close();
      other = undefined;
    });

    it('an instance that died after recording its try: another settles that very try, sending the same bytes; charged once', async () => {
      const { wallet, id } = await dueSubscription();
      const dead = other!;
      other = undefined;
      const otherChain = dead.app.get(ChainPort);
      const held = holdNext(otherChain, 'sendAndConfirm');
      const dying = dead.app.get(ChargeRunService).run();
      await held.reached();
      const [, recorded] = await billing.attempts(id);
      expect(recorded).toMatchObject({ state: 'sent', takeovers: 0 });
      await dead.close(); // dies: its database connections are gone, its lease is not renewed
      await leaseEnded(id);

      const { charges } = await run();
      expect(charges).toMatchObject({ attempts: 1, succeeded: 1 });
      const [, settled] = await billing.attempts(id);
      expect(settled).toMatchObject({
        state: 'succeeded',
        signature: recorded.signature,
        takeovers: 1,
      });
      expect(settled.lease_owner).not.toBe(recorded.lease_owner);
      // The dead instance's send goes out late (its bytes): the chain takes one copy.
      held.open();
      await dying.catch(() => undefined);
      expect(await balance(wallet)).toBe(80n * USDC);
      expect((await ledger(id)).filter((p) => p.period === 2)).toMatchObject([
        { status: 'confirmed', signature: recorded.signature },
      ]);
    });

    it('an instance that stalled before recording wakes after another charged the period: its try is never recorded or sent', async () => {
      const { wallet, id } = await dueSubscription();
      const otherChain = other!.app.get(ChainPort);
      const held = holdNext(otherChain, 'signCharge');
      const sends = jest.spyOn(otherChain, 'sendAndConfirm');
      const stalled = other!.app.get(ChargeRunService).run();
      await held.reached(); // claimed, leased, nothing signed
      await leaseEnded(id);

      expect((await run()).charges).toMatchObject({ attempts: 1, succeeded: 1 });
      const [, settled] = await billing.attempts(id);
      expect(settled).toMatchObject({ state: 'succeeded', takeovers: 1 });

      held.open(); // wakes: signs its own try, which must not be recorded over the settled one
      const woke = await stalled;
      expect(woke).toMatchObject({ succeeded: 0, abandoned: 0 });
      expect(sends).not.toHaveBeenCalled();
      expect((await billing.attempts(id))[1]).toMatchObject({
        state: 'succeeded',
        signature: settled.signature,
      });
      expect(await balance(wallet)).toBe(80n * USDC);
      expect((await ledger(id)).map((p) => p.period).sort()).toEqual([1, 2]);
    });
  });

  it('outcomes a run reports: a deferred charge (RPC refusing) stays open and is charged by a later run', async () => {
    const { wallet, id } = await dueSubscription();
    const outcome: TxOutcome = { state: 'unknown' };
    jest.spyOn(chain, 'sendAndConfirm').mockResolvedValueOnce(outcome); // the RPC never answered
    expect((await run()).charges).toMatchObject({ attempts: 1, succeeded: 0, deferred: 1 });
    const [, open] = await billing.attempts(id);
    expect(open).toMatchObject({ state: 'sent' });
    // Never sent: once the lease ends, the next run settles that very try by sending its bytes.
    await leaseEnded(id);
    expect((await run()).charges).toMatchObject({ attempts: 1, succeeded: 1 });
    expect((await billing.attempts(id))[1]).toMatchObject({
      state: 'succeeded',
      signature: open.signature,
      takeovers: 1,
    });
    expect(await balance(wallet)).toBe(80n * USDC);
  });

  it('a try that lands while the node answers its status with nothing until its blockhash has expired is settled as landed: never signed anew', async () => {
    const { wallet, id } = await dueSubscription();
    // Longer than a blockhash lives (150 slots, 60 s): the charge is confirmed past its expiry.
    t.chain!.faults.set({ hideStatusesMs: 180_000 });
    try {
      const sends = jest.spyOn(chain, 'sendAndConfirm');
      const { charges } = await run();
      expect(charges).toMatchObject({ attempts: 1, succeeded: 1, deferred: 0 });
      expect(sends).toHaveBeenCalledTimes(1);
      const [, settled] = await billing.attempts(id);
      expect(settled).toMatchObject({ state: 'succeeded', period: 2 });
      // The height had passed: the status read alone would have called it expired.
      const height = await new Connection(t.chain!.url).getBlockHeight('finalized');
      expect(height).toBeGreaterThan(Number(settled.last_valid_block_height));
    } finally {
      t.chain!.faults.set({ hideStatusesMs: 0 });
    }
    expect((await run()).charges).toMatchObject({ attempts: 0 });
    expect(await balance(wallet)).toBe(80n * USDC);
    expect((await ledger(id)).map((p) => p.period).sort()).toEqual([1, 2]);
  }, 240_000);

  it('a try refused in preflight is failed at once, but when its bytes land after all the run records it as the period’s charge', async () => {
    const { customer, wallet, id } = await dueSubscription();
    const held = holdNext(chain, 'sendAndConfirm');
    const running = run();
    await held.reached(); // recorded, about to be sent
    // The customer moves everything away: the node's preflight refuses the charge.
    const usdc = await chain.mint('USDC');
    const away = Keypair.generate().publicKey;
    fund(t, away.toBase58(), { symbol: 'USDC', amount: 1n }); // its token account
    await billing.sendInstructions(customer, [
      createTransferCheckedInstruction(
        new PublicKey(await chain.tokenAccount(wallet, 'USDC')),
        new PublicKey(usdc.address),
        new PublicKey(await chain.tokenAccount(away.toBase58(), 'USDC')),
        customer.publicKey,
        90n * USDC,
        6,
        [],
        new PublicKey(usdc.tokenProgram),
      ),
    ]);
    held.open();
    expect((await running).charges).toMatchObject({ failed: 1, succeeded: 0 });
    const [refused] = await t.sql<{ state: string; signature: string; transaction: string }>(
      `SELECT state, signature, transaction FROM charge_attempts
        WHERE subscription_id = $1 AND period = 2`,
      [id],
    );
    expect(refused).toMatchObject({ state: 'failed', transaction: expect.any(String) });
    expect((await t.http.get(`/api/subscriptions/${id}`).set(acme.auth)).body).toMatchObject({
      status: 'PastDue',
      failureReason: 'insufficient_funds',
    });

    // Funds come back, and a copy of those very bytes (sent before a crash, say) lands.
    fund(t, wallet, { symbol: 'USDC', amount: 10n * USDC });
    const connection = new Connection(t.chain!.url, 'confirmed');
    await connection.sendRawTransaction(Buffer.from(refused.transaction, 'base64'));
    await waitFor(
      async () =>
        (await connection.getSignatureStatus(refused.signature)).value?.confirmationStatus !==
        undefined,
      30_000,
      () => 'the copy never landed',
    );
    expect(await balance(wallet)).toBe(0n);

    // The next run follows the failed try, finds it landed: the period's charge after all.
    expect((await run()).charges).toMatchObject({ succeeded: 1 });
    expect((await billing.attempts(id))[1]).toMatchObject({
      state: 'succeeded',
      signature: refused.signature,
    });
    expect(
      (await ledger(id)).filter((p) => p.period === 2).map((p) => [p.status, p.signature]),
    ).toEqual(expect.arrayContaining([['confirmed', refused.signature]]));
    expect(await t.sql(`SELECT periods_charged FROM subscriptions WHERE id = $1`, [id])).toEqual([
      { periods_charged: 2 },
    ]);
    // Nothing more is followed, or charged, for that period.
    expect((await run()).charges).toMatchObject({ succeeded: 0 });
    expect(await balance(wallet)).toBe(0n);
  }, 120_000);
  it('a try recorded by an instance that died, its send lost, then the subscription cancelled: the next run follows it by signature and never sends it', async () => {
    const { wallet, id } = await dueSubscription();
    const dead = await createTestApp({
      databaseUrl: t.databaseUrl,
      clock: t.clock,
      env: { ...env, SOLANA_RPC_URL: t.chain!.url },
    });
    const reached = gate();
    const never = gate();
    // Its send is lost: the bytes never reach the chain, and it dies waiting.
    jest.spyOn(dead.app.get(ChainPort), 'sendAndConfirm').mockImplementationOnce(async () => {
      reached.open();
      await never.wait();
      return { state: 'unknown' };
    });
    void dead.app
      .get(ChargeRunService)
      .run()
      .catch(() => undefined);
    await reached.wait();
    const [, recorded] = await billing.attempts(id);
    expect(recorded).toMatchObject({ state: 'sent', signature: expect.any(String) });
    await dead.close();
    await t.http.post(`/api/subscriptions/${id}/cancel`).set(acme.auth).expect(200);
    await leaseEnded(id);

    const sends = jest.spyOn(chain, 'sendAndConfirm');
    expect((await run()).charges).toMatchObject({ attempts: 1, deferred: 1, succeeded: 0 });
    expect(sends).not.toHaveBeenCalled();
    // Still its try, followed by its signature (it could only land if a copy had gone out).
    expect((await billing.attempts(id))[1]).toMatchObject({
      state: 'sent',
      signature: recorded.signature,
      last_error: 'the subscription is no longer active: its try is followed, not sent again',
    });
    expect(
      (
        await billing.connection.getSignatureStatus(recorded.signature!, {
          searchTransactionHistory: true,
        })
      ).value,
    ).toBeNull();
    expect(await balance(wallet)).toBe(90n * USDC);
    expect((await ledger(id)).map((p) => p.period)).toEqual([1]);
  });
});
