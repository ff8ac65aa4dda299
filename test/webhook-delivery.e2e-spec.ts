import type { lookup, LookupAddress } from 'node:dns';
import { randomUUID } from 'node:crypto';
import { SchedulerRegistry } from '@nestjs/schedule';
import { Client } from 'pg';
import { BackgroundWork } from '../src/common/background/background-work';
import { verifyWebhookSignature } from '../src/webhooks/signature';
import { WebhookDeliveriesRepository } from '../src/webhooks/webhook-deliveries.repository';
import { DNS_LOOKUP } from '../src/webhooks/webhook-sender';
import { createTestDatabase } from './setup/test-database';
import { createTestApp, randomWallet, TestApp, TestMerchant } from './helpers/test-app';
import { waitFor, WebhookReceiver } from './helpers/webhook-receiver';

const S = 1000;
/** Fast polling and a short HTTP timeout, so retries and timeouts run in test time. */
const FAST = { WEBHOOK_POLL_INTERVAL_MS: '30', WEBHOOK_TIMEOUT_MS: '400' };
/**
 * For tests against a healthy receiver: a timeout that a loaded CI machine cannot trip (a 400 ms
 * one did, and the retry of an answered POST is a duplicate the exactly-once test rightly sees).
 */
const HEALTHY = { ...FAST, WEBHOOK_TIMEOUT_MS: '10000' };

/** DNS answers for the SSRF tests: a public-looking name that resolves to loopback. */
const FAKE_DNS = ((
  hostname: string,
  _options: unknown,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => {
  if (hostname === 'hooks.rebound.test') callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
}) as unknown as typeof lookup;

interface DeliveryRow {
  status: string;
  attempts: number;
  last_http_status: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  delivered_at: Date | null;
  lock_token: string | null;
}

async function deliveries(t: TestApp, eventId: string): Promise<DeliveryRow[]> {
  return t.sql<DeliveryRow>(
    `SELECT status, attempts, last_http_status, last_error, next_attempt_at, last_attempt_at,
            delivered_at, lock_token
       FROM webhook_deliveries WHERE event_id = $1 ORDER BY created_at, id`,
    [eventId.replace(/^evt_/, '')],
  );
}

async function setEndpoint(t: TestApp, m: TestMerchant, url: string | null): Promise<void> {
  await t.http.put('/api/settings/webhook').set(m.auth).send({ webhookUrl: url }).expect(200);
}

/** Creates a customer and returns the id of the `customer.created` event it recorded. */
async function createCustomer(t: TestApp, m: TestMerchant, label = 'Ada'): Promise<string> {
  const res = await t.http
    .post('/api/customers')
    .set(m.auth)
    .send({ walletAddress: randomWallet(), label })
    .expect(201);
  const [event] = await t.sql<{ id: string }>(
    `SELECT id FROM events WHERE merchant_id = $1 AND payload->'data'->'object'->>'id' = $2`,
    [m.id, res.body.id],
  );
  return `evt_${event.id}`;
}

/** Resolves once the delivery's attempt count reaches `attempts` and it is not in flight. */
async function settled(t: TestApp, eventId: string, attempts: number): Promise<DeliveryRow> {
  let row: DeliveryRow | undefined;
  await waitFor(
    async () => {
      [row] = (await deliveries(t, eventId)).slice(-1);
      return !!row && row.attempts >= attempts && row.lock_token === null;
    },
    5000,
    () => `delivery of ${eventId} to settle after ${attempts} attempts: ${JSON.stringify(row)}`,
  );
  return row!;
}

const quiet = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Webhook delivery', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
    t = await createTestApp({ env: FAST });
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });
  beforeEach(() => {
    receiver.behaviour = { status: 200 };
  });

  it('delivers a signed customer.created within a couple of seconds, woken by NOTIFY', async () => {
    // Polling every minute: only the NOTIFY of the committed event can wake the worker in time.
    const slow = await createTestApp({
      env: { WEBHOOK_POLL_INTERVAL_MS: '60000' },
    });
    const own = await new WebhookReceiver().start();
    try {
      const m = await slow.createMerchant('Acme');
      await setEndpoint(slow, m, own.url);
      const res = await slow.http
        .post('/api/customers')
        .set(m.auth)
        .send({ walletAddress: randomWallet(), email: 'ada@example.com', label: 'Ada' })
        .expect(201);
      // The poll is a minute away: arriving before it proves the NOTIFY woke the worker.
      const [hook] = await own.waitForCount(1, 30_000);

      expect(hook.headers['content-type']).toBe('application/json');
      expect(hook.headers['service-event-type']).toBe('customer.created');
      expect(hook.headers['service-event-id']).toBe(hook.body.id);
      expect(hook.body).toEqual({
        id: expect.stringMatching(/^evt_[0-9a-f-]{36}$/),
        type: 'customer.created',
        createdAt: res.body.createdAt,
        data: { object: res.body },
      });
      expect(Object.keys(hook.body)).toEqual(['id', 'type', 'createdAt', 'data']);

      const header = hook.headers['service-signature'] as string;
      expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(Math.abs(Number(/t=(\d+)/.exec(header)![1]) - Date.now() / 1000)).toBeLessThan(5);
      expect(verifyWebhookSignature(hook.rawBody, header, m.webhookSecret, 300)).toBe(true);
      // A tampered body, an old timestamp, another merchant's secret: all refused.
      const tampered = hook.rawBody.replace('"label":"Ada"', '"label":"Eve"');
      expect(tampered).not.toBe(hook.rawBody);
      expect(verifyWebhookSignature(tampered, header, m.webhookSecret, 300)).toBe(false);
      const t0 = Number(/t=(\d+)/.exec(header)![1]);
      expect(verifyWebhookSignature(hook.rawBody, header, m.webhookSecret, 300, t0 + 301)).toBe(
        false,
      );
      const other = await slow.createMerchant('Other');
      expect(verifyWebhookSignature(hook.rawBody, header, other.webhookSecret, 300)).toBe(false);

      const row = await settled(slow, hook.body.id, 1);
      expect(row).toMatchObject({ status: 'delivered', attempts: 1, last_http_status: 200 });
      expect(row.delivered_at).not.toBeNull();
      expect(row.next_attempt_at).toBeNull();
    } finally {
      await slow.close();
      await own.stop();
    }
  });

  it('retries a 500 on the backoff schedule and delivers once the receiver recovers', async () => {
    const m = await t.createMerchant();
    await setEndpoint(t, m, receiver.url);
    receiver.behaviour = { status: 500 };
    const eventId = await createCustomer(t, m);
    const first = await settled(t, eventId, 1);
    expect(first).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_http_status: 500,
      last_error: 'HTTP 500',
    });
    const delay = first.next_attempt_at!.getTime() - first.last_attempt_at!.getTime();
    expect(delay).toBeGreaterThanOrEqual(24 * S); // 30 s ± 20 %
    expect(delay).toBeLessThanOrEqual(36 * S);

    t.clock.advance(20 * S); // not due yet
    await quiet(200);
    expect(receiver.forEvent(eventId)).toHaveLength(1);

    t.clock.advance(20 * S); // 40 s: due; fails again, next in 60 s ± 20 %
    const second = await settled(t, eventId, 2);
    expect(second).toMatchObject({ status: 'pending', attempts: 2, last_http_status: 500 });
    const delay2 = second.next_attempt_at!.getTime() - second.last_attempt_at!.getTime();
    expect(delay2).toBeGreaterThanOrEqual(48 * S);
    expect(delay2).toBeLessThanOrEqual(72 * S);

    receiver.behaviour = { status: 204 };
    t.clock.advance(80 * S);
    const done = await settled(t, eventId, 3);
    expect(done).toMatchObject({ status: 'delivered', attempts: 3, last_http_status: 204 });
    expect(done.last_error).toBeNull();
    const got = receiver.forEvent(eventId);
    expect(got).toHaveLength(3);
    expect(new Set(got.map((g) => g.rawBody)).size).toBe(1); // every attempt sends the same bytes
  });

  it('honours Retry-After on a 429', async () => {
    const m = await t.createMerchant();
    await setEndpoint(t, m, receiver.url);
    receiver.behaviour = { status: 429, headers: { 'retry-after': '120' } };
    const eventId = await createCustomer(t, m);
    const first = await settled(t, eventId, 1);
    expect(first).toMatchObject({ status: 'pending', last_http_status: 429 });
    expect(first.next_attempt_at!.getTime() - first.last_attempt_at!.getTime()).toBe(120 * S);

    receiver.behaviour = { status: 200 };
    t.clock.advance(90 * S); // past the 30 s backoff, short of Retry-After
    await quiet(200);
    expect(receiver.forEvent(eventId)).toHaveLength(1);
    t.clock.advance(31 * S);
    expect(await settled(t, eventId, 2)).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('gives up on a receiver that hangs past the timeout, then retries', async () => {
    const m = await t.createMerchant();
    await setEndpoint(t, m, receiver.url);
    receiver.behaviour = 'hang';
    const eventId = await createCustomer(t, m);
    const first = await settled(t, eventId, 1);
    expect(first).toMatchObject({
      status: 'pending',
      last_http_status: null,
      last_error: 'Timed out after 400 ms',
    });
    receiver.behaviour = { status: 200 };
    t.clock.advance(40 * S);
    expect(await settled(t, eventId, 2)).toMatchObject({ status: 'delivered', attempts: 2 });
  });

  it('marks a delivery failed once its 3-day retry window is over', async () => {
    const m = await t.createMerchant();
    await setEndpoint(t, m, receiver.url);
    receiver.behaviour = { status: 503 };
    const eventId = await createCustomer(t, m);
    await settled(t, eventId, 1);
    // Jump to 10 s before the window closes: the next retry (60 s ± 20 %) would fall past it.
    await t.sql(
      `UPDATE webhook_deliveries SET next_attempt_at = $2, created_at = $3 WHERE event_id = $1`,
      [
        eventId.slice(4),
        new Date(t.clock.now().getTime()),
        new Date(t.clock.now().getTime() - 72 * 3600 * S + 10 * S),
      ],
    );
    const row = await settled(t, eventId, 2);
    expect(row).toMatchObject({ status: 'failed', attempts: 2, last_http_status: 503 });
    expect(row.next_attempt_at).toBeNull();
    t.clock.advance(3600 * S);
    await quiet(200);
    expect(receiver.forEvent(eventId)).toHaveLength(2);
  });

  it('sends deliveries not yet made to the endpoint configured now, and skips them without one', async () => {
    const m = await t.createMerchant();
    const down = new WebhookReceiver();
    await down.start();
    await setEndpoint(t, m, down.url);
    await down.stop(); // connection refused
    const eventId = await createCustomer(t, m);
    const first = await settled(t, eventId, 1);
    expect(first.status).toBe('pending');
    expect(first.last_error).toBe('Connection refused by the endpoint');

    await setEndpoint(t, m, receiver.url);
    t.clock.advance(40 * S);
    expect(await settled(t, eventId, 2)).toMatchObject({ status: 'delivered' });
    expect(receiver.forEvent(eventId)).toHaveLength(1);

    // Endpoint removed while a retry is pending: the retry is skipped, nothing is sent.
    receiver.behaviour = { status: 500 };
    const second = await createCustomer(t, m, 'Bob');
    await settled(t, second, 1);
    await setEndpoint(t, m, null);
    t.clock.advance(40 * S);
    let row: DeliveryRow | undefined;
    await waitFor(async () => ([row] = await deliveries(t, second)) && row.status === 'skipped');
    // The last real attempt (a 500) stays on record; the skip is not an attempt.
    expect(row).toMatchObject({
      status: 'skipped',
      attempts: 1,
      last_http_status: 500,
      last_error: 'No webhook endpoint',
      next_attempt_at: null,
    });
    expect(row!.last_attempt_at).not.toBeNull();
    expect(receiver.forEvent(second)).toHaveLength(1);
  });

  it('records events but delivers nothing when the merchant has no endpoint', async () => {
    const m = await t.createMerchant();
    const before = receiver.received.length;
    const eventId = await createCustomer(t, m);
    await quiet(200);
    expect(await deliveries(t, eventId)).toEqual([]);
    const res = await t.http.get(`/api/events/${eventId}`).set(m.auth).expect(200);
    expect(res.body.delivery).toBeNull();
    expect(receiver.received.length).toBe(before);
  });

  it('signs with both secrets during a rotation, and with the new one only after 24 hours', async () => {
    const m = await t.createMerchant();
    await setEndpoint(t, m, receiver.url);
    const rotated = await t.http
      .post('/api/settings/webhook/secret/rotate')
      .set(m.auth)
      .expect(200);
    const during = await createCustomer(t, m);
    await settled(t, during, 1);
    const [a] = receiver.forEvent(during);
    const header = a.headers['service-signature'] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(a.rawBody, header, rotated.body.secret)).toBe(true);
    expect(verifyWebhookSignature(a.rawBody, header, m.webhookSecret)).toBe(true);

    t.clock.advance(24 * 3600 * S + S);
    const after = await createCustomer(t, m, 'Later');
    await settled(t, after, 1);
    const [b] = receiver.forEvent(after);
    const header2 = b.headers['service-signature'] as string;
    expect(header2).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(b.rawBody, header2, rotated.body.secret)).toBe(true);
    expect(verifyWebhookSignature(b.rawBody, header2, m.webhookSecret)).toBe(false);
  });
  it('one merchant with a hanging endpoint does not hold up another merchant', async () => {
    // 4 in flight per instance, at most 1 per merchant.
    const own = await createTestApp({
      env: { WEBHOOK_POLL_INTERVAL_MS: '30', WEBHOOK_TIMEOUT_MS: '3000', WEBHOOK_CONCURRENCY: '4' },
    });
    const slow = await new WebhookReceiver().start();
    const fast = await new WebhookReceiver().start();
    try {
      slow.behaviour = 'hang';
      const stuck = await own.createMerchant('Stuck');
      const healthy = await own.createMerchant('Healthy');
      await setEndpoint(own, stuck, slow.url);
      await setEndpoint(own, healthy, fast.url);
      const stuckEvents: string[] = [];
      for (let i = 0; i < 8; i++) stuckEvents.push(await createCustomer(own, stuck, `S${i}`));
      await slow.waitForCount(1);
      await createCustomer(own, healthy);
      await fast.waitForCount(1);
      // Delivered long before the stuck merchant's eight attempts could all time out one after
      // another (8 x 3 s): the healthy merchant did not wait behind them. (Not "while the first
      // still hangs": on a machine busy with a second copy of the suite that took over 3 s.)
      expect(slow.received.length).toBeLessThan(stuckEvents.length);
      // And the stuck merchant never holds more than its one slot: at most one of its
      // deliveries is leased at any moment.
      const leased = (
        await Promise.all(stuckEvents.map(async (id) => (await deliveries(own, id)).slice(-1)[0]))
      ).filter((row) => row?.lock_token !== null);
      expect(leased.length).toBeLessThanOrEqual(1);
    } finally {
      await own.close();
      await slow.stop();
      await fast.stop();
    }
  });
});

describe('Webhook delivery across restarts and instances', () => {
  let receiver: WebhookReceiver;
  let database: { url: string; drop: () => Promise<void> };

  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await receiver.stop();
    await database.drop();
  });

  it('an instance with ROLE=api records events and leaves their delivery to workers', async () => {
    const api = await createTestApp({
      env: { ...HEALTHY, ROLE: 'api' },
      databaseUrl: database.url,
    });
    const m = await api.createMerchant();
    await setEndpoint(api, m, receiver.url);
    const eventId = await createCustomer(api, m);
    await quiet(300);
    expect(await deliveries(api, eventId)).toMatchObject([{ status: 'pending', attempts: 0 }]);
    expect(receiver.forEvent(eventId)).toHaveLength(0);
    // One switch: an api instance schedules no background job at all.
    expect(api.app.get(SchedulerRegistry).getIntervals()).toEqual([]);
    expect(api.app.get(BackgroundWork).enabled).toBe(false);
    const worker = await createTestApp({
      env: { ...HEALTHY, ROLE: 'worker' },
      databaseUrl: database.url,
    });
    try {
      expect(worker.app.get(SchedulerRegistry).getIntervals().sort()).toEqual([
        'billing.charge-run',
        'billing.watch',
        'email-delivery',
        'retention',
        'webhook-delivery',
        'x402.reconcile',
      ]);
      expect(await settled(worker, eventId, 1)).toMatchObject({ status: 'delivered' });
      expect(receiver.forEvent(eventId)).toHaveLength(1);
    } finally {
      await worker.close();
      await api.close();
    }
  });

  it.each([
    [4, 40],
    [64, 200],
  ])(
    'a backlog keeps flowing to a merchant held at its cap (concurrency %i, %i events)',
    async (concurrency, count) => {
      const api = await createTestApp({
        env: { ...HEALTHY, ROLE: 'api' },
        databaseUrl: database.url,
      });
      const sink = await new WebhookReceiver().start();
      let worker: Awaited<ReturnType<typeof createTestApp>> | undefined;
      try {
        const m = await api.createMerchant();
        await setEndpoint(api, m, sink.url);
        const ids = await Promise.all(
          Array.from({ length: count }, (_, i) => createCustomer(api, m, `C${i}`)),
        );
        // A quarter of the slots per merchant, one poll a minute, no NOTIFY after start-up:
        // only finished attempts can claim the rest of the backlog.
        worker = await createTestApp({
          env: {
            ROLE: 'worker',
            WEBHOOK_POLL_INTERVAL_MS: '60000',
            WEBHOOK_CONCURRENCY: String(concurrency),
          },
          databaseUrl: database.url,
        });
        await sink.waitForCount(count, 5000);
        expect(new Set(sink.received.map((r) => r.body.id))).toEqual(new Set(ids));
      } finally {
        await worker?.close();
        await api.close();
        await sink.stop();
      }
    },
  );

  it('a merchant whose endpoint answers fast bursts past its share, up to three quarters of the slots', async () => {
    const api = await createTestApp({
      env: { ...HEALTHY, ROLE: 'api' },
      databaseUrl: database.url,
    });
    const sink = await new WebhookReceiver().start();
    sink.behaviour = { status: 200, delayMs: 20 };
    let worker: Awaited<ReturnType<typeof createTestApp>> | undefined;
    try {
      const m = await api.createMerchant();
      await setEndpoint(api, m, sink.url);
      const ids = await Promise.all(
        Array.from({ length: 80 }, (_, i) => createCustomer(api, m, `B${i}`)),
      );
      // 8 slots, a share of 2: the merchant's first answers come back fast, so it fills the
      // slots no one else needs, all but a share's worth.
      worker = await createTestApp({
        env: { ROLE: 'worker', WEBHOOK_POLL_INTERVAL_MS: '60000', WEBHOOK_CONCURRENCY: '8' },
        databaseUrl: database.url,
      });
      await sink.waitForCount(80, 10_000);
      expect(sink.received.map((r) => r.body.id).sort()).toEqual([...ids].sort());
      expect(sink.maxConcurrent).toBeGreaterThan(2);
      expect(sink.maxConcurrent).toBeLessThanOrEqual(6);
    } finally {
      await worker?.close();
      await api.close();
      await sink.stop();
    }
  });

  it('loses nothing when the receiver is down and the service restarts in between', async () => {
    const first = await createTestApp({ env: HEALTHY, databaseUrl: database.url });
    const m = await first.createMerchant();
    await setEndpoint(first, m, receiver.url);
    await receiver.stop();
    const eventId = await createCustomer(first, m);
    const failed = await settled(first, eventId, 1);
    expect(failed.status).toBe('pending');
    const due = failed.next_attempt_at!;
    await first.close();

    await receiver.start();
    const second = await createTestApp({ env: HEALTHY, databaseUrl: database.url });
    try {
      second.clock.set(new Date(due.getTime() + S));
      expect(await settled(second, eventId, 2)).toMatchObject({
        status: 'delivered',
        attempts: 2,
      });
      expect(receiver.forEvent(eventId)).toHaveLength(1);
    } finally {
      await second.close();
    }
  });

  it('an attempt leased by an instance that died is taken again once the lease ends', async () => {
    const app = await createTestApp({
      env: { ...HEALTHY, ROLE: 'api' },
      databaseUrl: database.url,
    });
    const m = await app.createMerchant();
    await setEndpoint(app, m, receiver.url);
    const eventId = await createCustomer(app, m);
    // What a claim leaves behind when its instance dies before recording the result.
    await app.sql(
      `UPDATE webhook_deliveries
          SET attempts = 1, lock_token = gen_random_uuid(), leased_until = now() + interval '1 minute'
        WHERE event_id = $1`,
      [eventId.slice(4)],
    );
    await app.close();

    const worker = await createTestApp({ env: HEALTHY, databaseUrl: database.url });
    try {
      // Moving the domain clock does not free a lease: it is held in the database's real time.
      worker.clock.advance(3600 * S);
      await quiet(300);
      expect(receiver.forEvent(eventId)).toHaveLength(0);
      // The lease runs out (a minute later in real life; here, moved back).
      await worker.sql(
        `UPDATE webhook_deliveries SET leased_until = now() - interval '1 second' WHERE event_id = $1`,
        [eventId.slice(4)],
      );
      expect(await settled(worker, eventId, 2)).toMatchObject({ status: 'delivered' });
      expect(receiver.forEvent(eventId)).toHaveLength(1);
    } finally {
      await worker.close();
    }
  });

  it("a claim reaches past the rows another instance's claim holds, within the merchant's room", async () => {
    const api = await createTestApp({
      env: { ...HEALTHY, ROLE: 'api' },
      databaseUrl: database.url,
    });
    const other = new Client({ connectionString: database.url });
    await other.connect();
    try {
      const m = await api.createMerchant();
      await setEndpoint(api, m, receiver.url);
      for (let i = 0; i < 8; i++) await createCustomer(api, m, `C${i}`);
      const due = (
        await api.sql<{ id: string }>(
          `SELECT id FROM webhook_deliveries WHERE merchant_id = $1 AND status = 'pending'
            ORDER BY next_attempt_at, id`,
          [m.id],
        )
      ).map((row) => row.id);
      expect(due).toHaveLength(8);
      // Another instance's claim, under way: it holds the three oldest rows.
      await other.query('BEGIN');
      await other.query('SELECT 1 FROM webhook_deliveries WHERE id = ANY($1) FOR UPDATE', [
        due.slice(0, 3),
      ]);
      const claimed = await api.app.get(WebhookDeliveriesRepository).claim({
        now: api.clock.now(),
        limit: 10,
        candidates: 20,
        inFlight: new Map([[m.id, 1]]),
        perMerchantCap: 4,
        lockToken: randomUUID(),
        leaseMs: 60_000,
      });
      // Its room (4 - 1 in flight), from the next oldest: not none (choosing the three held rows
      // and skipping them), and not more than its room although five are free.
      expect(claimed.map((row) => row.id).sort()).toEqual(due.slice(3, 6).sort());
    } finally {
      await other.query('ROLLBACK').catch(() => undefined);
      await other.end();
      await api.close();
    }
  });

  it('two instances on one database deliver every event exactly once', async () => {
    const a = await createTestApp({ env: HEALTHY, databaseUrl: database.url });
    // One clock for both, so every event is due for both instances at once: they contend.
    const b = await createTestApp({ env: HEALTHY, databaseUrl: database.url, clock: a.clock });
    try {
      const m = await a.createMerchant();
      await setEndpoint(a, m, receiver.url);
      const before = receiver.received.length;
      const ids = await Promise.all(
        Array.from({ length: 120 }, (_, i) => createCustomer(i % 2 ? a : b, m, `C${i}`)),
      );
      await receiver.waitForCount(before + ids.length, 15_000);
      await quiet(300); // any duplicate would arrive by now
      const got = receiver.received.slice(before).map((r) => r.body.id);
      expect(got).toHaveLength(ids.length);
      expect(new Set(got)).toEqual(new Set(ids));
      // Results are written in batches just after the POSTs: wait for the last batch.
      const counts = async () =>
        (
          await a.sql<{ delivered: string; total: string }>(
            `SELECT count(*) FILTER (WHERE status = 'delivered' AND attempts = 1) AS delivered,
                    count(*) AS total
               FROM webhook_deliveries WHERE merchant_id = $1`,
            [m.id],
          )
        )[0];
      await waitFor(async () => Number((await counts()).delivered) === ids.length, 5000).catch(
        () => undefined,
      );
      // Anything not delivered exactly once, with what the worker recorded (empty when all are).
      expect(
        await a.sql(
          `SELECT status, attempts, last_error, leased_until IS NOT NULL AS leased
             FROM webhook_deliveries
            WHERE merchant_id = $1 AND NOT (status = 'delivered' AND attempts = 1)`,
          [m.id],
        ),
      ).toEqual([]);
      expect(await counts()).toEqual({ delivered: String(ids.length), total: String(ids.length) });
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('Webhook delivery outside localnet (SSRF)', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
    t = await createTestApp({
      env: { ...HEALTHY, SOLANA_CLUSTER: 'devnet' },
      overrides: [{ token: DNS_LOOKUP, value: FAKE_DNS }],
    });
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  it.each([
    ['a loopback IP', (port: number) => `https://127.0.0.1:${port}/hooks`],
    ['localhost', (port: number) => `https://localhost:${port}/hooks`],
    ['the metadata address', () => 'https://169.254.169.254/latest/meta-data'],
  ])('refuses to deliver to %s even when stored behind validation', async (_, url) => {
    const m = await t.createMerchant();
    const port = Number(new URL(receiver.url).port);
    // As if DNS or the stored value changed after the PUT checked it.
    await t.sql('UPDATE merchants SET webhook_url = $2 WHERE id = $1', [m.id, url(port)]);
    const eventId = await createCustomer(t, m);
    const row = await settled(t, eventId, 1);
    expect(row.status).toBe('pending');
    expect(row.last_http_status).toBeNull();
    expect(row.last_error).toMatch(/^Endpoint refused/);
  });

  it('refuses a public-looking name that resolves to loopback, checked in the socket lookup', async () => {
    const m = await t.createMerchant();
    // Accepted when set: the name looks public...
    await setEndpoint(t, m, `https://hooks.rebound.test:${new URL(receiver.url).port}/hooks`);
    const eventId = await createCustomer(t, m);
    const row = await settled(t, eventId, 1);
    // ...but its address is not: refused before any connection is made.
    expect(row).toMatchObject({
      status: 'pending',
      last_http_status: null,
      last_error:
        'Endpoint refused: its host name does not resolve to an address webhooks may be sent to',
    });
  });

  it("says a name that does not resolve exactly as one that resolves where it may not go (the merchant learns nothing of the service's network)", async () => {
    const m = await t.createMerchant();
    await setEndpoint(t, m, 'https://no-such-host.example/hooks');
    const eventId = await createCustomer(t, m);
    const row = await settled(t, eventId, 1);
    expect(row).toMatchObject({
      status: 'pending',
      last_http_status: null,
      last_error:
        'Endpoint refused: its host name does not resolve to an address webhooks may be sent to',
    });
    // What the merchant reads through the API is the same sentence.
    const event = await t.http.get(`/api/events/${eventId}`).set(m.auth).expect(200);
    expect(JSON.stringify(event.body)).not.toMatch(/ENOTFOUND|getaddrinfo/);
  });
});
