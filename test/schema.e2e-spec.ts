import { MikroORM } from '@mikro-orm/postgresql';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { mikroOrmOptions } from '../src/database/mikro-orm.options';
import { MIGRATIONS } from '../src/database/migrations';
import { createTestDatabase } from './setup/test-database';

describe('Database schema', () => {
  it('the migrations produce exactly the schema the entities describe', async () => {
    const db = await createTestDatabase(); // migrated from scratch via the template
    const orm = await MikroORM.init(mikroOrmOptions(db.url));
    try {
      const diff = await orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false, safe: false });
      expect(diff.trim()).toBe('');
      const pending = await orm.getMigrator().getPendingMigrations();
      expect(pending).toEqual([]);
      // Storage settings, which the entities cannot express: the delivery queue's autovacuum
      // thresholds, both queues' free space per page (for their leases), and the approval
      // versions' (for their bumps).
      const options = async (table: string) => {
        const [row] = await orm.em
          .getConnection()
          .execute<{ reloptions: string[] }[]>(
            `SELECT reloptions FROM pg_class WHERE relname = ?`,
            [table],
          );
        return [...row.reloptions].sort();
      };
      expect(await options('webhook_deliveries')).toEqual([
        'autovacuum_analyze_scale_factor=0.01',
        'autovacuum_analyze_threshold=200',
        'autovacuum_vacuum_scale_factor=0.02',
        'fillfactor=80',
      ]);
      expect(await options('email_outbox')).toEqual(['fillfactor=80']);
      // A row updated with every charge of its wallet: room for the new versions on its page.
      expect(await options('wallet_approval_versions')).toEqual(['fillfactor=20']);
    } finally {
      await orm.close(true);
      await db.drop();
    }
  });

  it('an install with two merchant accounts at one wallet is stopped by the upgrade with what to do, and upgrades once that is put right', async () => {
    const db = await createTestDatabase();
    const orm = await MikroORM.init(mikroOrmOptions(db.url));
    try {
      const migrator = orm.getMigrator();
      await migrator.down({ to: 'Migration20261125220000' });
      const sql = orm.em.getConnection();
      const merchant = (name: string, wallet: string) =>
        sql.execute(
          `INSERT INTO merchants (id, created_at, updated_at, name, wallet_address, webhook_secret)
           VALUES (gen_random_uuid(), now(), now(), ?, ?, 'whsec_x')`,
          [name, wallet],
        );
      const wallet = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
      await merchant('Acme', wallet);
      await merchant('Acme again', wallet);
      await expect(migrator.up()).rejects.toThrow(
        `Several merchant accounts receive at wallet ${wallet}: one wallet belongs to one merchant account now`,
      );
      await sql.execute(`UPDATE merchants SET wallet_address = ? WHERE name = 'Acme again'`, [
        '4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T',
      ]);
      await migrator.up();
      expect(await migrator.getPendingMigrations()).toEqual([]);
      await expect(merchant('Acme third', wallet)).rejects.toThrow(
        /merchants_wallet_address_unique/,
      );
    } finally {
      await orm.close(true);
      await db.drop();
    }
  });

  it("the upgrade gives the wallet's turn to the token-delegate attempts whose try may still land, and to no other", async () => {
    const db = await createTestDatabase();
    const orm = await MikroORM.init(mikroOrmOptions(db.url));
    try {
      const migrator = orm.getMigrator();
      await migrator.down({ to: 'Migration20261201010000' });
      const sql = orm.em.getConnection();
      const wallet = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
      const [{ id: merchant }] = await sql.execute<{ id: string }[]>(
        `INSERT INTO merchants (id, created_at, updated_at, name, wallet_address, webhook_secret)
         VALUES (gen_random_uuid(), now(), now(), 'Acme', ?, 'whsec_x') RETURNING id`,
        ['4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T'],
      );
      const [{ id: customer }] = await sql.execute<{ id: string }[]>(
        `INSERT INTO customers (id, merchant_id, wallet_address, created_at, updated_at)
         VALUES (gen_random_uuid(), ?, ?, now(), now()) RETURNING id`,
        [merchant, wallet],
      );
      // One subscription per attempt (a plan each), under the scheme given.
      const attempt = async (
        label: string,
        scheme: string,
        state: string,
        signature: string | null,
      ) => {
        const [{ id: plan }] = await sql.execute<{ id: string }[]>(
          `INSERT INTO plans (id, merchant_id, label, mint, amount, interval_seconds, active,
             onchain_plan_id, created_at, updated_at)
           VALUES (gen_random_uuid(), ?, ?, 'USDC', 1000000, 2592000, true, ?, now(), now())
           RETURNING id`,
          [merchant, label, label],
        );
        await sql.execute(
          `WITH s AS (
             INSERT INTO subscriptions (id, merchant_id, plan_id, customer_id, status,
               current_period_end, onchain_address, authorized_amount, charged_amount,
               periods_charged, created_at, updated_at, scheme)
             VALUES (gen_random_uuid(), ?, ?, ?, 'Active', now(), ?, 12000000, 0, 0, now(), now(), ?)
             RETURNING id)
           INSERT INTO charge_attempts (id, created_at, updated_at, merchant_id, subscription_id,
             period, amount, mint, state, signature, lease_until, lease_owner)
           SELECT gen_random_uuid(), now(), now(), ?, s.id, 1, 1000000, 'USDC', ?, ?,
                  now() + interval '5 minutes', 'old-build' FROM s`,
          [merchant, plan, customer, wallet, scheme, merchant, state, signature],
        );
      };
      await attempt('sent', 'token-delegate', 'sent', '7'.repeat(87));
      await attempt('put off', 'token-delegate', 'pending', null);
      await attempt('settled', 'token-delegate', 'succeeded', '8'.repeat(87));
      await attempt('program', 'program', 'sent', '9'.repeat(87));
      await migrator.up();
      const turns = await sql.execute<{ label: string; wallet: string | null }[]>(
        `SELECT p.label, a.wallet FROM charge_attempts a
           JOIN subscriptions s ON s.id = a.subscription_id JOIN plans p ON p.id = s.plan_id
          ORDER BY p.label`,
      );
      expect(turns).toEqual([
        { label: 'program', wallet: null },
        { label: 'put off', wallet: null },
        { label: 'sent', wallet },
        { label: 'settled', wallet: null },
      ]);
    } finally {
      await orm.close(true);
      await db.drop();
    }
  });

  it("only an open attempt holds its wallet's turn: the upgrade clears the ended ones' wallets, an attempt that ends loses its wallet whatever the statement says, and a check refuses an ended attempt with one", async () => {
    const db = await createTestDatabase();
    const orm = await MikroORM.init(mikroOrmOptions(db.url));
    try {
      const migrator = orm.getMigrator();
      await migrator.down({ to: 'Migration20261203010000' });
      const sql = orm.em.getConnection();
      const wallet = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
      const [{ id: merchant }] = await sql.execute<{ id: string }[]>(
        `INSERT INTO merchants (id, created_at, updated_at, name, wallet_address, webhook_secret)
         VALUES (gen_random_uuid(), now(), now(), 'Acme', ?, 'whsec_x') RETURNING id`,
        ['4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T'],
      );
      const [{ id: customer }] = await sql.execute<{ id: string }[]>(
        `INSERT INTO customers (id, merchant_id, wallet_address, created_at, updated_at)
         VALUES (gen_random_uuid(), ?, ?, now(), now()) RETURNING id`,
        [merchant, wallet],
      );
      // One token-delegate subscription per attempt (a plan each), its attempt holding the
      // wallet as the build before left it.
      const attempt = async (label: string, state: string) => {
        const [{ id: plan }] = await sql.execute<{ id: string }[]>(
          `INSERT INTO plans (id, merchant_id, label, mint, amount, interval_seconds, active,
             onchain_plan_id, created_at, updated_at)
           VALUES (gen_random_uuid(), ?, ?, 'USDC', 1000000, 2592000, true, ?, now(), now())
           RETURNING id`,
          [merchant, label, label],
        );
        const [{ id }] = await sql.execute<{ id: string }[]>(
          `WITH s AS (
             INSERT INTO subscriptions (id, merchant_id, plan_id, customer_id, status,
               current_period_end, onchain_address, authorized_amount, charged_amount,
               periods_charged, created_at, updated_at, scheme)
             VALUES (gen_random_uuid(), ?, ?, ?, 'Active', now(), ?, 12000000, 0, 0, now(), now(),
                     'token-delegate')
             RETURNING id)
           INSERT INTO charge_attempts (id, created_at, updated_at, merchant_id, subscription_id,
             period, amount, mint, state, wallet, lease_until, lease_owner)
           SELECT gen_random_uuid(), now(), now(), ?, s.id, 1, 1000000, 'USDC', ?, ?,
                  now() + interval '5 minutes', 'old-build' FROM s RETURNING id`,
          [merchant, plan, customer, wallet, merchant, state, wallet],
        );
        return id;
      };
      const open = await attempt('sent', 'sent');
      const pending = await attempt('pending', 'pending');
      await attempt('succeeded', 'succeeded');
      await attempt('failed', 'failed');
      await attempt('abandoned', 'abandoned');
      await migrator.up();
      const turns = async () =>
        sql.execute<{ label: string; wallet: string | null }[]>(
          `SELECT p.label, a.wallet FROM charge_attempts a
             JOIN subscriptions s ON s.id = a.subscription_id JOIN plans p ON p.id = s.plan_id
            ORDER BY p.label`,
        );
      expect(await turns()).toEqual([
        { label: 'abandoned', wallet: null },
        { label: 'failed', wallet: null },
        { label: 'pending', wallet },
        { label: 'sent', wallet },
        { label: 'succeeded', wallet: null },
      ]);
      // Ending an attempt ends its turn, whether the statement names the wallet or not.
      await sql.execute(`UPDATE charge_attempts SET state = 'succeeded' WHERE id = ?`, [open]);
      await sql.execute(`UPDATE charge_attempts SET state = 'failed', wallet = ? WHERE id = ?`, [
        wallet,
        pending,
      ]);
      expect((await turns()).filter((t) => t.wallet !== null)).toEqual([]);
      // Put off, it is open again: it may hold the turn again.
      await sql.execute(`UPDATE charge_attempts SET state = 'pending', wallet = ? WHERE id = ?`, [
        wallet,
        pending,
      ]);
      expect((await turns()).filter((t) => t.wallet !== null)).toEqual([
        { label: 'pending', wallet },
      ]);
      // Written ended with a wallet (no statement of the service does): it holds none.
      await sql.execute(
        `INSERT INTO charge_attempts (id, created_at, updated_at, merchant_id, subscription_id,
           period, amount, mint, state, wallet)
         SELECT gen_random_uuid(), now(), now(), merchant_id, subscription_id, 2, 1000000, 'USDC',
                'succeeded', ?
           FROM charge_attempts WHERE id = ?`,
        [wallet, open],
      );
      expect((await turns()).filter((t) => t.wallet !== null)).toEqual([
        { label: 'pending', wallet },
      ]);
      // The check holds it without the trigger.
      await sql.execute(`ALTER TABLE charge_attempts DISABLE TRIGGER charge_attempts_turn_ends`);
      await expect(
        sql.execute(`UPDATE charge_attempts SET state = 'abandoned' WHERE id = ?`, [pending]),
      ).rejects.toMatchObject({ code: '23514' });
    } finally {
      await orm.close(true);
      await db.drop();
    }
  });

  it("a subscription carries its customer's wallet and its plan's mint: filled by the upgrade, written on insert from the customer and the plan whatever a statement says, never changed by an update; a customer's wallet and a plan's mint never change", async () => {
    const db = await createTestDatabase();
    const orm = await MikroORM.init(mikroOrmOptions(db.url));
    try {
      const migrator = orm.getMigrator();
      await migrator.down({ to: 'Migration20261202020000' });
      const sql = orm.em.getConnection();
      const [{ id: merchant }] = await sql.execute<{ id: string }[]>(
        `INSERT INTO merchants (id, created_at, updated_at, name, wallet_address, webhook_secret)
         VALUES (gen_random_uuid(), now(), now(), 'Acme', ?, 'whsec_x') RETURNING id`,
        ['4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T'],
      );
      const customer = async (wallet: string) => {
        const [{ id }] = await sql.execute<{ id: string }[]>(
          `INSERT INTO customers (id, merchant_id, wallet_address, created_at, updated_at)
           VALUES (gen_random_uuid(), ?, ?, now(), now()) RETURNING id`,
          [merchant, wallet],
        );
        return id;
      };
      const plan = async (label: string, mint: string) => {
        const [{ id }] = await sql.execute<{ id: string }[]>(
          `INSERT INTO plans (id, merchant_id, label, mint, amount, interval_seconds, active,
             onchain_plan_id, created_at, updated_at)
           VALUES (gen_random_uuid(), ?, ?, ?, 1000000, 2592000, true, ?, now(), now())
           RETURNING id`,
          [merchant, label, mint, label],
        );
        return id;
      };
      // As the build before inserts: no wallet, no mint.
      const subscribe = (planId: string, customerId: string) =>
        sql.execute(
          `INSERT INTO subscriptions (id, merchant_id, plan_id, customer_id, status,
             current_period_end, authorized_amount, created_at, updated_at, scheme)
           VALUES (gen_random_uuid(), ?, ?, ?, 'Active', now(), 12000000, now(), now(), 'token-delegate')`,
          [merchant, planId, customerId],
        );
      const alice = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
      const bob = '7Np41oeYqPefeNQEHSv1UDhYrehxin3NStELsSKCT4K2';
      await subscribe(await plan('before', 'PYUSD'), await customer(alice));
      await migrator.up();
      expect(await migrator.getPendingMigrations()).toEqual([]);
      const payers = () =>
        sql.execute<{ label: string; wallet: string; mint: string }[]>(
          `SELECT p.label, s.wallet, s.mint FROM subscriptions s JOIN plans p ON p.id = s.plan_id
            ORDER BY p.label`,
        );
      expect(await payers()).toEqual([{ label: 'before', wallet: alice, mint: 'PYUSD' }]);

      // A statement that does not name them (as the repository's, or an instance of the build
      // before during a rolling upgrade), and one that names others: the customer's and the
      // plan's, both times.
      const bobs = await customer(bob);
      await subscribe(await plan('after', 'USDG'), bobs);
      await sql.execute(
        `INSERT INTO subscriptions (id, merchant_id, plan_id, customer_id, status,
           current_period_end, authorized_amount, created_at, updated_at, scheme, wallet, mint)
         VALUES (gen_random_uuid(), ?, ?, ?, 'Active', now(), 12000000, now(), now(),
           'token-delegate', ?, 'USDC')`,
        [merchant, await plan('named', 'USDG'), bobs, alice],
      );
      await sql.execute(`UPDATE subscriptions SET wallet = ?, mint = 'USDC'`, [alice]);
      // Moved to another customer (no code does): the copy follows.
      const carol = '3yFwqXBfZY4jBVUafQ1YEXw189y2dN3V5KQq9uzBDy1E';
      const carols = await customer(carol);
      await sql.execute(
        `UPDATE subscriptions SET customer_id = ? WHERE plan_id = (SELECT id FROM plans WHERE label = 'named')`,
        [carols],
      );
      expect((await payers()).find((p) => p.label === 'named')).toEqual({
        label: 'named',
        wallet: carol,
        mint: 'USDG',
      });
      await sql.execute(
        `UPDATE subscriptions SET customer_id = ? WHERE plan_id = (SELECT id FROM plans WHERE label = 'named')`,
        [bobs],
      );
      // What the copies copy never changes: refused by the database.
      await expect(
        sql.execute(`UPDATE customers SET wallet_address = ? WHERE id = ?`, [carol, bobs]),
      ).rejects.toMatchObject({
        code: '23001',
        message: expect.stringContaining("a customer's wallet never changes"),
      });
      await expect(
        sql.execute(`UPDATE plans SET mint = 'USDC' WHERE label = 'after'`),
      ).rejects.toMatchObject({
        code: '23001',
        message: expect.stringContaining("a plan's mint never changes"),
      });
      // What else a customer or a plan has changes as before.
      await sql.execute(`UPDATE customers SET wallet_address = wallet_address, label = 'Bob'`);
      await sql.execute(`UPDATE plans SET mint = mint, label = label || '' WHERE label = 'after'`);
      // A customer or a plan that does not exist: the foreign key's error, as before.
      const stranger = '00000000-0000-4000-8000-000000000000';
      await expect(subscribe(await plan('stranger', 'USDC'), stranger)).rejects.toMatchObject({
        code: '23503',
        message: expect.stringContaining(`subscriptions.customer_id ${stranger} names no customer`),
      });
      await expect(subscribe(stranger, bobs)).rejects.toMatchObject({
        code: '23503',
        message: expect.stringContaining(`subscriptions.plan_id ${stranger} names no plan`),
      });
      // No customer at all: its own NOT NULL, as before.
      await expect(
        sql.execute(
          `INSERT INTO subscriptions (id, merchant_id, plan_id, customer_id, status,
             authorized_amount, created_at, updated_at, scheme)
           VALUES (gen_random_uuid(), ?, (SELECT id FROM plans WHERE label = 'after'), NULL,
             'Active', 12000000, now(), now(), 'token-delegate')`,
          [merchant],
        ),
      ).rejects.toMatchObject({
        code: '23502',
        message: expect.stringContaining('customer_id'),
      });
      expect(await payers()).toEqual([
        { label: 'after', wallet: bob, mint: 'USDG' },
        { label: 'before', wallet: alice, mint: 'PYUSD' },
        { label: 'named', wallet: bob, mint: 'USDG' },
      ]);
    } finally {
      await orm.close(true);
      await db.drop();
    }
  });

  it("the upgrade writes each wallet's approval totals from its live token-delegate subscriptions, and moves their versions", async () => {
    const db = await createTestDatabase();
    const orm = await MikroORM.init(mikroOrmOptions(db.url));
    try {
      const migrator = orm.getMigrator();
      await migrator.down({ to: 'Migration20261206010000' });
      const sql = orm.em.getConnection();
      const [alice, bob] = [
        '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin',
        '4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T',
      ];
      const [{ id: merchant }] = await sql.execute<{ id: string }[]>(
        `INSERT INTO merchants (id, created_at, updated_at, name, wallet_address, webhook_secret)
         VALUES (gen_random_uuid(), now(), now(), 'Acme', ?, 'whsec_x') RETURNING id`,
        ['7dHbWXmci3dT8UFYWYZweBLXgycu7Y3iL6trKn1Y7ARj'],
      );
      // A subscription of `wallet` to a plan of its own in `mint`, as given.
      const subscription = async (
        wallet: string,
        mint: string,
        scheme: string,
        status: string,
        amounts: [authorized: number, charged: number],
        revoked = false,
      ) => {
        const [{ id: customer }] = await sql.execute<{ id: string }[]>(
          `INSERT INTO customers (id, merchant_id, wallet_address, created_at, updated_at)
           VALUES (gen_random_uuid(), ?, ?, now(), now())
           ON CONFLICT (merchant_id, wallet_address) DO UPDATE SET updated_at = now()
           RETURNING id`,
          [merchant, wallet],
        );
        await sql.execute(
          `WITH p AS (
             INSERT INTO plans (id, merchant_id, label, mint, amount, interval_seconds, active,
               onchain_plan_id, created_at, updated_at)
             VALUES (gen_random_uuid(), ?, 'p', ?, 1000000, 2592000, true,
                     left(md5(random()::text), 16), now(), now())
             RETURNING id)
           INSERT INTO subscriptions (id, merchant_id, plan_id, customer_id, status,
             current_period_end, onchain_address, authorized_amount, charged_amount,
             periods_charged, created_at, updated_at, scheme, revoked_at)
           SELECT gen_random_uuid(), ?, p.id, ?, ?, now(), 'x', ?, ?, 0, now(), now(), ?,
                  CASE WHEN ? THEN now() END
             FROM p`,
          [merchant, mint, merchant, customer, status, ...amounts, scheme, revoked],
        );
      };
      await subscription(alice, 'USDC', 'token-delegate', 'Active', [12_000_000, 1_000_000]);
      await subscription(alice, 'USDC', 'token-delegate', 'PastDue', [5_000_000, 0]);
      await subscription(alice, 'USDC', 'token-delegate', 'Active', [1_000_000, 3_000_000]);
      await subscription(alice, 'USDC', 'token-delegate', 'Cancelled', [9_000_000, 0]);
      await subscription(alice, 'USDC', 'token-delegate', 'Active', [9_000_000, 0], true);
      await subscription(alice, 'USDC', 'program', 'Active', [0, 0]);
      await subscription(alice, 'PYUSD', 'token-delegate', 'Active', [7_000_000, 0]);
      await subscription(bob, 'USDC', 'token-delegate', 'Completed', [4_000_000, 4_000_000]);
      const rows = () =>
        sql.execute<{ wallet: string; mint: string; version: string; totals: string | null }[]>(
          `SELECT wallet, mint, version::text,
                  (to_jsonb(v) ->> 'need') || '/' || (to_jsonb(v) ->> 'live') AS totals
             FROM wallet_approval_versions v ORDER BY wallet, mint`,
        );
      // Before: versions only, one a subscription written.
      expect(await rows()).toEqual([
        { wallet: bob, mint: 'USDC', version: '1', totals: null },
        { wallet: alice, mint: 'PYUSD', version: '1', totals: null },
        { wallet: alice, mint: 'USDC', version: '5', totals: null },
      ]);
      await migrator.up();
      // After: what the live ones need (11 + 5 + 0), how many; each version one more.
      expect(await rows()).toEqual([
        { wallet: bob, mint: 'USDC', version: '1', totals: '0/0' },
        { wallet: alice, mint: 'PYUSD', version: '2', totals: '7000000/1' },
        { wallet: alice, mint: 'USDC', version: '6', totals: '16000000/3' },
      ]);
    } finally {
      await orm.close(true);
      await db.drop();
    }
  });

  it('every migration file is registered in migrations/index.ts, in order', () => {
    const dir = join(__dirname, '..', 'src', 'database', 'migrations');
    const files = readdirSync(dir)
      .filter((f) => /^Migration\d+.*\.ts$/.test(f))
      .map((f) => f.replace(/\.ts$/, ''))
      .sort();
    expect(MIGRATIONS.map((m) => m.name)).toEqual(files);
  });
});
