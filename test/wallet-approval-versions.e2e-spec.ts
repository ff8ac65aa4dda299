import { Client } from 'pg';
import { randomWallet } from './helpers/test-app';
import { type MerchantDatabase, merchantDatabase } from './helpers/merchant-database';

/**
 * `wallet_approval_versions` (Migration20261205010000): a version per wallet and mint of what a
 * token-delegate charge's reservation reads, moved by triggers at the commit of every change to
 * it. A charge is recorded only while the version it was judged under is still the wallet's
 * (`recordTries`), so a change that does not move it could let a charge through on a stale
 * reservation, and a lock it takes at the wrong moment could deadlock a settlement.
 */
describe("a wallet's approval version", () => {
  let fixture: MerchantDatabase;
  let sql: Client;
  let merchant: string;

  beforeAll(async () => {
    fixture = await merchantDatabase();
    ({ sql, merchant } = fixture);
  });

  afterAll(() => fixture.close());

  /** A customer at a wallet of its own, and the version of that wallet's approval in USDC. */
  async function customer() {
    const wallet = randomWallet();
    const { rows } = await sql.query<{ id: string }>(
      `INSERT INTO customers (id, merchant_id, wallet_address, created_at, updated_at)
       VALUES (gen_random_uuid(), $1, $2, now(), now()) RETURNING id`,
      [merchant, wallet],
    );
    const version = async () =>
      (
        await sql.query<{ version: string }>(
          `SELECT COALESCE((SELECT version FROM wallet_approval_versions
                             WHERE wallet = $1 AND mint = 'USDC'), 0)::text AS version`,
          [wallet],
        )
      ).rows[0].version;
    /** The totals kept with the wallet's approval, and the same computed from its subscriptions. */
    const totals = async () =>
      (
        await sql.query<{ kept: string; computed: string }>(
          `SELECT COALESCE((SELECT need::text || '/' || live FROM wallet_approval_versions
                             WHERE wallet = $1 AND mint = 'USDC'), '0/0') AS kept,
                  (SELECT COALESCE(SUM(GREATEST(authorized_amount - charged_amount, 0)), 0)::text
                          || '/' || count(*)
                     FROM subscriptions
                    WHERE wallet = $1 AND mint = 'USDC' AND scheme = 'token-delegate'
                      AND status IN ('Active', 'PastDue') AND revoked_at IS NULL) AS computed`,
          [wallet],
        )
      ).rows[0];
    return { id: rows[0].id, wallet, version, totals };
  }

  /** A subscription of `customerId` to a plan of its own, under `scheme`, written by `client`. */
  async function subscribe(customerId: string, scheme: string, client = sql): Promise<string> {
    const { rows } = await client.query<{ id: string }>(
      `WITH p AS (
         INSERT INTO plans (id, merchant_id, label, mint, amount, interval_seconds, active,
           onchain_plan_id, created_at, updated_at)
         VALUES (gen_random_uuid(), $1, 'p', 'USDC', 1000000, 2592000, true, left(md5(random()::text), 16),
                 now(), now())
         RETURNING id)
       INSERT INTO subscriptions (id, merchant_id, plan_id, customer_id, status,
         current_period_end, onchain_address, authorized_amount, charged_amount,
         periods_charged, created_at, updated_at, scheme)
       SELECT gen_random_uuid(), $1, p.id, $2, 'Active', now(), 'x', 12000000, 0, 0, now(), now(), $3
         FROM p RETURNING id`,
      [merchant, customerId, scheme],
    );
    return rows[0].id;
  }

  /** An attempt of `subscriptionId` for `period`, as given (`signature` null: nothing sent). */
  async function attempt(
    subscriptionId: string,
    state: string,
    signature: string | null,
    period = 1,
  ) {
    const { rows } = await sql.query<{ id: string }>(
      `INSERT INTO charge_attempts (id, created_at, updated_at, merchant_id, subscription_id,
         period, amount, mint, state, signature, lease_until, lease_owner)
       VALUES (gen_random_uuid(), now(), now(), $1, $2, $5, 1000000, 'USDC', $3, $4,
               now() + interval '1 minute', 'A') RETURNING id`,
      [merchant, subscriptionId, state, signature, period],
    );
    return rows[0].id;
  }

  const signature = (c: string) => c.repeat(87);

  it("moves once with each change a charge's reservation reads, and with nothing else; its totals are the subscriptions' after each", async () => {
    const { id, version, totals } = await customer();
    expect(await version()).toBe('0');
    const delegated = await subscribe(id, 'token-delegate');
    expect(await version()).toBe('1');
    const program = await subscribe(id, 'program');
    expect(await version()).toBe('1');
    let expected = 1;
    const step = async (what: string, statement: string, params: unknown[], moves: boolean) => {
      await sql.query(statement, params);
      if (moves) expected++;
      expect([what, await version()]).toEqual([what, String(expected)]);
      const { kept, computed } = await totals();
      expect([what, kept]).toEqual([what, computed]);
    };
    // What the reservation reads of a token-delegate subscription.
    const s = 'UPDATE subscriptions SET';
    await step('charged', `${s} charged_amount = 1000000 WHERE id = $1`, [delegated], true);
    await step('period', `${s} periods_charged = 1 WHERE id = $1`, [delegated], true);
    await step('re-authorised', `${s} authorized_amount = 2 WHERE id = $1`, [delegated], true);
    await step('revoked', `${s} revoked_at = now() WHERE id = $1`, [delegated], true);
    await step('status', `${s} status = 'PastDue' WHERE id = $1`, [delegated], true);
    await step(
      'age',
      `${s} created_at = created_at - interval '1 day' WHERE id = $1`,
      [delegated],
      true,
    );
    // What it does not read, and a program subscription.
    const later = "updated_at = now() + interval '1 minute'";
    await step('updated_at', `${s} ${later} WHERE id = $1`, [delegated], false);
    await step('due', `${s} current_period_end = now() WHERE id = $1`, [delegated], false);
    await step('program', `${s} charged_amount = 5 WHERE id = $1`, [program], false);
    // Its charges: in flight (recorded, or re-armed with its bytes kept), amount while in
    // flight, and settled; not claimed, nor its lease renewed, nor its amount while unsent.
    const a = await attempt(delegated, 'pending', null);
    expect(await version()).toBe(String(expected));
    const u = 'UPDATE charge_attempts SET';
    const steps: [string, string, boolean][] = [
      ['recorded', `${u} state = 'sent', signature = '${signature('7')}' WHERE id = $1`, true],
      ['lease', `${u} lease_until = now() + interval '2 minutes' WHERE id = $1`, false],
      ['amount', `${u} amount = 1000001 WHERE id = $1`, true],
      ['expired', `${u} state = 'pending', signature = NULL WHERE id = $1`, true],
      ['amount unsent', `${u} amount = 1000002 WHERE id = $1`, false],
      ['failed', `${u} state = 'failed' WHERE id = $1`, false],
      ['re-armed', `${u} state = 'pending', signature = '${signature('8')}' WHERE id = $1`, true],
      ['settled', `${u} state = 'succeeded' WHERE id = $1`, true],
    ];
    for (const [what, statement, moves] of steps) await step(what, statement, [a], moves);
    // Written in flight, and deleted in flight: each one more.
    const inFlight = await attempt(delegated, 'sent', signature('9'), 2);
    expect(await version()).toBe(String(++expected));
    await step('deleted', 'DELETE FROM charge_attempts WHERE id = $1', [inFlight], true);
    // A program subscription's charges move nothing.
    await attempt(program, 'sent', signature('6'));
    expect(await version()).toBe(String(expected));
    // Rolled back with the change.
    await sql.query('BEGIN');
    await sql.query(`${s} charged_amount = 7 WHERE id = $1`, [delegated]);
    await sql.query('ROLLBACK');
    expect(await version()).toBe(String(expected));
    // Moved to the program: one more; deleted as a program subscription: none.
    await step('moved', `${s} scheme = 'program' WHERE id = $1`, [delegated], true);
    await step('program deleted', 'DELETE FROM subscriptions WHERE id = $1', [program], false);
  });

  it('keeps what the live ones need and how many they are through every change of a subscription, whatever writes it', async () => {
    const { id, totals } = await customer();
    const delegated = await subscribe(id, 'token-delegate');
    const other = await subscribe(id, 'token-delegate');
    const program = await subscribe(id, 'program');
    // Two live, each needing 12 USDC.
    expect(await totals()).toEqual({ kept: '24000000/2', computed: '24000000/2' });
    const s = 'UPDATE subscriptions SET';
    const steps: [string, string, string, string][] = [
      ['charged', `${s} charged_amount = 1000000 WHERE id = $1`, delegated, '23000000/2'],
      ['re-authorised', `${s} authorized_amount = 30000000 WHERE id = $1`, delegated, '41000000/2'],
      // Charged past its share (a share lowered below what it was charged): it needs nothing.
      ['over', `${s} authorized_amount = 500000 WHERE id = $1`, delegated, '12000000/2'],
      ['back', `${s} authorized_amount = 12000000 WHERE id = $1`, delegated, '23000000/2'],
      ['past due', `${s} status = 'PastDue' WHERE id = $1`, delegated, '23000000/2'],
      ['completed', `${s} status = 'Completed' WHERE id = $1`, delegated, '12000000/1'],
      ['active again', `${s} status = 'Active' WHERE id = $1`, delegated, '23000000/2'],
      ['revoked', `${s} revoked_at = now() WHERE id = $1`, other, '11000000/1'],
      ['revoked, charged', `${s} charged_amount = 2000000 WHERE id = $1`, other, '11000000/1'],
      ['moved', `${s} scheme = 'program' WHERE id = $1`, delegated, '0/0'],
      ['moved back', `${s} scheme = 'token-delegate' WHERE id = $1`, delegated, '11000000/1'],
      ['to delegate', `${s} scheme = 'token-delegate' WHERE id = $1`, program, '23000000/2'],
      ['cancelled', `${s} status = 'Cancelled' WHERE id = $1`, program, '11000000/1'],
      ['deleted', 'DELETE FROM subscriptions WHERE id = $1', delegated, '0/0'],
    ];
    for (const [what, statement, subscription, expected] of steps) {
      await sql.query(statement, [subscription]);
      expect([what, await totals()]).toEqual([what, { kept: expected, computed: expected }]);
    }
    // Two changes of one row in one transaction, and one rolled back.
    const {
      rows: [added],
    } = await sql.query<{ id: string }>(
      `INSERT INTO subscriptions (id, merchant_id, plan_id, customer_id, status,
         current_period_end, onchain_address, authorized_amount, charged_amount, periods_charged,
         created_at, updated_at, scheme)
       SELECT gen_random_uuid(), merchant_id, plan_id, customer_id, 'Active', now(), 'x',
              5000000, 0, 0, now(), now(), 'token-delegate'
         FROM subscriptions WHERE id = $1 RETURNING id`,
      [program],
    );
    expect(await totals()).toEqual({ kept: '5000000/1', computed: '5000000/1' });
    await sql.query('BEGIN');
    await sql.query(`${s} charged_amount = 1000000 WHERE id = $1`, [added.id]);
    await sql.query(`${s} status = 'PastDue', charged_amount = 3000000 WHERE id = $1`, [added.id]);
    await sql.query('COMMIT');
    await sql.query('BEGIN');
    await sql.query(`${s} authorized_amount = 99000000 WHERE id = $1`, [added.id]);
    await sql.query('ROLLBACK');
    expect(await totals()).toEqual({ kept: '2000000/1', computed: '2000000/1' });
  });

  it('keeps the totals of two transactions that change the same wallet at once', async () => {
    const { id, totals } = await customer();
    const [a, b] = await Promise.all([
      subscribe(id, 'token-delegate'),
      subscribe(id, 'token-delegate'),
    ]);
    const [x, y] = [
      new Client({ connectionString: fixture.url }),
      new Client({ connectionString: fixture.url }),
    ];
    await Promise.all([x.connect(), y.connect()]);
    try {
      await x.query('BEGIN');
      await y.query('BEGIN');
      await x.query('UPDATE subscriptions SET charged_amount = 4000000 WHERE id = $1', [a]);
      await y.query(`UPDATE subscriptions SET status = 'Cancelled' WHERE id = $1`, [b]);
      await subscribe(id, 'token-delegate', y);
      // Both move the wallet's row at their commit, each its own rows' change.
      await Promise.all([x.query('COMMIT'), y.query('COMMIT')]);
      expect(await totals()).toEqual({ kept: '20000000/2', computed: '20000000/2' });
    } finally {
      await Promise.all([x.end(), y.end()]);
    }
  });

  it('moves when a token-delegate subscription with a charge in flight is deleted with it', async () => {
    const { id, version } = await customer();
    const delegated = await subscribe(id, 'token-delegate');
    await attempt(delegated, 'sent', signature('5'));
    expect(await version()).toBe('2');
    // Its attempt goes with it (a cascade): the subscription's delete moves the version, and
    // so does the attempt's, by the wallet whose turn it held.
    await sql.query('DELETE FROM subscriptions WHERE id = $1', [delegated]);
    expect(await version()).toBe('4');
  });

  it('moves with a try in flight whose turn moves: its subscription left the token-delegate scheme and the try was resumed without a wallet, then back', async () => {
    const { id, wallet, version } = await customer();
    const delegated = await subscribe(id, 'token-delegate');
    const a = await attempt(delegated, 'sent', signature('3'));
    const turn = async () =>
      (
        await sql.query<{ wallet: string | null }>(
          'SELECT wallet FROM charge_attempts WHERE id = $1',
          [a],
        )
      ).rows[0].wallet;
    expect(await turn()).toBe(wallet);
    let expected = Number(await version());
    const step = async (what: string, statement: string, params: unknown[]) => {
      await sql.query(statement, params);
      expect([what, await version()]).toEqual([what, String(++expected)]);
    };
    await step('moved', `UPDATE subscriptions SET scheme = 'program' WHERE id = $1`, [delegated]);
    // As \`resumeStale\` writes it: no wallet's turn under the program. The wallet's reservation
    // no longer finds it in flight.
    await step('turn left', 'UPDATE charge_attempts SET wallet = NULL WHERE id = $1', [a]);
    expect(await turn()).toBeNull();
    await step('back', `UPDATE subscriptions SET scheme = 'token-delegate' WHERE id = $1`, [
      delegated,
    ]);
    await step('turn again', 'UPDATE charge_attempts SET wallet = $2 WHERE id = $1', [a, wallet]);
  });

  it('starts at 1 for a wallet with none, whichever of two transactions commits first', async () => {
    const { id, version, totals } = await customer();
    const [a, b] = [
      new Client({ connectionString: fixture.url }),
      new Client({ connectionString: fixture.url }),
    ];
    await Promise.all([a.connect(), b.connect()]);
    try {
      await a.query('BEGIN');
      await b.query('BEGIN');
      await subscribe(id, 'token-delegate', a);
      await subscribe(id, 'token-delegate', b);
      // Both bump at their commit: the first inserts the wallet's row, the second finds it.
      await Promise.all([a.query('COMMIT'), b.query('COMMIT')]);
      expect(await version()).toBe('2');
      expect(await totals()).toEqual({ kept: '24000000/2', computed: '24000000/2' });
    } finally {
      await Promise.all([a.end(), b.end()]);
    }
  });

  it("moves at commit: a settlement (its attempt, then its subscription) and a customer's cancel of that subscription at the same moment both commit", async () => {
    const { id, version, totals } = await customer();
    const delegated = await subscribe(id, 'token-delegate');
    const a = await attempt(delegated, 'sent', signature('4'));
    const before = Number(await version());
    const [settle, cancel] = [
      new Client({ connectionString: fixture.url }),
      new Client({ connectionString: fixture.url }),
    ];
    await Promise.all([settle.connect(), cancel.connect()]);
    try {
      // The settlement's first statement: its attempt succeeded.
      await settle.query('BEGIN');
      await settle.query(`UPDATE charge_attempts SET state = 'succeeded' WHERE id = $1`, [a]);
      // The customer cancels: its subscription's row locked. Bumping the wallet's version at
      // the statement, it would wait for the settlement, which already holds that row, and the
      // settlement's next statement would wait for it: a deadlock.
      await cancel.query('BEGIN');
      await Promise.race([
        cancel.query(`UPDATE subscriptions SET status = 'Cancelled' WHERE id = $1`, [delegated]),
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error('the cancel waited for the settlement')), 5_000),
        ),
      ]);
      // The settlement's next statement: the subscription charged, once the cancel commits.
      const charged = settle.query(
        `UPDATE subscriptions SET charged_amount = charged_amount + 1000000 WHERE id = $1`,
        [delegated],
      );
      await cancel.query('COMMIT');
      await charged;
      await settle.query('COMMIT');
      expect(await version()).toBe(String(before + 3));
      // The same row changed by both, each its own share: cancelled, it needs nothing.
      expect(await totals()).toEqual({ kept: '0/0', computed: '0/0' });
    } finally {
      await Promise.all([settle.end(), cancel.end()]);
    }
  });
});
