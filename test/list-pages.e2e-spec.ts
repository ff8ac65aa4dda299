import { randomUUID } from 'node:crypto';
import { createTestApp, randomWallet, TestApp, TestMerchant } from './helpers/test-app';

/**
 * Pages of the merchant lists (D6): `limit` (1-1000) and `startingAfter` (an id of the list)
 * slice the list in its own order, newest first, ties in `createdAt` by id; without them the
 * list is the spec's whole array, as before. A page's items are the whole list's, key for key
 * (the page statements count and render as the whole list's do). `startingAfter` naming nothing
 * of the merchant's list (unknown, another merchant's, another kind of record) is a 400, as
 * `GET /api/events` answers.
 */
describe('List pages: limit and startingAfter', () => {
  let t: TestApp;
  let m: TestMerchant;
  let other: TestMerchant;
  /** Another merchant's record of each kind. */
  const foreign: Record<string, string> = {};

  /** A merchant's customers, plans, subscriptions, invoices and ledger lines, with ties. */
  async function seed(merchant: TestMerchant, rows: number): Promise<void> {
    // Three rows share each timestamp: the order within a tie is by id, descending.
    const at = `timestamptz '2026-11-01T00:00:00Z' + ((g / 3) || ' seconds')::interval`;
    await t.sql(
      `INSERT INTO customers (id, merchant_id, wallet_address, email, label, created_at, updated_at)
       SELECT gen_random_uuid(), $1, w, CASE WHEN g % 2 = 0 THEN 'c' || g || '@example.com' END,
              CASE WHEN g % 3 <> 0 THEN 'Customer ' || g END, ${at}, ${at}
         FROM unnest($2::text[]) WITH ORDINALITY AS x(w, g)`,
      [merchant.id, Array.from({ length: rows }, () => randomWallet())],
    );
    await t.sql(
      `INSERT INTO plans (id, merchant_id, label, mint, amount, interval_seconds, active,
         onchain_plan_id, created_at, updated_at)
       SELECT gen_random_uuid(), $1, 'Plan ' || g, 'USDC', 1000000 * g, 2592000, true, g::text,
              ${at}, ${at}
         FROM generate_series(1, $2::int) AS g`,
      [merchant.id, rows],
    );
    // Subscriptions and invoices spread unevenly over the customers (and the cancelled
    // subscriptions over one plan): their counts differ.
    await t.sql(
      `INSERT INTO subscriptions (id, merchant_id, plan_id, customer_id, status,
         current_period_end, onchain_address, created_at, updated_at, scheme)
       SELECT gen_random_uuid(), $1, p.id, c.id,
              CASE WHEN g % 4 = 0 THEN 'Cancelled' ELSE 'Active' END,
              timestamptz '2026-12-01T00:00:00Z', c.wallet_address, ${at}, ${at}, 'token-delegate'
         FROM generate_series(1, $2::int) AS g
         JOIN LATERAL (SELECT id FROM plans WHERE merchant_id = $1
                        ORDER BY created_at, id
                        OFFSET CASE WHEN g % 4 = 0 THEN 0 ELSE g - 1 END LIMIT 1) p ON true
         JOIN LATERAL (SELECT id, wallet_address FROM customers WHERE merchant_id = $1
                        ORDER BY created_at, id OFFSET (g * g) % 7 LIMIT 1) c ON true`,
      [merchant.id, rows],
    );
    await t.sql(
      `INSERT INTO invoices (id, merchant_id, customer_id, number, status, onchain_id, memo, mint,
         line_items, subtotal, tax_bps, tax, total, amount_paid, created_at, updated_at)
       SELECT gen_random_uuid(), $1, c.id, g,
              CASE WHEN g % 3 = 0 THEN 'Cancelled' ELSE 'Open' END, $3 || g,
              CASE WHEN g % 2 = 0 THEN 'PO ' || g END, 'USDC',
              '[{"description":"Work","quantity":1,"unitAmount":"1000000"}]', 1000000, 0, 0,
              1000000, 0, ${at}, ${at}
         FROM generate_series(1, $2::int) AS g
         JOIN LATERAL (SELECT id FROM customers WHERE merchant_id = $1
                        ORDER BY created_at, id OFFSET g % 4 LIMIT 1) c ON true`,
      [merchant.id, rows, randomWallet().slice(0, 30)],
    );
    await t.sql(`INSERT INTO invoice_numbers (merchant_id, last) VALUES ($1, $2)`, [
      merchant.id,
      rows,
    ]);
    await t.sql(
      `INSERT INTO payments (id, created_at, updated_at, merchant_id, kind, status, signature,
         mint, amount, fee, excess)
       SELECT gen_random_uuid(), ${at}, ${at}, $1, CASE WHEN g % 2 = 0 THEN 'unattributed'
              ELSE 'invoice' END, 'finalized', 'sig' || g || $3, 'USDC', 1000000, 0, 0
         FROM generate_series(1, $2::int) AS g`,
      [merchant.id, rows, merchant.id],
    );
  }

  beforeAll(async () => {
    t = await createTestApp();
    m = await t.createMerchant('Pages');
    other = await t.createMerchant('Other');
    await seed(m, 23);
    await seed(other, 2);
    for (const [kind, table] of [
      ['invoices', 'invoices'],
      ['customers', 'customers'],
      ['subscriptions', 'subscriptions'],
      ['plans', 'plans'],
      ['payments', 'payments'],
    ]) {
      const [row] = await t.sql<{ id: string }>(
        `SELECT id FROM ${table} WHERE merchant_id = $1 LIMIT 1`,
        [other.id],
      );
      foreign[kind] = row.id;
    }
  });
  afterAll(() => t.close());

  const get = (path: string, query: Record<string, unknown> = {}, who = () => m) =>
    t.http.get(path).query(query).set(who().auth);
  const ids = (body: { id: string }[]) => body.map((item) => item.id);

  /** Every page of `limit` in turn, each after the last id of the one before. */
  async function allPages(path: string, query: Record<string, unknown>, limit: number) {
    const pages: { id: string }[][] = [];
    let after: string | undefined;
    for (;;) {
      const res = await get(path, { ...query, limit, startingAfter: after }).expect(200);
      pages.push(res.body);
      if (res.body.length < limit) return pages;
      after = res.body[res.body.length - 1].id;
    }
  }

  describe.each([
    ['/api/invoices', 'invoices', {}],
    ['/api/invoices', 'invoices', { status: 'Open' }],
    ['/api/invoices', 'invoices', { search: 'po 1' }],
    ['/api/invoices', 'invoices', { search: 'customer', status: 'Open' }],
    ['/api/customers', 'customers', {}],
    ['/api/customers', 'customers', { search: 'EXAMPLE' }],
    ['/api/subscriptions', 'subscriptions', {}],
    ['/api/subscriptions', 'subscriptions', { status: 'Active' }],
    ['/api/plans', 'plans', {}],
    ['/api/payments', 'payments', {}],
    ['/api/payments', 'payments', { kind: 'unattributed' }],
  ])('GET %s (%s) %j', (path, kind, filters) => {
    let whole: { id: string; createdAt: string }[];

    beforeAll(async () => {
      whole = (await get(path, filters).expect(200)).body;
    });

    it('without limit and startingAfter is the whole list, newest first, ties by id', () => {
      expect(whole.length).toBeGreaterThan(3);
      const order = whole.map((item) => [item.createdAt, item.id].join(' '));
      // ISO timestamps and lower-case UUIDs sort as text as they do in PostgreSQL.
      expect(order).toEqual([...order].sort().reverse());
      const tied = whole.filter((item, i) => i > 0 && item.createdAt === whole[i - 1].createdAt);
      expect(tied.length).toBeGreaterThan(0);
    });

    it('pages through the whole list: the same items, key for key, in the same order', async () => {
      for (const limit of [1, 4, whole.length, whole.length + 1]) {
        const pages = await allPages(path, filters, limit);
        expect(pages.flat()).toEqual(whole);
        for (const page of pages.slice(0, -1)) expect(page).toHaveLength(limit);
        // The last page is shorter than `limit`: empty when the one before ended the list.
        expect(pages.at(-1)!.length).toBe(whole.length % limit);
      }
    });

    it('takes `limit` alone (the first page) and `startingAfter` alone (all the rest)', async () => {
      const first = await get(path, { ...filters, limit: 2 }).expect(200);
      expect(first.body).toEqual(whole.slice(0, 2));
      const rest = await get(path, { ...filters, startingAfter: whole[1].id }).expect(200);
      expect(rest.body).toEqual(whole.slice(2));
      const upper = await get(path, { ...filters, startingAfter: whole[1].id.toUpperCase() });
      expect(upper.body).toEqual(whole.slice(2));
      const end = await get(path, { ...filters, limit: 5, startingAfter: whole.at(-1)!.id });
      expect(end.status).toBe(200);
      expect(end.text).toBe('[]');
    });

    it('refuses a startingAfter naming nothing of this list with 400 VALIDATION_ERROR', async () => {
      const noun = kind.replace(/s$/, '');
      const otherKind = kind === 'customers' ? foreign.plans : foreign.customers;
      for (const startingAfter of [foreign[kind], randomUUID(), otherKind]) {
        const res = await get(path, { ...filters, limit: 2, startingAfter }).expect(400);
        expect(res.body.error).toMatchObject({
          code: 'VALIDATION_ERROR',
          message: `startingAfter: no such ${noun}`,
          details: [{ field: 'startingAfter', message: `no such ${noun}` }],
        });
      }
      // The other merchant, for its part, pages its own list with its own id.
      const own = await get(path, { startingAfter: foreign[kind] }, () => other).expect(200);
      expect(ids(own.body)).not.toContain(foreign[kind]);
    });

    it.each([
      [{ limit: 0 }, 'limit'],
      [{ limit: 1001 }, 'limit'],
      [{ limit: -1 }, 'limit'],
      [{ limit: 1.5 }, 'limit'],
      [{ limit: 'ten' }, 'limit'],
      [{ limit: '' }, 'limit'],
      [{ limit: [1, 2] }, 'limit'],
      [{ startingAfter: 'INV-000001' }, 'startingAfter'],
      [{ startingAfter: '' }, 'startingAfter'],
      [{ startingAfter: [randomUUID(), randomUUID()] }, 'startingAfter'],
    ])('refuses %j with 400 VALIDATION_ERROR', async (query, field) => {
      const res = await get(path, { ...filters, ...query }).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    });
  });

  it('takes 1000 as a limit (the most a page gives)', async () => {
    const res = await get('/api/customers', { limit: 1000 }).expect(200);
    expect(res.body).toHaveLength(23);
  });

  it('pages a search as the search orders it, wherever the cursor row stands in the filter', async () => {
    // The cursor may be a row the filter leaves out: the page starts after its place.
    const whole = (await get('/api/invoices').expect(200)).body as { id: string; status: string }[];
    const cancelled = whole.findIndex((invoice) => invoice.status === 'Cancelled');
    const open = whole.slice(cancelled + 1).filter((invoice) => invoice.status === 'Open');
    const res = await get('/api/invoices', {
      status: 'Open',
      startingAfter: whole[cancelled].id,
    }).expect(200);
    expect(ids(res.body)).toEqual(ids(open));
  });
});
