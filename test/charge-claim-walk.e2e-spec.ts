import { Client } from 'pg';
import {
  claimDueRows,
  resumeStale,
} from '../src/billing/repositories/charge-attempt-claims.repository';
import { defer, deferClearing } from '../src/billing/repositories/charge-attempt-leases.repository';
import { DueWalk, FRONT } from '../src/billing/repositories/due-walk';
import type { Db } from '../src/database/db';
import { PgSession, type SqlTx } from '../src/database/pg-transaction';
import { randomWallet } from './helpers/test-app';
import { createTestDatabase } from './setup/test-database';

/** Other wallets, one due subscription each, due after the wallet with three (more than one claim looks at). */
const OTHERS = 20;

/**
 * A charge run's claims walk the due subscriptions on from where the last claim stopped
 * (`DueWalk`), not from the front, where the charges under way sit until they settle. What a
 * walk passes (a wallet's siblings while one of its charges is in hand) must still be claimed in
 * the same run: a walk that reaches the end of what is due goes on from the front, in the same
 * claim. Through the real claim statements on PostgreSQL.
 */
describe('the charge claims walk the due subscriptions on from the last claim', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let sql: Client;
  let executor: Db;
  /** A wallet with three subscriptions, in due order: two due first, one among the others. */
  let wallet: string;
  let siblings: string[];
  let others: string[];
  let firsts: { delegated: string; program: string };
  /** Program-scheme subscriptions, in due order. */
  let program: string[];
  /** A second wallet's two, due after the first two of `siblings`. */
  let pair: string[];

  beforeAll(async () => {
    db = await createTestDatabase();
    sql = new Client({ connectionString: db.url });
    await sql.connect();
    // A connection as the service's `Db` runs statements and transactions on.
    executor = new PgSession(sql, (error) => error) as unknown as Db;
    const {
      rows: [merchant],
    } = await sql.query<{ id: string }>(
      `INSERT INTO merchants (id, created_at, updated_at, name, wallet_address, webhook_secret)
       VALUES (gen_random_uuid(), now(), now(), 'Acme', $1, 'whsec_x') RETURNING id`,
      [randomWallet()],
    );
    const plans: string[] = [];
    for (let p = 0; p < 3; p++) {
      const { rows } = await sql.query<{ id: string }>(
        `INSERT INTO plans (id, merchant_id, label, mint, amount, interval_seconds, active,
           onchain_plan_id, created_at, updated_at)
         VALUES (gen_random_uuid(), $1, $2, 'USDC', 1000000, 2592000, true, $2, now(), now())
         RETURNING id`,
        [merchant.id, `P${p}`],
      );
      plans.push(rows[0].id);
    }
    // Due n minutes ago: the others one a minute, from 50 minutes ago.
    const subscribe = async (
      wallet: string,
      plan: string,
      minutesAgo: number,
      scheme = 'token-delegate',
    ) => {
      const { rows } = await sql.query<{ id: string }>(
        `WITH c AS (
           INSERT INTO customers (id, merchant_id, wallet_address, created_at, updated_at)
           VALUES (gen_random_uuid(), $1, $2, now(), now())
           ON CONFLICT (merchant_id, wallet_address) DO UPDATE SET updated_at = now()
           RETURNING id)
         INSERT INTO subscriptions (id, merchant_id, plan_id, customer_id, status,
           current_period_end, onchain_address, authorized_amount, charged_amount,
           periods_charged, created_at, updated_at, scheme)
         SELECT gen_random_uuid(), $1, $3, c.id, 'Active',
                now() - make_interval(secs => $4::float8 * 60), $2, 12000000, 0, 0, now(), now(),
                $5
           FROM c RETURNING id`,
        [merchant.id, wallet, plan, minutesAgo, scheme],
      );
      return rows[0].id;
    };
    wallet = randomWallet();
    siblings = [];
    // Two due first; the third among the others (between the fifth and the sixth).
    for (const [p, ago] of [100, 99, 45.5].entries()) {
      siblings.push(await subscribe(wallet, plans[p], ago));
    }
    // A second wallet with two, due right after.
    const second = randomWallet();
    pair = [await subscribe(second, plans[0], 98), await subscribe(second, plans[1], 97)];
    // Two first charges claimed as they are (a confirmed subscribe's), one under each scheme:
    // due in an hour, out of the other tests' way.
    firsts = {
      delegated: await subscribe(randomWallet(), plans[2], -60),
      program: await subscribe(randomWallet(), plans[2], -60, 'program'),
    };
    // Under the program scheme: due in 61 to 66 minutes, out of the other tests' way.
    program = [];
    for (let p = 0; p < 6; p++)
      program.push(await subscribe(randomWallet(), plans[0], -61 - p, 'program'));
    others = [];
    for (let o = 0; o < OTHERS; o++) others.push(await subscribe(randomWallet(), plans[0], 50 - o));
  });

  afterAll(async () => {
    await sql.end();
    await db.drop();
  });

  const claim = (walk: DueWalk, limit: number, busy: string[] = []) =>
    claimDueRows(executor, {
      now: new Date(),
      limit,
      oneAtATime: true,
      busy,
      leaseSeconds: 30,
      owner: 'walk-test',
      walk,
    });

  // (First: it leaves nothing behind, every claim of it rolled back.)
  it('moves the walk only with a claim that committed; a claim run again starts where the first began', async () => {
    const walk = new DueWalk();
    const params = {
      now: new Date(),
      limit: 2,
      oneAtATime: true,
      busy: [],
      leaseSeconds: 30,
    };
    const ids = (rows: { subscription_id: string }[]) => rows.map((r) => r.subscription_id);
    // The work run in a transaction rolled back (`runs` times, each from its start, as after a
    // stale prepared plan), then its COMMIT refused or, `commits`, taken.
    const rolledBack = (runs: number, commits: boolean) =>
      ({
        transaction: async (work: (tx: SqlTx) => Promise<unknown>) => {
          let result: unknown;
          for (let run = 0; run < runs; run++) {
            await sql.query('BEGIN');
            try {
              result = await work(executor);
              seen.push(ids(result as { subscription_id: string }[]));
            } finally {
              await sql.query('ROLLBACK');
            }
          }
          if (!commits) throw new Error('the COMMIT was refused');
          return result;
        },
      }) as unknown as Db;
    const seen: string[][] = [];
    await expect(
      claimDueRows(rolledBack(1, false), { ...params, owner: 'walk-test', walk }),
    ).rejects.toThrow('the COMMIT was refused');
    expect(walk.from('token-delegate')).toEqual(FRONT);
    const rows = await claimDueRows(rolledBack(2, true), { ...params, owner: 'walk-test', walk });
    expect(seen[1]).toHaveLength(2);
    expect(seen[2]).toEqual(seen[1]);
    expect(ids(rows)).toEqual(seen[1]);
    expect(walk.from('token-delegate')).not.toEqual(FRONT);
  });

  it('passes what it cannot take yet, walks on, and takes it once its walk comes round again', async () => {
    const walk = new DueWalk();
    // Four at most, one per wallet: each wallet's first and the two oldest others; the wallets'
    // other subscriptions are passed, and the walk stops after the last claimed.
    const first = await claim(walk, 4);
    expect(first.map((r) => r.subscription_id)).toEqual([
      siblings[0],
      pair[0],
      ...others.slice(0, 2),
    ]);
    expect(walk.from('token-delegate').id).toBe(others[1]);

    // Both wallets' first charges settle: their next ones may be charged now.
    await sql.query(
      `UPDATE charge_attempts SET state = 'succeeded', lease_owner = NULL
        WHERE subscription_id = ANY($1::uuid[])`,
      [[siblings[0], pair[0]]],
    );
    await sql.query(
      `UPDATE subscriptions SET periods_charged = 1, current_period_end = now() + interval '30 days'
        WHERE id = ANY($1::uuid[])`,
      [[siblings[0], pair[0]]],
    );
    // The walk goes on from the last claimed: the rest of the others and the first wallet's
    // third; having reached the end of what is due, from the front in the same claim, for what
    // it passed: the second wallet's second, not the first wallet's second (one charge per
    // wallet: its third is taken).
    const second = await claim(walk, 20);
    expect(second.map((r) => r.subscription_id)).toEqual([
      ...others.slice(2, 5),
      siblings[2],
      ...others.slice(5),
      pair[1],
    ]);
    // Walked to the end: the next claim starts at the front.
    expect(walk.from('token-delegate').due).toBe('-infinity');

    // Nothing more to take while the wallet's third is in hand (this instance's `busy`).
    expect(await claim(walk, 20, [`${wallet}:USDC`])).toEqual([]);
    const open = await sql.query<{ subscription_id: string }>(
      `SELECT subscription_id FROM charge_attempts WHERE state = 'pending' ORDER BY created_at`,
    );
    expect(open.rows).toHaveLength(OTHERS + 2);
  });

  const attemptOf = async (subscriptionId: string) =>
    (
      await sql.query<{ wallet: string | null; state: string }>(
        'SELECT wallet, state FROM charge_attempts WHERE subscription_id = $1 AND period = 1',
        [subscriptionId],
      )
    ).rows[0];

  it('a first charge claimed as it is carries its wallet under the token-delegate scheme only', async () => {
    for (const id of [firsts.delegated, firsts.program]) {
      const [row] = await claimDueRows(executor, {
        now: new Date(Date.now() + 2 * 3600_000),
        limit: 1,
        subscriptionId: id,
        oneAtATime: false,
        busy: [],
        leaseSeconds: 30,
        owner: 'walk-test',
      });
      expect(row.subscription_id).toBe(id);
    }
    expect((await attemptOf(firsts.delegated)).wallet).toEqual(expect.any(String));
    expect((await attemptOf(firsts.program)).wallet).toBeNull();
  });

  it('an attempt put off with nothing sent gives up its wallet’s turn; a resume takes it again', async () => {
    // The first charge of `firsts.delegated`, claimed above, is in hand with its wallet.
    const { wallet: own } = await attemptOf(firsts.delegated);
    expect(own).toEqual(expect.any(String));
    const [{ id }] = (
      await sql.query<{ id: string }>('SELECT id FROM charge_attempts WHERE subscription_id = $1', [
        firsts.delegated,
      ])
    ).rows;
    const putOff = { id, owner: 'walk-test', message: 'later', retrySeconds: 600, now: new Date() };
    // Put off with a try that may still land: it keeps the turn.
    await sql.query(`UPDATE charge_attempts SET state = 'sent', signature = $2 WHERE id = $1`, [
      id,
      '7'.repeat(87),
    ]);
    expect(await defer.run({ ...putOff, signature: '7'.repeat(87) }, executor)).toHaveLength(1);
    expect((await attemptOf(firsts.delegated)).wallet).toBe(own);
    // Put off forgetting that try (it expired): nothing may land, the turn is given up.
    expect(
      await deferClearing.run({ ...putOff, signature: '7'.repeat(87) }, executor),
    ).toHaveLength(1);
    expect(await attemptOf(firsts.delegated)).toEqual({ wallet: null, state: 'pending' });
    // Resumed once its lease ends: in hand again, it holds the turn again.
    await sql.query(`UPDATE charge_attempts SET wallet = $2 WHERE id = $1`, [id, own]);
    expect(await defer.run({ ...putOff, signature: null }, executor)).toHaveLength(1);
    expect((await attemptOf(firsts.delegated)).wallet).toBeNull();
    await sql.query(
      `UPDATE charge_attempts SET lease_until = now() - interval '1 second' WHERE id = $1`,
      [id],
    );
    const resumed = await resumeStale.run(
      { leaseSeconds: 30, owner: 'another', inHand: [], limit: 10 },
      executor,
    );
    expect(resumed.map((r) => r.id)).toEqual([id]);
    expect((await attemptOf(firsts.delegated)).wallet).toBe(own);
  });

  it('passes a wallet with a charge open in any instance: the open attempt carries the wallet', async () => {
    // The wallet's third is open (claimed above). An instance that does not hold it (nothing
    // in its `busy`) does not claim the wallet's second: it could only wait for the third.
    expect(await attemptOf(siblings[2])).toEqual({ wallet, state: 'pending' });
    expect(await claim(new DueWalk(), 20)).toEqual([]);
    // Once that charge settles, the second is claimed, its attempt with the wallet.
    await sql.query(
      `UPDATE charge_attempts SET state = 'succeeded', lease_owner = NULL WHERE subscription_id = $1`,
      [siblings[2]],
    );
    const next = await claim(new DueWalk(), 20);
    expect(next.map((r) => r.subscription_id)).toEqual([siblings[1]]);
    expect(await attemptOf(siblings[1])).toEqual({ wallet, state: 'pending' });
  });
  it('under the program scheme too: walks on, and takes what it passed once the walk comes round', async () => {
    const walk = new DueWalk();
    const later = { now: new Date(Date.now() + 2 * 3600_000), oneAtATime: false, busy: [] };
    const claimProgram = (limit: number) =>
      claimDueRows(executor, { ...later, limit, leaseSeconds: 30, owner: 'walk-test', walk });
    const first = await claimProgram(2);
    expect(first.map((r) => r.subscription_id)).toEqual(program.slice(0, 2));
    expect(walk.from('program').id).toBe(program[1]);
    // The first one's try failed (it is claimed again) and held a turn it must not keep.
    await sql.query(
      `UPDATE charge_attempts SET state = 'failed', wallet = 'W' WHERE subscription_id = $1`,
      [program[0]],
    );
    // On from the second: the other four, then from the front, the first, claimed again.
    const second = await claimProgram(10);
    expect(second.map((r) => r.subscription_id)).toEqual([...program.slice(2), program[0]]);
    expect(await attemptOf(program[0])).toEqual({ wallet: null, state: 'pending' });
  });
});
