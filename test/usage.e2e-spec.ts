import { Keypair } from '@solana/web3.js';
import { UsageService } from '../src/usage/usage.service';
import { billingHelpers } from './helpers/billing';
import { fund } from './helpers/chain-tx';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';

const DAY = 86_400;
const HOUR = 3_600;
const USDC = 1_000_000n;

interface Ingested {
  accepted: number;
  duplicates: number;
  events: { id: string; status: string; subscriptionId: string | null; period: number | null }[];
}
interface Usage {
  period: number;
  events: number;
  units: string;
  billableUnits: string;
  usageAmount: string;
  chargeable: string;
  capped: boolean;
  periodStart: string;
  periodEnd: string;
  acceptsEventsUntil: string;
}
interface Line {
  id: string;
  amount: string;
  period: number;
  subscriptionId: string;
  usage: Record<string, unknown> | null;
}

/**
 * Metered subscriptions (docs/usage.md) through the API, PostgreSQL and localnet: a plan with a
 * meter, usage reported in batches, each period charged at its end (after its grace) for the
 * next period's fixed fee plus its usage beyond the included units, never past the cap the
 * customer authorised.
 */
describe('Metered subscriptions', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let other: TestMerchant;
  let billing: ReturnType<typeof billingHelpers>;
  let planId: string;

  const now = () => t.clock.now().getTime();
  const at = (ms: number) => new Date(ms).toISOString();
  const report = (events: object[], merchant = acme) =>
    t.http.post('/api/usage-events').set(merchant.auth).send({ events });
  const usage = async (id: string) =>
    (await t.http.get(`/api/subscriptions/${id}/usage`).set(acme.auth).expect(200)).body as Usage;
  const lines = async (subscriptionId: string) =>
    (await t.http.get(`/api/payments?subscriptionId=${subscriptionId}`).set(acme.auth).expect(200))
      .body as Line[];
  /** A funded customer subscribed to the metered plan (its first charge taken at once). */
  const subscriber = async (usdc = 100n) => {
    const customer = Keypair.generate();
    fund(t, customer.publicKey.toBase58(), { symbol: 'USDC', amount: usdc * USDC });
    const { subscription } = await billing.subscribe(customer, planId, acme.auth);
    return { customer, wallet: customer.publicKey.toBase58(), id: subscription.id };
  };
  const event = (id: string, subscriptionId: string, quantity: string, ms = now()) => ({
    id,
    subscriptionId,
    meter: 'api_calls',
    quantity,
    timestamp: at(ms),
  });

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        LOCALNET_FINALITY_SLOTS: '0',
        WATCH_INTERVAL_MS: '3600000',
        CHARGE_RUN_INTERVAL_MS: '3600000',
      },
    });
    billing = billingHelpers(t);
    acme = await t.createMerchant('Acme');
    other = await t.createMerchant('Other');
    const plan = await t.http
      .post('/api/plans')
      .set(acme.auth)
      .send({
        label: 'API',
        mint: 'USDC',
        amount: '10',
        intervalSeconds: 30 * DAY,
        meter: { name: 'api_calls', unitPrice: '0.01', includedUnits: '100', cap: '5' },
      })
      .expect(201);
    planId = plan.body.plan.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a plan carries its meter: the fixed fee as amount, the most a period charges, and the checkout says what is authorised in plain words', async () => {
    const { body: plan } = await t.http.get(`/api/plans/${planId}`).set(acme.auth).expect(200);
    expect(plan).toMatchObject({
      amount: '10',
      maxAmountPerPeriod: '15',
      meter: {
        name: 'api_calls',
        unitPrice: '0.01',
        unitSize: '1',
        includedUnits: '100',
        cap: '5',
        graceSeconds: 3600,
      },
    });
    const { body: checkout } = await t.http.get(`/api/checkout/plans/${planId}`).expect(200);
    expect(checkout).toMatchObject({ amount: '15', fixedAmount: '10', amountPerPeriod: '15' });
    const page = (await t.http.get(`/checkout/plans/${planId}`).expect(200)).text;
    expect(page).toContain('10.00 USDC every 30 days + usage (at most 5.00 USDC)');
    expect(page).toContain('never more than 5.00 USDC for usage');
    expect(page.replace(/\s+/g, ' ')).toContain('<strong>up to 15.00 USDC every 30 days</strong>');
  });

  it.each([
    [{ name: 'API calls', unitPrice: '0.01', cap: '5' }, 'meter.name'],
    [{ name: 'calls', unitPrice: '0', cap: '5' }, 'meter.unitPrice'],
    [{ name: 'calls', unitPrice: '0.01', cap: '5', unitSize: '0' }, 'meter.unitSize'],
    [{ name: 'calls', unitPrice: '0.01', cap: '5', includedUnits: '-1' }, 'meter.includedUnits'],
    [{ name: 'calls', unitPrice: '0.01' }, 'meter.cap'],
    [{ name: 'calls', unitPrice: '0.01', cap: '5', graceSeconds: DAY }, 'meter.graceSeconds'],
  ])(
    'a plan with a bad meter %j is a 400 naming %s, and nothing is created',
    async (meter, field) => {
      const before = (await t.http.get('/api/plans').set(acme.auth).expect(200)).body.length;
      const res = await t.http
        .post('/api/plans')
        .set(acme.auth)
        .send({ label: 'Bad', mint: 'USDC', amount: '10', intervalSeconds: DAY, meter })
        .expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(JSON.stringify(res.body.error.details)).toContain(field);
      expect((await t.http.get('/api/plans').set(acme.auth).expect(200)).body.length).toBe(before);
    },
  );

  it('usage counts toward its period; the period is charged after its grace for the fixed fee plus the usage past the included units; late events within the grace count, past it they are refused', async () => {
    const sub = await subscriber();
    // The first charge: the fixed fee alone (no usage before it), the approval covering 15.
    expect(await billing.balance(sub.wallet)).toBe(90n * USDC);
    const [first] = await lines(sub.id);
    expect(first).toMatchObject({ amount: '10', period: 1, usage: null });

    const sent = await report([
      event('a1', sub.id, '50'),
      event('a2', sub.id, '100.5'),
      event('a3', sub.id, '20'),
    ]).expect(200);
    expect(sent.body).toEqual({
      accepted: 3,
      duplicates: 0,
      events: ['a1', 'a2', 'a3'].map((id) => ({
        id,
        status: 'accepted',
        subscriptionId: sub.id,
        period: 1,
      })),
    });
    // Sent again (a retry), with one new: the old ones are duplicates, counted once.
    const again = (
      await report([event('a1', sub.id, '50'), event('a4', sub.id, '0.5')]).expect(200)
    ).body as Ingested;
    expect(again).toMatchObject({ accepted: 1, duplicates: 1 });
    expect(await usage(sub.id)).toMatchObject({
      period: 1,
      events: 4,
      units: '171',
      billableUnits: '71',
      usageAmount: '0.71',
      chargeable: '0.71',
      capped: false,
    });

    // The period is over: not charged while its grace lasts.
    const periodEnd = Date.parse((await usage(sub.id)).periodEnd);
    await billing.advance(30 * DAY);
    expect((await billing.run()).charges.succeeded).toBe(0);
    // A late event of period 1 (within the grace) counts there; a new one goes to period 2.
    const late = (
      await report([
        event('late-1', sub.id, '9', periodEnd - 1000),
        event('p2-1', sub.id, '7', periodEnd + 1000),
      ]).expect(200)
    ).body as Ingested;
    expect(late.events.map((e) => e.period)).toEqual([1, 2]);

    await billing.advance(HOUR);
    expect((await billing.run()).charges).toMatchObject({ succeeded: 1, failed: 0 });
    // 10 fixed + (180 - 100) units x 0.01 = 10.80.
    expect(await billing.balance(sub.wallet)).toBe(90n * USDC - 10_800_000n);
    const second = (await lines(sub.id)).find((l) => l.period === 2)!;
    expect(second).toMatchObject({
      amount: '10.8',
      usage: {
        usagePeriod: 1,
        fixed: '10',
        meter: 'api_calls',
        units: '180',
        includedUnits: '100',
        billableUnits: '80',
        unitPrice: '0.01',
        unitSize: '1',
        usageAmount: '0.8',
        cap: '5',
        capped: false,
      },
    });

    // Period 1 is charged: its late event is refused, and its whole batch with it.
    const closed = await report([
      event('late-2', sub.id, '1', periodEnd - 1000),
      event('p2-2', sub.id, '1'),
    ]).expect(409);
    expect(closed.body.error.code).toBe('USAGE_PERIOD_CLOSED');
    expect(JSON.stringify(closed.body.error.details)).toContain('late-2');
    expect((await usage(sub.id)).units).toBe('7');
    // An event counted before, sent again now that its period is charged: still a duplicate.
    const retried = (await report([event('a1', sub.id, '50', periodEnd - 1000)]).expect(200))
      .body as Ingested;
    expect(retried).toMatchObject({ accepted: 0, duplicates: 1 });
    // p2-2 was not written: sent again on its own, it is accepted (not a duplicate).
    expect((await report([event('p2-2', sub.id, '1')]).expect(200)).body.accepted).toBe(1);
  });

  it('usage past the cap is recorded and reported, never charged beyond what the customer authorised', async () => {
    const sub = await subscriber();
    const events = Array.from({ length: 1000 }, (_, i) => event(`big-${i}`, sub.id, '10'));
    const sent = (await report(events).expect(200)).body as Ingested;
    expect(sent.accepted).toBe(1000);
    expect(await usage(sub.id)).toMatchObject({
      units: '10000',
      usageAmount: '99',
      chargeable: '5',
      capped: true,
    });
    await billing.advance(30 * DAY + HOUR);
    expect((await billing.run()).charges.failed).toBe(0);
    // 10 fixed + the cap (5), not 10 + 99.
    expect(await billing.balance(sub.wallet)).toBe(100n * USDC - 10n * USDC - 15n * USDC);
    const second = (await lines(sub.id)).find((l) => l.period === 2)!;
    expect(second).toMatchObject({ amount: '15', usage: { usageAmount: '99', capped: true } });
    const exceededEvents = () =>
      t.sql<{ payload: { data: { object: Record<string, unknown> } } }>(
        `SELECT payload FROM events WHERE type = 'usage.cap_exceeded' AND merchant_id = $1`,
        [acme.id],
      );
    const exceeded = await exceededEvents();
    // The period is frozen: billed again (a retried or taken-over charge), the same amount,
    // and no second event.
    const again = await t.app
      .get(UsageService)
      .chargeOf({ merchantId: acme.id, subscriptionId: sub.id, period: 2 });
    expect(again).toBe(15n * USDC);
    expect(exceeded.map((e) => e.payload.data.object)).toEqual([
      expect.objectContaining({
        object: 'usage_period',
        subscriptionId: sub.id,
        usagePeriod: 1,
        usageAmount: '99',
        cap: '5',
        charged: '5',
        capped: true,
      }),
    ]);
    expect(await exceededEvents()).toHaveLength(1);
  });

  it("a customer's events go to its one metered subscription; bad batches are 4xx with the events named, and write nothing", async () => {
    const sub = await subscriber();
    const { body: detail } = await t.http
      .get(`/api/subscriptions/${sub.id}`)
      .set(acme.auth)
      .expect(200);
    const byCustomer = (
      await report([
        {
          id: 'c1',
          customerId: detail.customerId,
          meter: 'api_calls',
          quantity: '3',
          timestamp: at(now()),
        },
      ]).expect(200)
    ).body as Ingested;
    expect(byCustomer.events[0]).toMatchObject({ status: 'accepted', subscriptionId: sub.id });

    const refusals: [object[], number, string, string][] = [
      [
        [{ ...event('x1', sub.id, '1'), customerId: detail.customerId }],
        400,
        'VALIDATION_ERROR',
        'exactly one',
      ],
      [
        [{ id: 'x2', meter: 'api_calls', quantity: '1', timestamp: at(now()) }],
        400,
        'VALIDATION_ERROR',
        'exactly one',
      ],
      [
        [{ ...event('x3', sub.id, '1'), meter: 'storage_gb' }],
        400,
        'VALIDATION_ERROR',
        'meter is api_calls',
      ],
      [[event('x4', sub.id, '1', now() + 3_600_000)], 400, 'VALIDATION_ERROR', 'future'],
      [[event('x5', sub.id, '-1')], 400, 'VALIDATION_ERROR', 'quantity'],
      [[event('x6', sub.id, '1.0000001')], 400, 'VALIDATION_ERROR', 'quantity'],
      [
        [{ ...event('x7', sub.id, '1'), timestamp: 'yesterday' }],
        400,
        'VALIDATION_ERROR',
        'timestamp',
      ],
      [[event('x8', '00000000-0000-4000-8000-000000000000', '1')], 404, 'NOT_FOUND', 'x8'],
      [[], 400, 'VALIDATION_ERROR', 'events'],
      [
        Array.from({ length: 1001 }, (_, i) => event(`y${i}`, sub.id, '1')),
        400,
        'VALIDATION_ERROR',
        'events',
      ],
    ];
    for (const [events, status, code, text] of refusals) {
      const res = await report(events).expect(status);
      expect(res.body.error.code).toBe(code);
      expect(JSON.stringify(res.body.error)).toContain(text);
    }
    // Keys that could reach an object's prototype are refused, written as raw JSON.
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const raw = JSON.stringify({ events: [event('p1', sub.id, '1')] }).replace(
        '"id":',
        `"${key}":{"polluted":true},"id":`,
      );
      const res = await t.http
        .post('/api/usage-events')
        .set(acme.auth)
        .set('content-type', 'application/json')
        .send(raw)
        .expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(JSON.stringify(res.body.error)).toContain(key);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // Another merchant's subscription is not found, and its usage is not shown.
    const foreign = await report([event('f1', sub.id, '1')], other).expect(404);
    expect(foreign.body.error.code).toBe('NOT_FOUND');
    await t.http.get(`/api/subscriptions/${sub.id}/usage`).set(other.auth).expect(404);
    expect((await usage(sub.id)).units).toBe('3');
  });
});
