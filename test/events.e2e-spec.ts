import { createTestApp, randomWallet, TestApp, TestMerchant } from './helpers/test-app';
import { waitFor, WebhookReceiver } from './helpers/webhook-receiver';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const EVT = /^evt_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface EventBody {
  id: string;
  type: string;
  createdAt: string;
  data: { object: Record<string, unknown> };
  delivery: Record<string, unknown> | null;
}

describe('Events API and emission', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let acme: TestMerchant;
  let globex: TestMerchant;

  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
    t = await createTestApp({ env: { WEBHOOK_POLL_INTERVAL_MS: '30' } });
    acme = await t.createMerchant('Acme');
    globex = await t.createMerchant('Globex');
    await t.http
      .put('/api/settings/webhook')
      .set(acme.auth)
      .send({ webhookUrl: receiver.url })
      .expect(200);
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  async function events(m: TestMerchant, query = ''): Promise<EventBody[]> {
    const res = await t.http.get(`/api/events${query}`).set(m.auth).expect(200);
    return res.body as EventBody[];
  }

  describe('customer events', () => {
    it('create, change and PATCH emit created/updated with the API object; no-ops emit nothing', async () => {
      const m = await t.createMerchant();
      const wallet = randomWallet();
      const created = await t.http
        .post('/api/customers')
        .set(m.auth)
        .send({ walletAddress: wallet, label: 'Ada' })
        .expect(201);
      t.clock.advance(1000);
      await t.http.post('/api/customers').set(m.auth).send({ walletAddress: wallet, label: 'Ada' });
      await t.http.patch(`/api/customers/${created.body.id}`).set(m.auth).send({ label: 'Ada' });
      await t.http.patch(`/api/customers/${created.body.id}`).set(m.auth).send({});
      expect(await events(m)).toHaveLength(1); // the three no-ops recorded nothing

      t.clock.advance(1000);
      const upserted = await t.http
        .post('/api/customers')
        .set(m.auth)
        .send({ walletAddress: wallet, email: 'ada@example.com' })
        .expect(201);
      t.clock.advance(1000);
      const patched = await t.http
        .patch(`/api/customers/${created.body.id}`)
        .set(m.auth)
        .send({ label: null })
        .expect(200);

      const list = await events(m);
      expect(list.map((e) => e.type)).toEqual([
        'customer.updated',
        'customer.updated',
        'customer.created',
      ]);
      expect(list.map((e) => e.data.object)).toEqual([patched.body, upserted.body, created.body]);
      for (const e of list) {
        expect(e.id).toMatch(EVT);
        expect(e.createdAt).toMatch(ISO_MS);
        expect(e.delivery).toBeNull(); // this merchant has no endpoint
      }
      expect(list[0].createdAt).toBe(patched.body.updatedAt);
    });

    it('concurrent identical upserts record one customer.created and nothing else', async () => {
      const m = await t.createMerchant();
      const wallets = Array.from({ length: 20 }, () => randomWallet());
      const responses = await Promise.all(
        wallets.flatMap((walletAddress) =>
          [1, 2, 3].map(() =>
            t.http.post('/api/customers').set(m.auth).send({ walletAddress, label: 'Same' }),
          ),
        ),
      );
      expect(responses.every((r) => r.status === 201)).toBe(true);
      const rows = await t.sql<{ type: string; n: string }>(
        'SELECT type, count(*) AS n FROM events WHERE merchant_id = $1 GROUP BY type',
        [m.id],
      );
      expect(rows).toEqual([{ type: 'customer.created', n: '20' }]);
    });

    it('a PATCH that only repeats current values keeps updatedAt', async () => {
      const m = await t.createMerchant();
      const created = await t.http
        .post('/api/customers')
        .set(m.auth)
        .send({ walletAddress: randomWallet(), label: 'Same', email: 's@example.com' });
      t.clock.advance(5000);
      const res = await t.http
        .patch(`/api/customers/${created.body.id}`)
        .set(m.auth)
        .send({ label: 'Same', email: 's@example.com' })
        .expect(200);
      expect(res.body).toEqual(created.body);
    });
  });

  describe('atomicity', () => {
    afterEach(async () => {
      await t.sql('DROP TRIGGER IF EXISTS fail_events ON events');
      await t.sql('DROP FUNCTION IF EXISTS fail_event_insert()');
    });

    /** Makes recording an event fail inside the database, after the change it belongs to. */
    async function breakEventsFor(m: TestMerchant): Promise<void> {
      await t.sql(`CREATE FUNCTION fail_event_insert() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'event store unavailable'; END $$`);
      await t.sql(`CREATE TRIGGER fail_events BEFORE INSERT ON events FOR EACH ROW
        WHEN (NEW.merchant_id = '${m.id}') EXECUTE FUNCTION fail_event_insert()`);
    }

    it('a customer is not created when its event cannot be recorded', async () => {
      const m = await t.createMerchant();
      await breakEventsFor(m);
      const wallet = randomWallet();
      const res = await t.http
        .post('/api/customers')
        .set(m.auth)
        .send({ walletAddress: wallet, label: 'Lost' })
        .expect(500);
      expect(res.body.error.code).toBe('INTERNAL_ERROR');
      expect(await t.sql('SELECT 1 FROM customers WHERE wallet_address = $1', [wallet])).toEqual(
        [],
      );
      expect(await t.sql('SELECT 1 FROM events WHERE merchant_id = $1', [m.id])).toEqual([]);
    });

    it('a PATCH rolls back with its event', async () => {
      const m = await t.createMerchant();
      const created = await t.http
        .post('/api/customers')
        .set(m.auth)
        .send({ walletAddress: randomWallet(), label: 'Kept' })
        .expect(201);
      await breakEventsFor(m);
      await t.http
        .patch(`/api/customers/${created.body.id}`)
        .set(m.auth)
        .send({ label: 'Changed' })
        .expect(500);
      const [row] = await t.sql('SELECT label FROM customers WHERE id = $1', [created.body.id]);
      expect(row.label).toBe('Kept');
      expect(await t.sql('SELECT type FROM events WHERE merchant_id = $1', [m.id])).toEqual([
        { type: 'customer.created' },
      ]);
    });
  });

  describe('GET /api/events', () => {
    let ids: string[];

    beforeAll(async () => {
      // Five events for acme: three created, two updated, one second apart.
      const wallets = [randomWallet(), randomWallet(), randomWallet()];
      for (const w of wallets) {
        t.clock.advance(1000);
        await t.http.post('/api/customers').set(acme.auth).send({ walletAddress: w });
      }
      for (const w of wallets.slice(0, 2)) {
        t.clock.advance(1000);
        await t.http.post('/api/customers').set(acme.auth).send({ walletAddress: w, label: 'L' });
      }
      ids = (await events(acme)).map((e) => e.id);
      await waitFor(async () =>
        (await events(acme)).every((e) => e.delivery?.status === 'delivered'),
      );
    });

    it('lists newest first with each latest delivery', async () => {
      const list = await events(acme);
      expect(list).toHaveLength(5);
      expect(list.map((e) => e.type)).toEqual([
        'customer.updated',
        'customer.updated',
        'customer.created',
        'customer.created',
        'customer.created',
      ]);
      const times = list.map((e) => Date.parse(e.createdAt));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
      expect(Object.keys(list[0]).sort()).toEqual(['createdAt', 'data', 'delivery', 'id', 'type']);
      expect(list[0].delivery).toEqual({
        status: 'delivered',
        attempts: 1,
        lastAttemptAt: expect.stringMatching(ISO_MS),
        lastHttpStatus: 200,
        lastError: null,
        nextAttemptAt: null,
        deliveredAt: expect.stringMatching(ISO_MS),
      });
    });

    it('filters by type', async () => {
      const list = await events(acme, '?type=customer.created');
      expect(list.map((e) => e.id)).toEqual(ids.slice(2));
    });

    it('pages with limit and startingAfter', async () => {
      const page1 = await events(acme, '?limit=2');
      expect(page1.map((e) => e.id)).toEqual(ids.slice(0, 2));
      const page2 = await events(acme, `?limit=2&startingAfter=${page1[1].id}`);
      expect(page2.map((e) => e.id)).toEqual(ids.slice(2, 4));
      const page3 = await events(acme, `?limit=2&startingAfter=${page2[1].id}`);
      expect(page3.map((e) => e.id)).toEqual(ids.slice(4));
      expect(await events(acme, `?startingAfter=${ids[4]}`)).toEqual([]);
    });

    it.each([
      ['an unknown type', '?type=customer.deleted', 'type'],
      ['limit 0', '?limit=0', 'limit'],
      ['limit 1001', '?limit=1001', 'limit'],
      ['a non-numeric limit', '?limit=ten', 'limit'],
      ['a malformed cursor', '?startingAfter=abc', 'startingAfter'],
      ['an unknown parameter', '?status=Paid', 'status'],
    ])('rejects %s with VALIDATION_ERROR', async (_, query, field) => {
      const res = await t.http.get(`/api/events${query}`).set(acme.auth).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details[0].field).toBe(field);
    });

    it("rejects a cursor that is another merchant's event", async () => {
      const res = await t.http
        .get(`/api/events?startingAfter=${ids[0]}`)
        .set(globex.auth)
        .expect(400);
      expect(res.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: [{ field: 'startingAfter', message: 'no such event' }],
      });
    });

    it('shows each merchant only its own events', async () => {
      await t.http.post('/api/customers').set(globex.auth).send({ walletAddress: randomWallet() });
      const theirs = await events(globex);
      expect(theirs.length).toBeGreaterThan(0);
      expect(theirs.some((e) => ids.includes(e.id))).toBe(false);
      expect((await events(acme)).map((e) => e.id)).toEqual(ids);
    });
  });

  describe('GET /api/events/:id', () => {
    it('returns the event as delivered, plus its delivery', async () => {
      const [latest] = await events(acme);
      const res = await t.http.get(`/api/events/${latest.id}`).set(acme.auth).expect(200);
      expect(res.body).toEqual(latest);
      const [hook] = receiver.forEvent(latest.id);
      expect(hook.body).toEqual({
        id: latest.id,
        type: latest.type,
        createdAt: latest.createdAt,
        data: latest.data,
      });
    });

    it.each([
      ['another merchant', (id: string) => id, () => globex],
      ['an unknown id', () => 'evt_00000000-0000-4000-8000-000000000000', () => acme],
      ['a bare UUID', (id: string) => id.slice(4), () => acme],
      ['garbage', () => 'evt_nope', () => acme],
    ])('is NOT_FOUND for %s', async (_, path, who) => {
      const [latest] = await events(acme);
      const res = await t.http
        .get(`/api/events/${path(latest.id)}`)
        .set(who().auth)
        .expect(404);
      expect(res.body.error).toMatchObject({ code: 'NOT_FOUND', message: 'Event not found' });
    });
  });

  describe('POST /api/events/:id/redeliver', () => {
    it('queues a new delivery that sends the same bytes again', async () => {
      const [latest] = await events(acme);
      const before = receiver.forEvent(latest.id);
      expect(before).toHaveLength(1);
      const res = await t.http
        .post(`/api/events/${latest.id}/redeliver`)
        .set(acme.auth)
        .expect(202);
      expect(res.body).toMatchObject({ id: latest.id, type: latest.type, data: latest.data });
      // The new delivery, not the original one (created in the same millisecond of test time).
      expect(res.body.delivery).toEqual({
        status: 'pending',
        attempts: 0,
        lastAttemptAt: null,
        lastHttpStatus: null,
        lastError: null,
        nextAttemptAt: t.clock.now().toISOString(),
        deliveredAt: null,
      });
      await waitFor(() => receiver.forEvent(latest.id).length === 2);
      const [first, second] = receiver.forEvent(latest.id);
      expect(second.rawBody).toBe(first.rawBody);
      expect(second.headers['service-event-id']).toBe(latest.id);
      const rows = await t.sql<{ status: string }>(
        'SELECT status FROM webhook_deliveries WHERE event_id = $1 ORDER BY created_at, id',
        [latest.id.slice(4)],
      );
      await waitFor(
        async () =>
          (
            await t.sql<{ n: string }>(
              `SELECT count(*) AS n FROM webhook_deliveries WHERE event_id = $1 AND status = 'delivered'`,
              [latest.id.slice(4)],
            )
          )[0].n === '2',
      );
      expect(rows).toHaveLength(2);
    });

    it('redelivers an event recorded while no endpoint was set, once one is', async () => {
      const m = await t.createMerchant();
      await t.http.post('/api/customers').set(m.auth).send({ walletAddress: randomWallet() });
      const [event] = await events(m);
      expect(event.delivery).toBeNull();
      const refused = await t.http
        .post(`/api/events/${event.id}/redeliver`)
        .set(m.auth)
        .expect(400);
      expect(refused.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: [{ field: 'webhookUrl' }],
      });
      expect(
        await t.sql('SELECT 1 FROM webhook_deliveries WHERE event_id = $1', [event.id.slice(4)]),
      ).toEqual([]);

      await t.http.put('/api/settings/webhook').set(m.auth).send({ webhookUrl: receiver.url });
      await t.http.post(`/api/events/${event.id}/redeliver`).set(m.auth).expect(202);
      await waitFor(() => receiver.forEvent(event.id).length === 1);
    });

    it("is NOT_FOUND for another merchant's event and queues nothing", async () => {
      const [latest] = await events(acme);
      const count = async () =>
        (
          await t.sql<{ n: string }>(
            'SELECT count(*) AS n FROM webhook_deliveries WHERE event_id = $1',
            [latest.id.slice(4)],
          )
        )[0].n;
      const before = await count();
      const res = await t.http
        .post(`/api/events/${latest.id}/redeliver`)
        .set(globex.auth)
        .expect(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
      expect(await count()).toBe(before);
    });
  });

  it('needs an API key', async () => {
    await t.http.get('/api/events').expect(401);
    await t.http.post('/api/events/evt_00000000-0000-4000-8000-000000000000/redeliver').expect(401);
  });
});
