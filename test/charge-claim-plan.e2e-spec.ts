import { Client } from 'pg';
import {
  claimDueAll,
  claimDueOneAtATime,
  claimDueRows,
} from '../src/billing/repositories/charge-attempt-claims.repository';
import type { Db } from '../src/database/db';
import { PgSession, type SqlTx, type TransactionOptions } from '../src/database/pg-transaction';
import { type PlanNode, planNodes } from './helpers/query-plans';
import { randomWallet } from './helpers/test-app';
import { createTestDatabase } from './setup/test-database';

const WALLETS = 400;
const PLANS = 10; // per scheme: every wallet subscribed to each
/** Charges of the wave already under way (claimed by this or another instance). */
const IN_FLIGHT = 150;
const LIMIT = 8;

/**
 * A charge run claims due subscriptions a batch at a time, oldest first. The claim must read
 * about as many due subscriptions as it claims, whatever PostgreSQL believes about how many
 * are due: subscriptions fall due by the clock, in waves (everyone who subscribed on the 1st),
 * between two ANALYZEs. With the other tables joined in the walk, a planner that took the due
 * subscriptions for one row read every one of them on every claim (3 000-4 000 rows, 20-90 ms a
 * claim in `npm run bench:engine`), on every instance.
 */
describe('the charge claim on a wave of due subscriptions the statistics have not seen', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let sql: Client;

  beforeAll(async () => {
    db = await createTestDatabase();
    sql = new Client({ connectionString: db.url });
    await sql.connect();
    const [merchant] = (
      await sql.query<{ id: string }>(
        `INSERT INTO merchants (id, created_at, updated_at, name, wallet_address, webhook_secret)
         VALUES (gen_random_uuid(), now(), now(), 'Acme', $1, 'whsec_x') RETURNING id`,
        [randomWallet()],
      )
    ).rows;
    await sql.query(
      `INSERT INTO customers (id, merchant_id, wallet_address, created_at, updated_at)
       SELECT gen_random_uuid(), $1, w, now(), now() FROM unnest($2::text[]) AS t(w)`,
      [merchant.id, Array.from({ length: WALLETS }, randomWallet)],
    );
    for (const scheme of ['token-delegate', 'program']) {
      for (let p = 0; p < PLANS; p++) {
        const [plan] = (
          await sql.query<{ id: string }>(
            `INSERT INTO plans (id, merchant_id, label, mint, amount, interval_seconds, active,
               onchain_plan_id, created_at, updated_at)
             VALUES (gen_random_uuid(), $1, $2, 'USDC', 1000000, 2592000, true, $2, now(), now())
             RETURNING id`,
            [merchant.id, `${scheme} ${p}`],
          )
        ).rows;
        // Subscribed a month ago, charged once, next due tomorrow.
        await sql.query(
          `INSERT INTO subscriptions (id, merchant_id, plan_id, customer_id, status,
             current_period_end, onchain_address, authorized_amount, charged_amount,
             periods_charged, last_charge_at, created_at, updated_at, scheme)
           SELECT gen_random_uuid(), $1, $2, c.id, 'Active', now() + interval '1 day',
                  c.wallet_address, 12000000, 1000000, 1, now() - interval '30 days',
                  now() - interval '30 days', now() - interval '30 days', $3
             FROM customers c WHERE c.merchant_id = $1`,
          [merchant.id, plan.id, scheme],
        );
      }
    }
    // Each was charged once, a month ago.
    await sql.query(
      `INSERT INTO charge_attempts (id, created_at, updated_at, merchant_id, subscription_id,
         period, amount, mint, state)
       SELECT gen_random_uuid(), now() - interval '30 days', now() - interval '30 days',
              s.merchant_id, s.id, 1, 1000000, 'USDC', 'succeeded'
         FROM subscriptions s`,
    );
    // The statistics as the last ANALYZE saw them: nothing due; then the wave falls due, and a
    // run is under way: some of it claimed already.
    await sql.query('VACUUM ANALYZE customers, plans, subscriptions, charge_attempts');
    await sql.query(`UPDATE subscriptions SET current_period_end = now() - interval '1 minute'`);
    await sql.query(
      `INSERT INTO charge_attempts (id, created_at, updated_at, merchant_id, subscription_id,
         period, amount, mint, state, lease_until, lease_owner, wallet)
       SELECT gen_random_uuid(), now(), now(), s.merchant_id, s.id, 2, 1000000, 'USDC',
              'pending', now() + interval '30 seconds', 'another', s.wallet
         FROM subscriptions s WHERE s.scheme = 'token-delegate'
        ORDER BY s.current_period_end, s.id LIMIT $1`,
      [IN_FLIGHT],
    );
  });

  afterAll(async () => {
    await sql.end();
    await db.drop();
  });

  /**
   * The claim's plan as it ran (`EXPLAIN ANALYZE`, rolled back): its scans of `subscriptions`.
   * The generic plan, as the service runs it (`claimDueRows`: `genericPlans`), prepared as the
   * service prepares it, and executed with the values given.
   */
  async function subscriptionScans(
    statement: typeof claimDueAll | typeof claimDueOneAtATime,
    params: Record<string, unknown>,
  ): Promise<{ claimed: number; scans: PlanNode[]; nodes: PlanNode[] }> {
    await sql.query('BEGIN');
    await sql.query('SET LOCAL plan_cache_mode = force_generic_plan');
    try {
      let plan: PlanNode | undefined;
      await (statement as typeof claimDueAll).run(params as never, {
        query: async (text: string, values: unknown[]) => {
          await sql.query(`PREPARE claim AS ${text}`);
          // EXECUTE's arguments are expressions of the statement (not bound): literals.
          const literal = (value: unknown): string =>
            sql.escapeLiteral(
              value instanceof Date
                ? value.toISOString()
                : Array.isArray(value)
                  ? `{${value.map((v) => JSON.stringify(String(v))).join(',')}}`
                  : String(value),
            );
          const result = await sql.query(
            `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE claim(${values.map(literal).join(', ')})`,
          );
          plan = (result.rows[0] as { 'QUERY PLAN': { Plan: PlanNode }[] })['QUERY PLAN'][0].Plan;
          return { rows: [], rowCount: 0 };
        },
      });
      const nodes = planNodes(plan!);
      const insert = nodes.find((n) => n['Node Type'] === 'ModifyTable');
      return {
        claimed: insert?.['Actual Rows'] ?? 0,
        scans: nodes.filter((n) => n['Relation Name'] === 'subscriptions'),
        nodes,
      };
    } finally {
      await sql.query('ROLLBACK');
      await sql.query('DEALLOCATE ALL');
    }
  }

  /** From the front of what is due (`DueWalk`'s start). */
  const front = { afterDue: '-infinity', afterId: '00000000-0000-0000-0000-000000000000' };
  const claimParams = { now: new Date(), leaseSeconds: 30, owner: 'plan-test', ...front };

  it('under the token-delegate scheme (one per wallet) reads a few times what it claims, not every due subscription', async () => {
    const { claimed, scans } = await subscriptionScans(claimDueOneAtATime, {
      ...claimParams,
      busy: [],
      candidateLimit: LIMIT * 4,
      limit: LIMIT,
    });
    expect(claimed).toBe(LIMIT);
    // The generic plan (made without the values: they are parameters in it).
    const walkCondition = scans.find((n) => n['Index Name'] === 'subscriptions_due_idx')?.[
      'Index Cond' as keyof PlanNode
    ];
    expect(walkCondition).toContain('$1');
    // The due walk reads at most the candidates it looks at (4 x the limit); each other scan of
    // `subscriptions` is a look-up of one claimed row or of its wallet's siblings.
    const read = scans.reduce((sum, n) => sum + n['Actual Rows'] * n['Actual Loops'], 0);
    expect(read).toBeLessThan(WALLETS);
    // The walk reads the candidates it looks at (4 x the limit), and those it passes because
    // a charge under way holds their wallet's turn (150 wallets of 400 here).
    const walk = scans.find((n) => n['Index Name'] === 'subscriptions_due_idx');
    expect(walk?.['Actual Rows']).toBeGreaterThanOrEqual(LIMIT * 4);
    expect(walk?.['Actual Rows']).toBeLessThan(LIMIT * 4 * 2);
  });

  it('walks on from where the last claim stopped, not past the charges under way again', async () => {
    const params = { ...claimParams, busy: [], candidateLimit: LIMIT * 4, limit: LIMIT };
    const dueWalk = (scans: PlanNode[]) =>
      scans.find((n) => n['Index Name'] === 'subscriptions_due_idx');
    // From the front, the walk reads every charge under way (they sit there until they settle).
    const fromFront = dueWalk((await subscriptionScans(claimDueOneAtATime, params)).scans);
    expect(fromFront?.['Rows Removed by Filter']).toBe(IN_FLIGHT);
    // The last claim stopped after them: the next reads none of them.
    const {
      rows: [last],
    } = await sql.query<{ due: string; id: string }>(
      `SELECT current_period_end::text AS due, id FROM subscriptions
        WHERE scheme = 'token-delegate' ORDER BY current_period_end, id OFFSET $1 LIMIT 1`,
      [IN_FLIGHT - 1],
    );
    const { claimed, scans } = await subscriptionScans(claimDueOneAtATime, {
      ...params,
      afterDue: last.due,
      afterId: last.id,
    });
    expect(claimed).toBe(LIMIT);
    expect(dueWalk(scans)?.['Rows Removed by Filter'] ?? 0).toBe(0);
    expect(dueWalk(scans)?.['Actual Rows']).toBeLessThan(LIMIT * 4 * 2);
  });

  it("reads each claimed attempt's wallet reservation from its wallet's approval row and the wallet's charges in flight by one probe of its turn, not the wallet's subscriptions nor its customers", async () => {
    const { claimed, nodes } = await subscriptionScans(claimDueOneAtATime, {
      ...claimParams,
      busy: [],
      candidateLimit: LIMIT * 4,
      limit: LIMIT,
    });
    expect(claimed).toBe(LIMIT);
    // The totals kept with the wallet's approval: one row by its key a claimed attempt, where
    // the claim read each of the wallet's subscriptions in the mint (10 here, 20 a charge in
    // `npm run bench:engine`) from the wallet index.
    const approval = nodes.filter((n) => n['Relation Name'] === 'wallet_approval_versions');
    expect(approval.map((n) => [n['Index Name'], n['Actual Loops']])).toEqual([
      ['wallet_approval_versions_pkey', LIMIT],
    ]);
    expect(approval[0]['Actual Rows']).toBe(1);
    expect(nodes.filter((n) => n['Index Name'] === 'subscriptions_wallet_idx')).toEqual([]);
    // The wallet's charges in flight: one probe of the turn index a claimed attempt (only an
    // open attempt holds its wallet's turn, and every try recorded holds it), not a look-up of
    // each sibling's attempt by its key (20 a charge in \`npm run bench:engine\`), and never the
    // partial index of the open attempts (every attempt under way read again, as the planner
    // chose here while the statistics saw none open).
    const inFlight = nodes.filter(
      (n) => n['Relation Name'] === 'charge_attempts' && n['Actual Loops'] === LIMIT,
    );
    expect(inFlight.map((n) => n['Index Name'])).toEqual(['charge_attempts_open_wallet_idx']);
    const reads = nodes.filter(
      (n) => n['Relation Name'] === 'charge_attempts' && n['Node Type'] !== 'ModifyTable',
    );
    expect(reads.filter((n) => n['Actual Loops'] === LIMIT * PLANS)).toEqual([]);
    expect(nodes.filter((n) => n['Index Name'] === 'charge_attempts_open_idx')).toEqual([]);
    // The wallet's customers are not read for it: customers only by the claimed rows' keys.
    const customers = nodes.filter((n) => n['Relation Name'] === 'customers');
    expect(customers.map((n) => [n['Index Name'], n['Actual Loops']])).toEqual([
      ['customers_pkey', LIMIT],
    ]);
  });

  it('passes the wallets whose turn a charge under way holds with one probe of the turn index a candidate, not every open attempt again', async () => {
    const { claimed, nodes } = await subscriptionScans(claimDueOneAtATime, {
      ...claimParams,
      busy: [],
      candidateLimit: LIMIT * 4,
      limit: LIMIT,
    });
    expect(claimed).toBe(LIMIT);
    // The statistics saw no attempt open: with the open states in the probe, the planner read
    // all 150 under way for each candidate through the partial index of open attempts and
    // matched the wallet after (1 536 rows a claim of 8 in \`npm run bench:engine\`).
    const walk = nodes.find((n) => n['Index Name'] === 'subscriptions_due_idx')!;
    // (The other probe of the turn index is the reservation's, one a claimed attempt.)
    const probes = nodes.filter(
      (n) => n['Index Name'] === 'charge_attempts_open_wallet_idx' && n['Actual Loops'] !== LIMIT,
    );
    expect(probes).toHaveLength(1);
    expect(probes[0]['Actual Loops']).toBe(walk['Actual Rows']);
    expect(probes[0]['Actual Rows']).toBeLessThanOrEqual(1);
    expect(nodes.filter((n) => n['Index Name'] === 'charge_attempts_open_idx')).toEqual([]);
    // No other read of charge_attempts reads past a row per loop.
    const reads = nodes.filter(
      (n) => n['Relation Name'] === 'charge_attempts' && n['Node Type'] !== 'ModifyTable',
    );
    for (const n of reads) expect(n['Actual Rows']).toBeLessThanOrEqual(1);
  });

  it('under the Subscriptions program reads what it claims', async () => {
    const { claimed, scans } = await subscriptionScans(claimDueAll, {
      ...claimParams,
      limit: LIMIT,
    });
    expect(claimed).toBe(LIMIT);
    const read = scans.reduce((sum, n) => sum + n['Actual Rows'] * n['Actual Loops'], 0);
    expect(read).toBeLessThanOrEqual(LIMIT * 2);
  });

  it('runs on its generic plan: the statements of a claim in a transaction that asks for it, and only there', async () => {
    let asked: TransactionOptions | undefined;
    const db = {
      transaction: async (work: (tx: SqlTx) => Promise<unknown>, options?: TransactionOptions) => {
        asked = options;
        await sql.query('BEGIN');
        try {
          return await work({
            query: async (text: string, values: unknown[]) => {
              const { rows, rowCount } = await sql.query(text, values);
              return { rows, rowCount: rowCount ?? 0 };
            },
          } as unknown as SqlTx);
        } finally {
          await sql.query('ROLLBACK');
        }
      },
    } as unknown as Db;
    const claimed = await claimDueRows(db, {
      now: new Date(),
      limit: LIMIT,
      oneAtATime: true,
      busy: [],
      leaseSeconds: 30,
      owner: 'plan-test',
    });
    expect(claimed).toHaveLength(LIMIT);
    expect(asked).toEqual({ genericPlans: true });
    // What that asks of PostgreSQL: generic plans for the transaction, and back to the default
    // after it (also after a rollback).
    const session = new PgSession(sql, (error) => error);
    const show = async (tx: SqlTx) =>
      ((await tx.query('SHOW plan_cache_mode', [])).rows[0] as { plan_cache_mode: string })
        .plan_cache_mode;
    expect(await session.transaction(show, { genericPlans: true })).toBe('force_generic_plan');
    expect(await session.transaction(show)).toBe('auto');
    await expect(
      session.transaction(
        async (tx) => {
          expect(await show(tx)).toBe('force_generic_plan');
          throw new Error('rolled back');
        },
        { genericPlans: true },
      ),
    ).rejects.toThrow('rolled back');
    expect((await sql.query('SHOW plan_cache_mode')).rows).toEqual([{ plan_cache_mode: 'auto' }]);
    // The setting refused after its BEGIN: the connection goes back rolled back, not in a
    // transaction (each statement after would have run inside it, never committed).
    const refusing = new Proxy(sql, {
      get(target, property) {
        if (property === 'query') {
          return async (text: unknown, ...rest: unknown[]) => {
            if (typeof text === 'string' && text.includes('plan_cache_mode')) {
              await target.query('BEGIN');
              throw new Error('the setting was refused');
            }
            return (target.query as (...args: unknown[]) => unknown)(text, ...rest);
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
      },
    });
    const work = jest.fn(show);
    await expect(
      new PgSession(refusing, (error) => error).transaction(work, { genericPlans: true }),
    ).rejects.toThrow('the setting was refused');
    expect(work).not.toHaveBeenCalled();
    const { rows } = await sql.query<{ own: boolean }>(
      `SELECT xact_start = query_start AS own FROM pg_stat_activity WHERE pid = pg_backend_pid()`,
    );
    expect(rows).toEqual([{ own: true }]);
  });
});
