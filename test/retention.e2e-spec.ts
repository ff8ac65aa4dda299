import { Keypair } from '@solana/web3.js';
import { randomUUID } from 'node:crypto';
import { Retention, RetentionReport } from '../src/common/background/retention';
import { KEY_TTL_MS } from '../src/idempotency/idempotency.service';
import { billingHelpers } from './helpers/billing';
import { fund } from './helpers/chain-tx';
import { createTestApp, randomWallet, TestApp, TestMerchant } from './helpers/test-app';

const DAY_MS = 86_400_000;
const USDC = 1_000_000n;

/**
 * Retention (docs/operations.md#retention) on real PostgreSQL: what the retention job deletes,
 * what it keeps, and its bounds. Deliveries are kept 30 days here and e-mails 7 (each table by its
 * own setting); rows are aged by setting their timestamps in the database, relative to the domain
 * clock the job reads. The instance runs no background work (`ROLE=api`): the test runs the job.
 */
describe('Retention: finished deliveries, e-mails and idempotency keys, deleted in bounded batches', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let retention: Retention;
  const env = { ROLE: 'api', WEBHOOK_RETENTION_DAYS: '30', EMAIL_RETENTION_DAYS: '7' };

  beforeAll(async () => {
    t = await createTestApp({ env });
    retention = t.app.get(Retention);
    acme = await t.createMerchant('Acme');
    // An endpoint, so that each event queues a delivery (nothing delivers it: ROLE=api).
    await t.http
      .put('/api/settings/webhook')
      .set(acme.auth)
      .send({ webhookUrl: 'http://127.0.0.1:9/hooks' })
      .expect(200);
  });
  afterAll(() => t?.close());

  const daysAgo = (days: number) => new Date(t.clock.now().getTime() - days * DAY_MS);
  const count = async (from: string, params: unknown[] = []) =>
    (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${from}`, params))[0].n;
  const report = (reports: RetentionReport[], table: string) =>
    reports.find((r) => r.table === table)!;

  /** A real event (a customer created) and the delivery it queued; its ids. */
  async function eventWithDelivery(): Promise<{ eventId: string; deliveryId: string }> {
    const customer = await t.http
      .post('/api/customers')
      .set(acme.auth)
      .send({ walletAddress: randomWallet() })
      .expect(201);
    const [row] = await t.sql<{ event_id: string; id: string }>(
      `SELECT d.event_id, d.id FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
        WHERE e.payload::jsonb #>> '{data,object,id}' = $1`,
      [customer.body.id],
    );
    return { eventId: row.event_id, deliveryId: row.id };
  }

  /** Sets a delivery's status and last change (`updated_at`), as its last attempt left it. */
  async function age(deliveryId: string, status: string, updatedAt: Date): Promise<void> {
    await t.sql(
      `UPDATE webhook_deliveries SET status = $2, updated_at = $3, next_attempt_at =
         CASE WHEN $2 = 'pending' THEN $3::timestamptz END WHERE id = $1`,
      [deliveryId, status, updatedAt],
    );
  }

  /** `n` messages of the merchant in `status`, last changed at `updatedAt`; their ids. */
  async function emails(n: number, status: string, updatedAt: Date): Promise<string[]> {
    const rows = await t.sql<{ id: string }>(
      `INSERT INTO email_outbox (id, merchant_id, recipient, subject, text_body, html_body, status,
         attempts, next_attempt_at, created_at, updated_at)
       SELECT gen_random_uuid(), $1, 'ada@example.com', 'Invoice', 'text', '<p>html</p>', $2, 1,
              CASE WHEN $2 = 'pending' THEN $3::timestamptz END, $3, $3
         FROM generate_series(1, $4) RETURNING id`,
      [acme.id, status, updatedAt, n],
    );
    return rows.map((r) => r.id);
  }

  /** `n` more deliveries of the event, `status`, last changed at `updatedAt`. */
  async function deliveries(n: number, eventId: string, status: string, updatedAt: Date) {
    await t.sql(
      `INSERT INTO webhook_deliveries (id, event_id, merchant_id, status, attempts, created_at,
         updated_at)
       SELECT gen_random_uuid(), $1, $2, $3, 1, $4, $4 FROM generate_series(1, $5)`,
      [eventId, acme.id, status, updatedAt, n],
    );
  }

  it('deletes only final rows past their period: younger and pending ones stay, as do events, charges and the ledger', async () => {
    // A subscription charged once: a charge attempt, a ledger line and events, all years old
    // by the end of this test. The job never touches them.
    const billing = billingHelpers(t);
    const plan = await t.http
      .post('/api/plans')
      .set(acme.auth)
      .send({ label: 'Pro', mint: 'USDC', amount: '10', intervalSeconds: 30 * 86_400 })
      .expect(201);
    const customer = Keypair.generate();
    fund(t, customer.publicKey.toBase58(), { symbol: 'USDC', amount: 100n * USDC });
    const { subscription } = await billing.subscribe(customer, plan.body.plan.id, acme.auth);
    expect(await billing.attempts(subscription.id)).toMatchObject([{ state: 'succeeded' }]);

    const old = {
      delivered: await eventWithDelivery(),
      failed: await eventWithDelivery(),
      skipped: await eventWithDelivery(),
      pending: await eventWithDelivery(),
    };
    const young = await eventWithDelivery();
    t.clock.advance(400 * DAY_MS);
    await age(old.delivered.deliveryId, 'delivered', daysAgo(31));
    await age(old.failed.deliveryId, 'failed', daysAgo(31));
    await age(old.skipped.deliveryId, 'skipped', daysAgo(31));
    await age(old.pending.deliveryId, 'pending', daysAgo(400)); // due for a year, never final
    await age(young.deliveryId, 'delivered', daysAgo(29));
    const oldMail = [
      ...(await emails(1, 'sent', daysAgo(8))),
      ...(await emails(1, 'failed', daysAgo(8))),
      ...(await emails(1, 'not_sent', daysAgo(8))),
    ];
    // Pending for a year (an SMTP server never reached): never deleted; and a message sent six
    // days ago, kept although a delivery as old would have gone (each table has its period).
    const keptMail = [
      ...(await emails(1, 'pending', daysAgo(365))),
      ...(await emails(1, 'sent', daysAgo(6))),
    ];
    const before = {
      events: await count('events WHERE merchant_id = $1', [acme.id]),
      attempts: await count('charge_attempts WHERE merchant_id = $1', [acme.id]),
      payments: await count('payments WHERE merchant_id = $1', [acme.id]),
      subscriptions: await count('subscriptions WHERE merchant_id = $1', [acme.id]),
    };

    const reports = await retention.run();
    expect(report(reports, 'webhook_deliveries')).toEqual({
      table: 'webhook_deliveries',
      deleted: 3,
      batches: 1,
      complete: true,
    });
    expect(report(reports, 'email_outbox')).toMatchObject({ deleted: 3, complete: true });
    const mine = [old.delivered, old.failed, old.skipped, old.pending, young];
    const left = await t.sql<{ id: string }>(
      'SELECT id FROM webhook_deliveries WHERE id = ANY($1::uuid[]) ORDER BY id',
      [mine.map((e) => e.deliveryId)],
    );
    expect(left.map((r) => r.id)).toEqual([old.pending.deliveryId, young.deliveryId].sort());
    // The events of the subscription's charge queued deliveries too: still pending, all kept.
    expect(await count("webhook_deliveries WHERE status = 'pending'")).toBeGreaterThan(1);
    const mail = await t.sql<{ id: string }>('SELECT id FROM email_outbox WHERE merchant_id = $1', [
      acme.id,
    ]);
    expect(mail.map((r) => r.id).sort()).toEqual([...keptMail].sort());
    expect(oldMail.every((id) => !mail.some((r) => r.id === id))).toBe(true);
    expect({
      events: await count('events WHERE merchant_id = $1', [acme.id]),
      attempts: await count('charge_attempts WHERE merchant_id = $1', [acme.id]),
      payments: await count('payments WHERE merchant_id = $1', [acme.id]),
      subscriptions: await count('subscriptions WHERE merchant_id = $1', [acme.id]),
    }).toEqual(before);

    // The event whose only delivery was deleted is still listed, with `delivery: null`, and can
    // be redelivered; the one whose delivery is kept shows it.
    const event = await t.http
      .get(`/api/events/evt_${old.delivered.eventId}`)
      .set(acme.auth)
      .expect(200);
    expect(event.body).toMatchObject({ id: `evt_${old.delivered.eventId}`, delivery: null });
    const kept = await t.http.get(`/api/events/evt_${young.eventId}`).set(acme.auth).expect(200);
    expect(kept.body.delivery).toMatchObject({ status: 'delivered' });
    const again = await t.http
      .post(`/api/events/evt_${old.delivered.eventId}/redeliver`)
      .set(acme.auth)
      .expect(202);
    expect(again.body.delivery).toMatchObject({ status: 'pending', attempts: 0 });

    // A second run finds nothing more.
    expect(report(await retention.run(), 'webhook_deliveries')).toMatchObject({
      deleted: 0,
      complete: true,
    });
  });

  it('a backlog larger than a batch is deleted over several statements, or up to the run’s bound', async () => {
    const { eventId } = await eventWithDelivery();
    await deliveries(2_500, eventId, 'delivered', daysAgo(45));

    // Default limits (1,000 per statement): three statements, the last one short.
    const first = await retention.run();
    expect(report(first, 'webhook_deliveries')).toEqual({
      table: 'webhook_deliveries',
      deleted: 2_500,
      batches: 3,
      complete: true,
    });

    // A bound of 4 batches of 100: 400 of 450 now, the rest at the next run.
    await emails(450, 'sent', daysAgo(45));
    const bounded = await retention.run({ batch: 100, maxBatches: 4 });
    expect(report(bounded, 'email_outbox')).toEqual({
      table: 'email_outbox',
      deleted: 400,
      batches: 4,
      complete: false,
    });
    expect(
      await count("email_outbox WHERE status = 'sent' AND updated_at < $1", [daysAgo(7)]),
    ).toBe(50);
    const next = await retention.run({ batch: 100, maxBatches: 4 });
    expect(report(next, 'email_outbox')).toEqual({
      table: 'email_outbox',
      deleted: 50,
      batches: 1,
      complete: true,
    });
  });

  it('instances running it at once share the work: every row deleted once, none waits or fails', async () => {
    const { eventId } = await eventWithDelivery();
    await deliveries(3_000, eventId, 'failed', daysAgo(60));
    const other = await createTestApp({ databaseUrl: t.databaseUrl, clock: t.clock, env });
    try {
      const limits = { batch: 100, maxBatches: 100 };
      const [a, b] = await Promise.all([
        retention.run(limits),
        other.app.get(Retention).run(limits),
      ]);
      const both = [report(a, 'webhook_deliveries'), report(b, 'webhook_deliveries')];
      expect(both[0].deleted + both[1].deleted).toBe(3_000);
      expect(both.every((r) => r.complete)).toBe(true);
      expect(await count('webhook_deliveries WHERE event_id = $1', [eventId])).toBe(1); // pending
    } finally {
      await other.close();
    }
  });

  it('an idempotency key is deleted 24 hours after its request; the same key then makes a new request', async () => {
    const key = randomUUID();
    const body = {
      walletAddress: randomWallet(),
      mint: 'USDC',
      lineItems: [{ description: 'Setup', quantity: 1, unitAmount: '5' }],
    };
    const post = () =>
      t.http.post('/api/invoices').set(acme.auth).set('Idempotency-Key', key).send(body);
    const first = await post().expect(201);
    const youngKey = randomUUID();
    t.clock.advance(KEY_TTL_MS - 60_000);
    await t.http
      .post('/api/customers')
      .set(acme.auth)
      .set('Idempotency-Key', youngKey)
      .send({ walletAddress: randomWallet() })
      .expect(201);
    const replay = await post().expect(201); // within 24 hours: the stored response
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.invoice.id).toBe(first.body.invoice.id);

    t.clock.advance(120_000); // the first key is 24 h + 1 min old, the second 2 min
    expect(report(await retention.run(), 'idempotency_keys')).toMatchObject({
      deleted: 1,
      complete: true,
    });
    const keys = await t.sql<{ key: string }>(
      'SELECT key FROM idempotency_keys WHERE merchant_id = $1',
      [acme.id],
    );
    expect(keys.map((k) => k.key)).toContain(youngKey);
    expect(keys.map((k) => k.key)).not.toContain(key);

    // Pruned: the same key and body are a new request (a second invoice), as after any 24 h.
    const fresh = await post().expect(201);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
    expect(fresh.body.invoice.id).not.toBe(first.body.invoice.id);
    const again = await post().expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.invoice.id).toBe(fresh.body.invoice.id);
  });
});
