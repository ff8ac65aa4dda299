import { MikroORM } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { Db } from '../src/database/db';
import { mikroOrmOptions } from '../src/database/mikro-orm.options';
import { EmailOutboxRepository } from '../src/email/email-outbox.repository';
import { WebhookDeliveriesRepository } from '../src/webhooks/webhook-deliveries.repository';
import { randomWallet } from './helpers/test-app';
import { waitFor } from './helpers/webhook-receiver';
import { createTestDatabase } from './setup/test-database';

const QUEUED = 400;
/** A claim within one page's free space (the oldest rows: the first page's). */
const CLAIMED = 4;

/**
 * Each delivery of the two outboxes is written twice: its lease when claimed, its result when
 * sent. The lease changes no indexed column and each page keeps room for it (fillfactor), so it
 * is a heap-only update: no new entry in any of the table's indexes (docs/performance.md,
 * webhooks: ~9% of PostgreSQL's CPU a delivery). Were a claim to touch an indexed column again
 * (`updated_at`, which the finished rows' index holds), or the table to lose its free space,
 * every lease would be written into every index.
 */
describe("an outbox claim's lease", () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let orm: MikroORM;
  let sql: Client;
  let merchantId: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    // One connection: the claim's statistics are flushed by the same session (`flushed`).
    orm = await MikroORM.init(mikroOrmOptions(db.url, { pool: { min: 0, max: 1 } }));
    sql = new Client({ connectionString: db.url });
    await sql.connect();
    [{ id: merchantId }] = (
      await sql.query<{ id: string }>(
        `INSERT INTO merchants (id, created_at, updated_at, name, wallet_address, webhook_secret,
           webhook_url)
         VALUES (gen_random_uuid(), now(), now(), 'Acme', $1, 'whsec_x', 'https://example.com/')
         RETURNING id`,
        [randomWallet()],
      )
    ).rows;
  });

  afterAll(async () => {
    await sql.end();
    await orm.close(true);
    await db.drop();
  });

  /** Updates of `table` so far, and how many of them were heap-only (as the statistics say). */
  async function updates(table: string): Promise<{ all: number; hot: number }> {
    const [row] = (
      await sql.query<{ all: string; hot: string }>(
        `SELECT n_tup_upd AS all, n_tup_hot_upd AS hot FROM pg_stat_user_tables
          WHERE relname = $1`,
        [table],
      )
    ).rows;
    return { all: Number(row.all), hot: Number(row.hot) };
  }

  /** The session that ran the claim reports its statistics now, not when next idle (10 s). */
  async function flushed(repositoryDb: Db): Promise<void> {
    await repositoryDb.execute('SELECT pg_stat_force_next_flush()');
    await repositoryDb.execute('SELECT 1');
  }

  /** Waits until the statistics count `count` more updates of `table` than `before`. */
  async function updatesAfter(table: string, before: number, count: number) {
    let seen = { all: 0, hot: 0 };
    await waitFor(
      async () => {
        await sql.query('SELECT pg_stat_clear_snapshot()');
        seen = await updates(table);
        return seen.all >= before + count;
      },
      30_000,
      () => `${table}: ${seen.all - before} updates counted, ${count} expected`,
    );
    return seen;
  }

  it('of webhook deliveries is written as a heap-only tuple', async () => {
    await sql.query(
      `WITH e AS (
         INSERT INTO events (id, merchant_id, type, payload, created_at)
         SELECT gen_random_uuid(), $1, 'customer.created', '{}'::jsonb, now()
           FROM generate_series(1, $2) RETURNING id)
       INSERT INTO webhook_deliveries (id, event_id, merchant_id, status, attempts,
         next_attempt_at, created_at, updated_at)
       SELECT gen_random_uuid(), e.id, $1, 'pending', 0, now(), now(), now() FROM e`,
      [merchantId, QUEUED],
    );
    const before = await updatesAfter('webhook_deliveries', 0, 0);
    const repositoryDb = new Db(orm.em.fork());
    const claimed = await new WebhookDeliveriesRepository(repositoryDb).claim({
      now: new Date(Date.now() + 60_000),
      limit: CLAIMED,
      candidates: CLAIMED * 2,
      inFlight: new Map(),
      perMerchantCap: CLAIMED,
      lockToken: randomUUID(),
      leaseMs: 30_000,
    });
    expect(claimed).toHaveLength(CLAIMED);
    await flushed(repositoryDb);
    const after = await updatesAfter('webhook_deliveries', before.all, CLAIMED);
    expect(after.all - before.all).toBe(CLAIMED);
    expect(after.hot - before.hot).toBe(CLAIMED);
  });

  it('of e-mails is written as a heap-only tuple', async () => {
    await sql.query(
      `INSERT INTO email_outbox (id, merchant_id, recipient, subject, text_body, html_body,
         status, attempts, next_attempt_at, created_at, updated_at)
       SELECT gen_random_uuid(), $1, 'payer@example.com', 'Invoice', 'text', '<p>html</p>',
              'pending', 0, now(), now(), now()
         FROM generate_series(1, $2)`,
      [merchantId, QUEUED],
    );
    const before = await updatesAfter('email_outbox', 0, 0);
    const repositoryDb = new Db(orm.em.fork());
    const claimed = await new EmailOutboxRepository(repositoryDb).claimDue(
      new Date(Date.now() + 60_000),
      CLAIMED,
      randomUUID(),
      30_000,
    );
    expect(claimed).toHaveLength(CLAIMED);
    await flushed(repositoryDb);
    const after = await updatesAfter('email_outbox', before.all, CLAIMED);
    expect(after.all - before.all).toBe(CLAIMED);
    expect(after.hot - before.hot).toBe(CLAIMED);
  });
});
