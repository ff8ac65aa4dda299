import { Keypair } from '@solana/web3.js';
import { ChargeClaims } from '../src/billing/charge-claims';
import { ChargeLeases } from '../src/billing/charge-leases';
import { ChargeRunService } from '../src/billing/charge-run.service';
import { ChargeAttemptsRepository } from '../src/billing/repositories/charge-attempts.repository';
import { WalletReservationsRepository } from '../src/billing/repositories/wallet-reservations.repository';
import { BackgroundWork } from '../src/common/background/background-work';
import { Db } from '../src/database/db';
import { ChainPort, ChargeInput, SignedTx } from '../src/solana/chain.port';
import { billingHelpers, gate } from './helpers/billing';
import { fund } from './helpers/chain-tx';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';
import { waitFor } from './helpers/webhook-receiver';

const DAY = 86_400;
const USDC = 1_000_000n;

/**
 * Graceful shutdown of the charge engine (docs/billing.md, the lease rule): an instance that
 * closes hands back the charge attempts it holds (their leases end at once, fenced on it holding
 * them), so another instance resumes them without waiting for the lease (10 minutes here, so that
 * only the hand-back explains a prompt resume) and settles a recorded try by its signature, never
 * by a second send. Instances A and B share the database, the chain and the domain clock with
 * `t`, which serves the API and charges nothing by itself (`ROLE=api`; runs are called).
 */
describe('Shutdown: charge attempts in hand are handed back, and another instance resumes them at once', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let billing: ReturnType<typeof billingHelpers>;
  let planId: string;
  const serviceKey = Keypair.generate();
  const env = {
    ROLE: 'api',
    LOCALNET_FINALITY_SLOTS: '0',
    CHARGE_LEASE_SECONDS: '600',
    SHUTDOWN_GRACE_MS: '300',
    SERVICE_KEYPAIR: JSON.stringify([...serviceKey.secretKey]),
  };
  const instance = () =>
    createTestApp({
      databaseUrl: t.databaseUrl,
      clock: t.clock,
      env: { ...env, SOLANA_RPC_URL: t.chain!.url },
    });

  beforeAll(async () => {
    t = await createTestApp({ env });
    billing = billingHelpers(t);
    acme = await t.createMerchant('Acme');
    const plan = await t.http
      .post('/api/plans')
      .set(acme.auth)
      .send({ label: 'Pro', mint: 'USDC', amount: '10', intervalSeconds: 30 * DAY })
      .expect(201);
    planId = plan.body.plan.id;
  });
  afterAll(async () => {
    t?.chain?.faults.set({ delaySlots: 0 });
    await t?.close();
  });
  /**
   * Every test's subscriptions end with it, and a run then closes what their attempts left open
   * (abandoned), so that no later run takes them up.
   */
  const live: string[] = [];
  afterEach(async () => {
    jest.restoreAllMocks();
    for (const id of live.splice(0)) {
      await t.http.post(`/api/subscriptions/${id}/cancel`).set(acme.auth);
    }
    await t.app.get(ChargeRunService).run();
  });

  /** A funded wallet subscribed to the plan (first period charged), and a period later. */
  async function dueSubscription() {
    const customer = Keypair.generate();
    const wallet = customer.publicKey.toBase58();
    fund(t, wallet, { symbol: 'USDC', amount: 100n * USDC });
    const { subscription } = await billing.subscribe(customer, planId, acme.auth);
    expect(await billing.balance(wallet)).toBe(90n * USDC);
    live.push(subscription.id);
    await billing.advance(30 * DAY);
    return { wallet, id: subscription.id };
  }

  /** The attempt of period 2, with whether its lease has ended (database time). */
  const periodTwo = async (subscriptionId: string) =>
    (
      await t.sql<{
        state: string;
        signature: string | null;
        lease_owner: string | null;
        lease_until: string;
        ended: boolean;
        takeovers: number;
      }>(
        `SELECT state, signature, lease_owner, lease_until::text, lease_until < now() AS ended,
                takeovers FROM charge_attempts WHERE subscription_id = $1 AND period = 2`,
        [subscriptionId],
      )
    )[0];
  const ledger = async (id: string) =>
    (await t.http.get(`/api/payments?subscriptionId=${id}`).set(acme.auth).expect(200)).body as {
      status: string;
      period: number;
      signature: string | null;
    }[];
  /** Whether the database's time is still before `until` (a lease's end). */
  const before = async (until: string) =>
    (await t.sql<{ before: boolean }>('SELECT now() < $1::timestamptz AS before', [until]))[0]
      .before;

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

  it('a charge sent and awaiting its outcome: A closes, B resumes it at once and settles it by its signature; one transfer, one ledger line', async () => {
    const { wallet, id } = await dueSubscription();
    const merchantBefore = await billing.balance(acme.walletAddress);
    t.chain!.faults.set({ delaySlots: 50 }); // every send lands 20 s late
    const a = await instance();
    let b: TestApp | undefined;
    try {
      const aInstance = a.app.get(ChargeClaims).instance;
      const running = a.app.get(ChargeRunService).run();
      await waitFor(
        async () => (await periodTwo(id))?.state === 'sent',
        30_000,
        () => 'A never sent the charge',
      );
      const sent = await periodTwo(id);
      expect(sent).toMatchObject({ lease_owner: aInstance, ended: false, takeovers: 0 });

      await a.close(); // the grace (300 ms) runs out with the outcome still on its way
      expect(await periodTwo(id)).toMatchObject({
        state: 'sent',
        signature: sent.signature,
        lease_owner: null,
        ended: true,
        takeovers: 0,
      });
      // A's wait ended with the hand-back, while the transaction is still on its way: A settled
      // nothing, and writes nothing when it lands.
      expect(await running).toMatchObject({ attempts: 1, succeeded: 0, deferred: 1 });
      expect(t.chain!.faults.state().held).toBe(1);

      b = await instance();
      const signs = jest.spyOn(b.app.get(ChainPort), 'signCharge');
      const { succeeded } = await b.app.get(ChargeRunService).run();
      expect(succeeded).toBe(1);
      expect(signs).not.toHaveBeenCalled(); // settled by A's recorded try, never signed anew
      expect(await periodTwo(id)).toMatchObject({
        state: 'succeeded',
        signature: sent.signature,
        lease_owner: b.app.get(ChargeClaims).instance,
        takeovers: 1,
      });
      expect(await before(sent.lease_until)).toBe(true); // long before A's lease would have ended
    } finally {
      await b?.close();
      await a.close();
      t.chain!.faults.set({ delaySlots: 0 });
    }
    // Nothing else is on its way; the chain moved one period's charge, the ledger has one line.
    await waitFor(
      () => t.chain!.faults.state().held === 0,
      60_000,
      () => 'transactions held',
    );
    expect(await billing.balance(wallet)).toBe(80n * USDC);
    expect(await billing.balance(acme.walletAddress)).toBe(merchantBefore + 10n * USDC);
    const lines = await ledger(id);
    expect(lines.filter((l) => l.period === 2)).toEqual([
      expect.objectContaining({ status: 'confirmed', signature: (await periodTwo(id)).signature }),
    ]);
  }, 120_000);

  it('a charge being signed when the close begins: handed back unsent, its try refused (the lease fence), and B charges the period once', async () => {
    const { wallet, id } = await dueSubscription();
    const a = await instance();
    try {
      const aChain = a.app.get(ChainPort);
      const held = holdNext(aChain, 'signCharge');
      const aSends = jest.spyOn(aChain, 'sendAndConfirm');
      const running = a.app.get(ChargeRunService).run();
      await held.reached(); // claimed and leased to A for 10 minutes; signing
      expect(await periodTwo(id)).toMatchObject({ state: 'pending', ended: false });

      // The close's steps, the database still open: its first step (nothing new is taken up),
      // then the drain, whose grace (300 ms) runs out while the signing hangs: handed back.
      a.app.get(BackgroundWork).onModuleDestroy();
      await a.app.get(ChargeLeases).beforeApplicationShutdown();
      expect(await periodTwo(id)).toMatchObject({
        state: 'pending',
        signature: null,
        lease_owner: null,
        ended: true,
      });

      held.open(); // A's signing finishes: its try is refused by the fence, never sent
      expect(await running).toMatchObject({ attempts: 1, succeeded: 0 });
      expect(aSends).not.toHaveBeenCalled();
      expect(await periodTwo(id)).toMatchObject({
        state: 'pending',
        signature: null,
        lease_owner: null,
        ended: true,
      });
      // Closing, A takes up nothing more, although the period is due.
      expect(await a.app.get(ChargeRunService).run()).toMatchObject({ attempts: 0 });
    } finally {
      await a.close();
    }

    const b = await instance();
    try {
      expect(await b.app.get(ChargeRunService).run()).toMatchObject({ attempts: 1, succeeded: 1 });
    } finally {
      await b.close();
    }
    expect(await periodTwo(id)).toMatchObject({ state: 'succeeded', takeovers: 1 });
    expect(await billing.balance(wallet)).toBe(80n * USDC);
    expect((await ledger(id)).map((l) => l.period).sort()).toEqual([1, 2]);
  }, 120_000);

  it('a charge claimed as the close begins: handed back before anything is signed', async () => {
    const { id } = await dueSubscription();
    const a = await instance();
    try {
      const claims = a.app.get(ChargeClaims);
      const door = gate();
      const reached = gate();
      const realClaim = claims.claimDue.bind(claims);
      jest.spyOn(claims, 'claimDue').mockImplementationOnce(async (...args) => {
        const rows = await realClaim(...args);
        reached.open();
        await door.wait();
        return rows;
      });
      const signs = jest.spyOn(a.app.get(ChainPort), 'signCharge');
      const running = a.app.get(ChargeRunService).run();
      await reached.wait(); // the period is claimed (leased to A), not yet handed to a lane
      a.app.get(BackgroundWork).onModuleDestroy(); // the close begins
      door.open();
      expect(await running).toMatchObject({ attempts: 1, succeeded: 0, deferred: 1 });
      expect(signs).not.toHaveBeenCalled();
      expect(await periodTwo(id)).toMatchObject({
        state: 'pending',
        signature: null,
        lease_owner: null,
        ended: true,
      });
    } finally {
      await a.close();
    }
  }, 120_000);

  it('a try recorded but not sent yet as the close begins: handed back unsent; resumed while closing, handed back again; B sends those very bytes', async () => {
    const { wallet, id } = await dueSubscription();
    /** Holds `method` of `on` once its real call has returned, until the door opens. */
    function holdAfter<T extends object, K extends keyof T & string>(on: T, method: K) {
      const door = gate();
      const reached = gate();
      const real = (on[method] as (...args: unknown[]) => Promise<unknown>).bind(on);
      jest.spyOn(on, method as never).mockImplementationOnce((async (...args: unknown[]) => {
        const result = await real(...args);
        reached.open();
        await door.wait();
        return result;
      }) as never);
      return { reached: reached.wait, open: door.open };
    }

    // A records its try; the close begins before it is sent: nothing is sent.
    const a = await instance();
    let recorded: string;
    try {
      const held = holdAfter(a.app.get(ChargeAttemptsRepository), 'recordTry');
      const sends = jest.spyOn(a.app.get(ChainPort), 'sendAndConfirm');
      const running = a.app.get(ChargeRunService).run();
      await held.reached();
      a.app.get(BackgroundWork).onModuleDestroy();
      held.open();
      expect(await running).toMatchObject({ attempts: 1, succeeded: 0, deferred: 1 });
      expect(sends).not.toHaveBeenCalled();
      const handed = await periodTwo(id);
      expect(handed).toMatchObject({ state: 'sent', lease_owner: null, ended: true, takeovers: 0 });
      recorded = handed.signature!;
    } finally {
      await a.close();
    }

    // A2 resumes it, and the close begins while it reads the try's fate: it does not send it.
    const a2 = await instance();
    try {
      const held = holdAfter(a2.app.get(ChainPort), 'outcome');
      const sends = jest.spyOn(a2.app.get(ChainPort), 'sendAndConfirm');
      const running = a2.app.get(ChargeRunService).run();
      await held.reached(); // the try was never sent: its blockhash lives, its fate is pending
      a2.app.get(BackgroundWork).onModuleDestroy();
      held.open();
      expect(await running).toMatchObject({ attempts: 1, succeeded: 0, deferred: 1 });
      expect(sends).not.toHaveBeenCalled();
      expect(await periodTwo(id)).toMatchObject({
        state: 'sent',
        signature: recorded,
        lease_owner: null,
        ended: true,
        takeovers: 1,
      });
    } finally {
      await a2.close();
    }

    // B resumes it at once and sends the recorded bytes: one transfer, one ledger line.
    const b = await instance();
    try {
      const signs = jest.spyOn(b.app.get(ChainPort), 'signCharge');
      expect(await b.app.get(ChargeRunService).run()).toMatchObject({ attempts: 1, succeeded: 1 });
      expect(signs).not.toHaveBeenCalled();
    } finally {
      await b.close();
    }
    expect(await periodTwo(id)).toMatchObject({
      state: 'succeeded',
      signature: recorded,
      takeovers: 2,
    });
    expect(await billing.balance(wallet)).toBe(80n * USDC);
    expect((await ledger(id)).filter((l) => l.period === 2)).toEqual([
      expect.objectContaining({ status: 'confirmed', signature: recorded }),
    ]);
  }, 120_000);

  it('closing, an instance takes nothing new up: neither a run nor a customer’s first charge claims', async () => {
    const { id } = await dueSubscription();
    const a = await instance();
    try {
      a.app.get(BackgroundWork).onModuleDestroy(); // the close begins
      expect(await a.app.get(ChargeRunService).chargeNow(id)).toMatchObject({ attempts: 0 });
      expect(await a.app.get(ChargeRunService).run()).toMatchObject({ attempts: 0 });
      expect(await periodTwo(id)).toBeUndefined();
    } finally {
      await a.close();
    }
  });

  it('a charge waiting for the wallet’s other charge when the close begins: handed back at once, not deferred under its lease', async () => {
    // One wallet, two subscriptions in USDC (one approval, charges judged one at a time); the
    // first one's charge is in flight elsewhere (a try recorded by another instance), and the
    // second's attempt was left by an instance that died before it signed anything (its lease
    // ended): resumed, it reads its wallet's reservation (a claim passes the wallet, whose turn
    // the charge in flight holds).
    const customer = Keypair.generate();
    const wallet = customer.publicKey.toBase58();
    fund(t, wallet, { symbol: 'USDC', amount: 100n * USDC });
    const other = await t.http
      .post('/api/plans')
      .set(acme.auth)
      .send({ label: 'Add-on', mint: 'USDC', amount: '5', intervalSeconds: 30 * DAY })
      .expect(201);
    const first = (await billing.subscribe(customer, planId, acme.auth)).subscription.id;
    const second = (await billing.subscribe(customer, other.body.plan.id, acme.auth)).subscription
      .id;
    live.push(first, second);
    await billing.advance(30 * DAY);
    await t.sql(
      `INSERT INTO charge_attempts (id, created_at, updated_at, merchant_id, subscription_id,
         period, amount, mint, state, tries, lease_until, lease_owner, signature, transaction,
         last_valid_block_height)
       VALUES (gen_random_uuid(), now(), now(), $1, $2, 2, 10000000, 'USDC', 'sent', 1,
         now() + interval '10 minutes', 'elsewhere', $3, 'AAAA', 1000)`,
      [acme.id, first, '7'.repeat(87)],
    );
    await t.sql(
      `INSERT INTO charge_attempts (id, created_at, updated_at, merchant_id, subscription_id,
         period, amount, mint, state, tries, lease_until, lease_owner)
       VALUES (gen_random_uuid(), now(), now(), $1, $2, 2, 5000000, 'USDC', 'pending', 1,
         now() - interval '1 minute', 'dead')`,
      [acme.id, second],
    );
    const a = await instance();
    try {
      // The close begins while the charge reads the wallet's reservation and finds the other
      // charge in flight (it would wait up to 5 s for it, then defer its attempt for 20 s).
      const reservations = a.app.get(WalletReservationsRepository);
      const read = reservations.walletReservation.bind(reservations);
      jest.spyOn(reservations, 'walletReservation').mockImplementationOnce(async (...args) => {
        const seen = await read(...args);
        a.app.get(BackgroundWork).onModuleDestroy();
        return seen;
      });
      const signs = jest.spyOn(a.app.get(ChainPort), 'signCharge');
      expect(await a.app.get(ChargeRunService).run()).toMatchObject({
        attempts: 1,
        succeeded: 0,
        deferred: 1,
      });
      expect(signs).not.toHaveBeenCalled();
      expect(await periodTwo(second)).toMatchObject({
        state: 'pending',
        lease_owner: null,
        ended: true,
      });
    } finally {
      await a.close();
      await t.sql('DELETE FROM charge_attempts WHERE subscription_id = $1 AND period = 2', [first]);
    }
  });

  it('an instance whose lease was taken over while it signed (it stalled): its try is refused by the lease fence, and it stops at once', async () => {
    const { wallet, id } = await dueSubscription();
    const a = await instance();
    try {
      const aChain = a.app.get(ChainPort);
      const heldA = holdNext(aChain, 'signCharge');
      const aSigns = jest.spyOn(aChain, 'signCharge');
      const aRun = a.app.get(ChargeRunService).run();
      await heldA.reached(); // claimed and signing
      // A stalls past its lease; `t` takes the attempt over and is signing in turn.
      await t.sql(
        `UPDATE charge_attempts SET lease_until = now() - interval '1 second'
          WHERE subscription_id = $1 AND period = 2`,
        [id],
      );
      const heldT = holdNext(billing.chain, 'signCharge');
      const tRun = t.app.get(ChargeRunService).run();
      await heldT.reached();
      expect(await periodTwo(id)).toMatchObject({ takeovers: 1, signature: null });

      heldA.open(); // A wakes: its try is refused (another holds the lease), and it stops
      await aRun;
      const [{ id: attemptId }] = await t.sql<{ id: string }>(
        'SELECT id FROM charge_attempts WHERE subscription_id = $1 AND period = 2',
        [id],
      );
      const signings = aSigns.mock.calls.filter(([input]) => input.chargeId === attemptId);
      expect(signings).toHaveLength(1); // signed once, never again after the refusal
      expect(await periodTwo(id)).toMatchObject({ state: 'pending', signature: null });
      heldT.open();
      await tRun;
      expect(await periodTwo(id)).toMatchObject({ state: 'succeeded', takeovers: 1 });
    } finally {
      await a.close();
    }
    expect(await billing.balance(wallet)).toBe(80n * USDC);
  });

  describe('the lease fence: once an attempt is handed back, its old holder writes nothing more to it', () => {
    let subscriptionId: string;
    let period = 100;
    const sig = '5'.repeat(87);
    beforeAll(async () => {
      ({ id: subscriptionId } = await dueSubscription()); // Active: a try may be recorded
      live.splice(live.indexOf(subscriptionId), 1); // kept Active for every test below
    });
    // The attempts these tests make up are never taken up by a run (nor are their fake tries).
    afterEach(() =>
      t.sql('DELETE FROM charge_attempts WHERE subscription_id = $1 AND period >= 100', [
        subscriptionId,
      ]),
    );
    afterAll(async () => {
      await t.http.post(`/api/subscriptions/${subscriptionId}/cancel`).set(acme.auth);
    });

    /** An open attempt of a period of its own, leased to `owner` for 10 minutes. */
    async function attempt(state: 'pending' | 'sent', owner: string) {
      const signature = state === 'sent' ? sig : null;
      const [row] = await t.sql<{ id: string }>(
        `INSERT INTO charge_attempts (id, created_at, updated_at, merchant_id, subscription_id,
           period, amount, mint, state, tries, lease_until, lease_owner, signature, transaction,
           last_valid_block_height)
         VALUES (gen_random_uuid(), now(), now(), $1, $2, $3, 10000000, 'USDC', $4, 1,
           now() + interval '10 minutes', $5, $6::text,
           CASE WHEN $6::text IS NULL THEN NULL ELSE 'AAAA' END,
           CASE WHEN $6::text IS NULL THEN NULL ELSE 1000 END)
         RETURNING id`,
        [acme.id, subscriptionId, ++period, state, owner, signature],
      );
      return { id: row.id, owner, signature };
    }
    const snapshot = async (id: string) =>
      (
        await t.sql<{ row: string }>(
          'SELECT row_to_json(a)::text AS row FROM charge_attempts a WHERE id = $1',
          [id],
        )
      )[0].row;

    type Attempt = Awaited<ReturnType<typeof attempt>>;
    const now = () => t.clock.now();
    /** A write of an open attempt: its name, the state it starts from, the write. */
    type Write = [string, 'pending' | 'sent', (a: Attempt) => Promise<boolean | void>];
    const writes: Write[] = [
      [
        'recording a try',
        'pending',
        (a) =>
          t.app.get(ChargeAttemptsRepository).recordTry({
            id: a.id,
            subscriptionId,
            signature: '6'.repeat(87),
            transaction: 'BBBB',
            lastValidBlockHeight: 2000,
            amount: '10000000',
            leaseSeconds: 600,
            owner: a.owner,
            now: now(),
            scheme: 'token-delegate',
          }),
      ],
      [
        'clearing an expired try',
        'sent',
        (a) =>
          t.app
            .get(ChargeAttemptsRepository)
            .clearExpiredTry({ id: a.id, signature: a.signature!, owner: a.owner }, now()),
      ],
      ...[false, true].map((clear): Write => [
        clear ? 'deferring, forgetting the try' : 'deferring',
        'sent',
        (a: Attempt) =>
          t.app.get(ChargeAttemptsRepository).defer({
            id: a.id,
            owner: a.owner,
            signature: a.signature,
            message: 'later',
            retrySeconds: 20,
            clear,
            now: now(),
          }),
      ]),
      [
        'settling a success',
        'sent',
        (a) =>
          t.app
            .get(Db)
            .transaction(async (tx) =>
              (
                await t.app
                  .get(ChargeAttemptsRepository)
                  .markSucceededMany(
                    tx,
                    [{ id: a.id, signature: a.signature!, networkFee: 5000n }],
                    a.owner,
                    now(),
                  )
              ).has(a.id),
            ),
      ],
      ...[false, true].map((landed): Write => [
        landed ? 'settling a failure that landed' : 'settling a failure',
        'sent',
        (a: Attempt) =>
          t.app.get(Db).transaction((tx) =>
            t.app.get(ChargeAttemptsRepository).markFailed(tx, {
              id: a.id,
              owner: a.owner,
              tried: a.signature,
              reason: 'insufficient_funds',
              message: 'no funds',
              networkFee: 0n,
              landed,
              now: now(),
            }),
          ),
      ]),
      [
        'completing (term used up)',
        'pending',
        (a) =>
          t.app.get(Db).transaction((tx) =>
            t.app.get(ChargeAttemptsRepository).markCompleted(tx, {
              id: a.id,
              owner: a.owner,
              reason: 'term_ended',
              now: now(),
            }),
          ),
      ],
      [
        'abandoning',
        'pending',
        (a) => t.app.get(ChargeAttemptsRepository).abandon(a.id, a.owner, now()),
      ],
      [
        'adding a network fee',
        'sent',
        (a) =>
          t.app
            .get(ChargeAttemptsRepository)
            .addNetworkFee(
              { id: a.id, owner: a.owner, signature: a.signature!, fee: 5000n },
              now(),
            ),
      ],
      [
        'renewing the lease',
        'sent',
        (a) => t.app.get(ChargeAttemptsRepository).renewLease(a.id, a.signature!, a.owner, 900),
      ],
    ];

    it.each(writes)('%s: done while held, refused once handed back', async (_, state, write) => {
      const repo = t.app.get(ChargeAttemptsRepository);
      const held = await attempt(state, 'A');
      const untouched = await snapshot(held.id);
      const done = await write(held);
      if (done !== undefined) expect(done).toBe(true);
      expect(await snapshot(held.id)).not.toBe(untouched);

      const handed = await attempt(state, 'A');
      expect(await repo.handBack([handed.id], 'A', now())).toEqual([handed.id]);
      const after = await snapshot(handed.id);
      const refused = await write(handed);
      if (refused !== undefined) expect(refused).toBe(false);
      expect(await snapshot(handed.id)).toBe(after);
    });

    it.each(['PastDue', 'Cancelled', 'Completed'])(
      'recording a try: refused once the subscription is %s (a move that commits first stops the charge)',
      async (status) => {
        const repo = t.app.get(ChargeAttemptsRepository);
        const a = await attempt('pending', 'A');
        const record = () =>
          repo.recordTry({
            id: a.id,
            subscriptionId,
            signature: '8'.repeat(87),
            transaction: 'DDDD',
            lastValidBlockHeight: 2000,
            amount: '10000000',
            leaseSeconds: 600,
            owner: 'A',
            now: now(),
            scheme: 'token-delegate',
          });
        await t.sql('UPDATE subscriptions SET status = $2 WHERE id = $1', [subscriptionId, status]);
        try {
          expect(await record()).toBe(false);
          expect((await snapshot(a.id)).includes('"signature":null')).toBe(true);
        } finally {
          await t.sql("UPDATE subscriptions SET status = 'Active' WHERE id = $1", [subscriptionId]);
        }
        expect(await record()).toBe(true);
      },
    );

    it("recording a try (token-delegate): refused when the wallet's other charges are not as the charge saw them", async () => {
      const repo = t.app.get(ChargeAttemptsRepository);
      const [sub] = await t.sql<{ wallet: string; created_at: string }>(
        `SELECT c.wallet_address AS wallet, s.created_at::text AS created_at
           FROM subscriptions s JOIN customers c ON c.id = s.customer_id WHERE s.id = $1`,
        [subscriptionId],
      );
      const self = { id: subscriptionId, createdAt: sub.created_at };
      const seen = await t.app
        .get(WalletReservationsRepository)
        .walletReservation(sub.wallet, 'USDC', self);
      const a = await attempt('pending', 'A');
      const record = (version: string) =>
        repo.recordTry({
          id: a.id,
          subscriptionId,
          signature: '7'.repeat(87),
          transaction: 'CCCC',
          lastValidBlockHeight: 2000,
          amount: '10000000',
          leaseSeconds: 600,
          owner: 'A',
          now: now(),
          scheme: 'token-delegate',
          unchanged: { wallet: sub.wallet, mint: 'USDC', seen: { ...seen, version } },
        });
      // A sibling's charge went in flight (or settled) since the charge read the wallet.
      expect(await record(String(BigInt(seen.version) + 1n))).toBe(false);
      expect((await snapshot(a.id)).includes('"signature":null')).toBe(true);
      expect(await record(String(BigInt(seen.version) - 1n))).toBe(false);
      // As it saw them: recorded.
      expect(await record(seen.version)).toBe(true);
      expect((await snapshot(a.id)).includes(`"signature":"${'7'.repeat(87)}"`)).toBe(true);
    });

    it('writes of several attempts at once: each stands or falls on its own holder', async () => {
      const repo = t.app.get(ChargeAttemptsRepository);
      // Two tries recorded at the same moment (one statement): the handed-back one is refused.
      const [held, handed] = [await attempt('pending', 'A'), await attempt('pending', 'A')];
      expect(await repo.handBack([handed.id], 'A', now())).toEqual([handed.id]);
      const record = (a: Attempt, signature: string) =>
        repo.recordTry({
          id: a.id,
          subscriptionId,
          signature,
          transaction: 'BBBB',
          lastValidBlockHeight: 2000,
          amount: '10000000',
          leaseSeconds: 600,
          owner: 'A',
          now: now(),
          scheme: 'token-delegate',
        });
      const handedBefore = await snapshot(handed.id);
      expect(
        await Promise.all([record(held, '7'.repeat(87)), record(handed, '8'.repeat(87))]),
      ).toEqual([true, false]);
      expect(await snapshot(handed.id)).toBe(handedBefore);

      // Two successes settled together: only the one still held is settled.
      const [mine, gone] = [await attempt('sent', 'A'), await attempt('sent', 'A')];
      expect(await repo.handBack([gone.id], 'A', now())).toEqual([gone.id]);
      const goneBefore = await snapshot(gone.id);
      const won = await t.app.get(Db).transaction((tx) =>
        repo.markSucceededMany(
          tx,
          [mine, gone].map((a) => ({ id: a.id, signature: a.signature!, networkFee: 5000n })),
          'A',
          now(),
        ),
      );
      expect([...won]).toEqual([mine.id]);
      expect(await snapshot(gone.id)).toBe(goneBefore);
    });

    it('a hand-back changes nothing of an attempt another instance holds, or one settled', async () => {
      const repo = t.app.get(ChargeAttemptsRepository);
      const others = await attempt('sent', 'B');
      const untouched = await snapshot(others.id);
      expect(await repo.handBack([others.id], 'A', now())).toEqual([]);
      expect(await snapshot(others.id)).toBe(untouched);

      const settled = await attempt('sent', 'A');
      await t.sql(`UPDATE charge_attempts SET state = 'succeeded' WHERE id = $1`, [settled.id]);
      const done = await snapshot(settled.id);
      expect(await repo.handBack([settled.id], 'A', now())).toEqual([]);
      expect(await snapshot(settled.id)).toBe(done);
    });
  });
});
