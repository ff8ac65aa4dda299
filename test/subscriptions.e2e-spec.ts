import { Db } from '../src/database/db';
import { classify } from '../src/common/filters/all-exceptions.filter';
import { SubscriptionAction } from '../src/subscriptions/subscription-status';
import { toSubscriptionResponse } from '../src/subscriptions/subscription.mapper';
import { SubscriptionsRepository } from '../src/subscriptions/subscriptions.repository';
import { SubscriptionsService } from '../src/subscriptions/subscriptions.service';
import { createTestApp, randomWallet, TestApp, TestMerchant } from './helpers/test-app';

const KEYS = [
  'cancelAtPeriodEnd',
  'cancelledAt',
  'customerCancelledAt',
  'createdAt',
  'currentPeriodEnd',
  'customer',
  'customerId',
  'failureReason',
  'id',
  'lastChargeAt',
  'onchainAddress',
  'plan',
  'planId',
  'status',
  'updatedAt',
].sort();

describe('Subscriptions', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let globex: TestMerchant;
  let planId: string;
  let service: SubscriptionsService;

  /** Through the domain, as the billing engine will when a subscribe is confirmed. */
  const subscribe = (m: TestMerchant, plan: string, wallet = randomWallet()) =>
    t.app.get(Db).transaction((em) =>
      service.create(em, m.id, {
        planId: plan,
        walletAddress: wallet,
        onchainAddress: wallet,
        scheme: 'token-delegate',
      }),
    );
  const move = (m: TestMerchant, id: string, action: SubscriptionAction, failureReason?: string) =>
    t.app.get(Db).transaction((em) => service.transition(em, m.id, id, action, { failureReason }));
  const post = (m: TestMerchant, id: string, action: string) =>
    t.http.post(`/api/subscriptions/${id}/${action}`).set(m.auth);
  const eventsOf = (id: string) =>
    t.sql<{
      type: string;
      payload: { data: { object: { status: string }; previousAttributes?: unknown } };
    }>(
      `SELECT type, payload FROM events WHERE payload->'data'->'object'->>'id' = $1 ORDER BY created_at, id`,
      [id],
    );

  beforeAll(async () => {
    t = await createTestApp();
    service = t.app.get(SubscriptionsService);
    acme = await t.createMerchant('Acme');
    globex = await t.createMerchant('Globex');
    const plan = await t.http
      .post('/api/plans')
      .set(acme.auth)
      .send({ label: 'Pro', mint: 'USDC', amount: '9.99', intervalSeconds: 2_592_000 })
      .expect(201);
    planId = plan.body.plan.id;
  });
  afterAll(() => t.close());

  describe('created through the domain', () => {
    it('starts Active with its first charge due now, snapshots, and subscription.created', async () => {
      const wallet = randomWallet();
      const sub = await subscribe(acme, planId, wallet);
      expect(Object.keys(sub).sort()).toEqual(KEYS);
      expect(sub).toMatchObject({
        planId,
        status: 'Active',
        currentPeriodEnd: t.clock.now().toISOString(),
        cancelledAt: null,
        cancelAtPeriodEnd: false,
        customerCancelledAt: null,
        lastChargeAt: null,
        failureReason: null,
        onchainAddress: wallet,
        plan: {
          id: planId,
          label: 'Pro',
          amount: '9.99',
          mint: 'USDC',
          intervalSeconds: 2_592_000,
        },
        customer: { walletAddress: wallet, label: null },
      });
      expect((await eventsOf(sub.id)).map((e) => e.type)).toEqual(['subscription.created']);
      const [customer] = await t.sql('SELECT merchant_id FROM customers WHERE id = $1', [
        sub.customerId,
      ]);
      expect(customer).toEqual({ merchant_id: acme.id });
    });

    it('refuses an inactive plan, another merchant’s plan, and a second live subscription', async () => {
      const wallet = randomWallet();
      await subscribe(acme, planId, wallet);
      const duplicate = await subscribe(acme, planId, wallet).catch((e: unknown) => e);
      expect(classify(duplicate)).toMatchObject({ code: 'CONFLICT' });
      await expect(subscribe(globex, planId)).rejects.toMatchObject({ code: 'NOT_FOUND' });
      const inactive = await t.http
        .post('/api/plans')
        .set(acme.auth)
        .send({ label: 'Old', mint: 'USDC', amount: '1', intervalSeconds: 86_400 })
        .expect(201);
      await t.http
        .patch(`/api/plans/${inactive.body.plan.id}`)
        .set(acme.auth)
        .send({ active: false })
        .expect(200);
      await expect(subscribe(acme, inactive.body.plan.id)).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
        message: 'Plan is not active: it accepts no new subscribers',
      });
      // A cancelled subscription is not live: the customer may subscribe again.
      const again = await subscribe(acme, planId, wallet).catch(() => undefined);
      expect(again).toBeUndefined();
      const [live] = await t.sql<{ id: string }>(
        `SELECT s.id FROM subscriptions s JOIN customers c ON c.id = s.customer_id
          WHERE c.wallet_address = $1`,
        [wallet],
      );
      await post(acme, live.id, 'cancel').expect(200);
      expect((await subscribe(acme, planId, wallet)).status).toBe('Active');
    });
  });

  describe('GET /api/subscriptions', () => {
    it('lists newest first with snapshots, filters by status, never another merchant’s', async () => {
      const m = await t.createMerchant('Lister');
      const plan = await t.http
        .post('/api/plans')
        .set(m.auth)
        .send({ label: 'P', mint: 'PYUSD', amount: '5', intervalSeconds: 86_400 })
        .expect(201);
      const first = await subscribe(m, plan.body.plan.id);
      t.clock.advance(1000);
      const second = await subscribe(m, plan.body.plan.id);
      await post(m, first.id, 'pause').expect(200);
      const all = await t.http.get('/api/subscriptions').set(m.auth).expect(200);
      expect(all.body.map((s: { id: string }) => s.id)).toEqual([second.id, first.id]);
      expect(Object.keys(all.body[0]).sort()).toEqual(KEYS);
      // PostgreSQL renders the list: each item is exactly what GET returns, in the same order.
      for (const item of all.body) {
        const got = await t.http.get(`/api/subscriptions/${item.id}`).set(m.auth).expect(200);
        expect(item).toEqual(got.body);
        expect(Object.keys(item)).toEqual(Object.keys(got.body));
      }
      const pastDue = await t.http.get('/api/subscriptions?status=PastDue').set(m.auth).expect(200);
      expect(pastDue.body.map((s: { id: string }) => s.id)).toEqual([first.id]);
      const other = await t.http.get('/api/subscriptions').set(globex.auth).expect(200);
      expect(other.body).toEqual([]);
      for (const bad of ['Trialing', 'active', '']) {
        const res = await t.http.get(`/api/subscriptions?status=${bad}`).set(m.auth).expect(400);
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
      }
    });

    it('each list item is JSON.stringify of the mapper’s object, hostile text and nulls too', async () => {
      const m = await t.createMerchant('Hostile');
      const plan = await t.http
        .post('/api/plans')
        .set(m.auth)
        .send({ label: 'P', mint: 'USDC', amount: '12.345678', intervalSeconds: 86_400 })
        .expect(201);
      const hostile = [
        'quote " back\\slash \\u0041 tab\tnew\nline',
        'unicode é ß 漢字 \u2028 \u2029 </script> \u0001',
        'emoji 🎉👩‍👩‍👧 end',
      ];
      const subs = [];
      for (const label of hostile) {
        const sub = await subscribe(m, plan.body.plan.id);
        await t.sql('UPDATE customers SET label = $1 WHERE id = $2', [label, sub.customerId]);
        await t.sql('UPDATE subscriptions SET failure_reason = $1 WHERE id = $2', [
          label.slice(0, 64),
          sub.id,
        ]);
        subs.push(sub);
        t.clock.advance(1000);
      }
      subs.push(await subscribe(m, plan.body.plan.id)); // nulls: no customer label, no failure
      await t.sql('UPDATE plans SET label = $1 WHERE id = $2', [
        hostile.join(' '),
        plan.body.plan.id,
      ]);
      const list = await t.http.get('/api/subscriptions').set(m.auth).expect(200);
      const repository = t.app.get(SubscriptionsRepository);
      const db = t.app.get(Db);
      const expected: string[] = [];
      for (const sub of subs.reverse()) {
        const row = await repository.find(db, m.id, sub.id);
        expected.push(JSON.stringify(toSubscriptionResponse(row!)));
        // The same text, key for key and in order, as GET of the one subscription.
        const one = await t.http.get(`/api/subscriptions/${sub.id}`).set(m.auth).expect(200);
        expect(JSON.stringify(one.body)).toBe(expected[expected.length - 1]);
      }
      expect(list.text).toBe(`[${expected.join(',')}]`);
      const parsed = JSON.parse(list.text) as { customer: { label: string | null } }[];
      expect(parsed.map((s) => s.customer.label)).toEqual([null, ...[...hostile].reverse()]);
    });

    it('gets one; another merchant’s, unknown and malformed ids are 404 NOT_FOUND everywhere', async () => {
      const sub = await subscribe(acme, planId);
      const got = await t.http.get(`/api/subscriptions/${sub.id}`).set(acme.auth).expect(200);
      expect(got.body).toEqual(sub);
      for (const [who, id] of [
        [globex, sub.id],
        [acme, '00000000-0000-4000-8000-000000000000'],
        [acme, 'sub_1'],
      ] as const) {
        await t.http.get(`/api/subscriptions/${id}`).set(who.auth).expect(404);
        for (const action of ['pause', 'resume', 'cancel']) {
          const res = await post(who, id, action).expect(404);
          expect(res.body.error).toMatchObject({
            code: 'NOT_FOUND',
            message: 'Subscription not found',
          });
        }
      }
      const after = await t.http.get(`/api/subscriptions/${sub.id}`).set(acme.auth).expect(200);
      expect(after.body.status).toBe('Active');
    });
  });

  describe('pause, resume, cancel', () => {
    it('pause: Active -> PastDue, subscription.paused with the previous status', async () => {
      const sub = await subscribe(acme, planId);
      t.clock.advance(1000);
      const res = await post(acme, sub.id, 'pause').expect(200);
      expect(res.body).toMatchObject({ status: 'PastDue', failureReason: null, cancelledAt: null });
      const events = await eventsOf(sub.id);
      expect(events.map((e) => e.type)).toEqual(['subscription.created', 'subscription.paused']);
      expect(events[1].payload.data).toEqual({
        object: res.body,
        previousAttributes: { status: 'Active' },
      });
    });

    it('resume: the next charge at the end of the period paid for, or now when it has passed', async () => {
      const sub = await subscribe(acme, planId);
      // The first period is charged (as the billing engine will): paid for 30 days from now.
      t.clock.advance(1000); // events are ordered by their (domain) time
      const charged = await t.app.get(Db).transaction((em) =>
        service.recordCharge(em, acme.id, sub.id, {
          chargedAt: t.clock.now(),
          amount: 9_990_000n,
          period: 1,
        }),
      );
      const periodEnd = new Date(t.clock.now().getTime() + 30 * 86_400_000);
      expect(charged).toMatchObject({
        currentPeriodEnd: periodEnd.toISOString(),
        lastChargeAt: t.clock.now().toISOString(),
      });
      t.clock.advance(1000);
      await post(acme, sub.id, 'pause').expect(200);
      t.clock.advance(86_400_000);
      const early = await post(acme, sub.id, 'resume').expect(200);
      expect(early.body).toMatchObject({
        status: 'Active',
        currentPeriodEnd: periodEnd.toISOString(),
      });
      t.clock.advance(1000); // the next event at a later time than the resume's
      await post(acme, sub.id, 'pause').expect(200);
      t.clock.advance(60 * 86_400_000);
      const late = await post(acme, sub.id, 'resume').expect(200);
      expect(late.body.currentPeriodEnd).toBe(t.clock.now().toISOString());
      expect((await eventsOf(sub.id)).map((e) => e.type)).toEqual([
        'subscription.created',
        'subscription.activated',
        'subscription.paused',
        'subscription.resumed',
        'subscription.paused',
        'subscription.resumed',
      ]);
    });

    it('cancel: cancelledAt set, subscription.canceled; never resumable', async () => {
      const sub = await subscribe(acme, planId);
      t.clock.advance(1000);
      const res = await post(acme, sub.id, 'cancel').expect(200);
      expect(res.body).toMatchObject({
        status: 'Cancelled',
        cancelledAt: t.clock.now().toISOString(),
      });
      const resume = await post(acme, sub.id, 'resume').expect(400);
      expect(resume.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        message: 'Only a PastDue subscription can be resumed (it is Cancelled)',
      });
    });

    /** Every (status, action) pair: the spec's table, nothing more. */
    it('walks every status and action: allowed moves succeed, the others are 400 and change nothing', async () => {
      const make: Record<string, () => Promise<string>> = {
        Active: async () => (await subscribe(acme, planId)).id,
        'PastDue (paused)': async () => {
          const { id } = await subscribe(acme, planId);
          await move(acme, id, 'pause');
          return id;
        },
        'PastDue (charge failed)': async () => {
          const { id } = await subscribe(acme, planId);
          const failed = await move(acme, id, 'chargeFailed', 'insufficient_funds');
          expect(failed).toMatchObject({ status: 'PastDue', failureReason: 'insufficient_funds' });
          return id;
        },
        Cancelled: async () => {
          const { id } = await subscribe(acme, planId);
          await move(acme, id, 'cancel');
          return id;
        },
        Completed: async () => {
          const { id } = await subscribe(acme, planId);
          await move(acme, id, 'complete');
          return id;
        },
      };
      const expected: Record<string, Record<string, [number, string?]>> = {
        Active: { pause: [200, 'PastDue'], resume: [400], cancel: [200, 'Cancelled'] },
        'PastDue (paused)': { pause: [400], resume: [200, 'Active'], cancel: [200, 'Cancelled'] },
        'PastDue (charge failed)': {
          pause: [400],
          resume: [200, 'Active'],
          cancel: [200, 'Cancelled'],
        },
        Cancelled: { pause: [400], resume: [400], cancel: [400] },
        Completed: { pause: [400], resume: [400], cancel: [400] },
      };
      const seen: Record<string, Record<string, [number, string?]>> = {};
      for (const [status, create] of Object.entries(make)) {
        seen[status] = {};
        for (const action of ['pause', 'resume', 'cancel']) {
          const id = await create();
          const before = await t.http.get(`/api/subscriptions/${id}`).set(acme.auth).expect(200);
          const res = await post(acme, id, action);
          if (res.status === 200) {
            seen[status][action] = [200, res.body.status];
            if (action === 'resume') expect(res.body.failureReason).toBeNull();
          } else {
            seen[status][action] = [res.status];
            expect(res.body.error.code).toBe('VALIDATION_ERROR');
            const after = await t.http.get(`/api/subscriptions/${id}`).set(acme.auth);
            expect(after.body).toEqual(before.body);
          }
        }
      }
      expect(seen).toEqual(expected);
    });

    it('a concurrent pause and cancel of one subscription end in one consistent state, one event per success', async () => {
      for (let i = 0; i < 8; i++) {
        const sub = await subscribe(acme, planId);
        const [pause, cancel] = await Promise.all([
          post(acme, sub.id, 'pause'),
          post(acme, sub.id, 'cancel'),
        ]);
        expect(cancel.status).toBe(200); // cancel is allowed from either state
        expect([200, 400]).toContain(pause.status);
        const final = await t.http.get(`/api/subscriptions/${sub.id}`).set(acme.auth).expect(200);
        expect(final.body.status).toBe('Cancelled');
        const types = (await eventsOf(sub.id)).map((e) => e.type);
        expect(types.filter((x) => x === 'subscription.canceled')).toHaveLength(1);
        expect(types.filter((x) => x === 'subscription.paused')).toHaveLength(
          pause.status === 200 ? 1 : 0,
        );
        // The cancel saw the state the pause left, or the pause came second and was refused.
        const canceled = (await eventsOf(sub.id)).find((e) => e.type === 'subscription.canceled');
        expect(canceled?.payload.data.previousAttributes).toEqual({
          status: pause.status === 200 ? 'PastDue' : 'Active',
        });
      }
    });
  });

  describe('counts and the customer detail', () => {
    it('plans count their subscriptions; a customer shows its invoices and subscriptions, newest first', async () => {
      const m = await t.createMerchant('Detail');
      const plan = await t.http
        .post('/api/plans')
        .set(m.auth)
        .send({ label: 'D', mint: 'USDC', amount: '3', intervalSeconds: 86_400 })
        .expect(201);
      const wallet = randomWallet();
      const sub = await subscribe(m, plan.body.plan.id, wallet);
      const invoices = [];
      for (let i = 0; i < 2; i++) {
        t.clock.advance(1000);
        const inv = await t.http
          .post('/api/invoices')
          .set(m.auth)
          .send({
            walletAddress: wallet,
            mint: 'USDC',
            lineItems: [{ description: `Item ${i}`, quantity: 1, unitAmount: '2' }],
          })
          .expect(201);
        invoices.push(inv.body.invoice);
      }
      const plans = await t.http.get('/api/plans').set(m.auth).expect(200);
      expect(plans.body[0]._count).toEqual({ subscriptions: 1 });
      const customers = await t.http.get('/api/customers').set(m.auth).expect(200);
      expect(customers.body[0]._count).toEqual({ invoices: 2, subscriptions: 1 });
      const detail = await t.http.get(`/api/customers/${sub.customerId}`).set(m.auth).expect(200);
      const { customer: _nested, ...withoutCustomer } = invoices[1];
      expect(detail.body.invoices.map((i: { id: string }) => i.id)).toEqual([
        invoices[1].id,
        invoices[0].id,
      ]);
      expect(detail.body.invoices[0]).toEqual(withoutCustomer);
      expect(detail.body.subscriptions).toEqual([sub]);
      await t.http.get(`/api/customers/${sub.customerId}`).set(acme.auth).expect(404);
    });
  });
});
