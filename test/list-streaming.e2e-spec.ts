import { AddressInfo } from 'node:net';
import { get } from 'node:http';
import { Db } from '../src/database/db';
import { SubscriptionsService } from '../src/subscriptions/subscriptions.service';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';

/**
 * The raw outcome of a GET: status, body as received, whether the connection broke, and whether
 * the response was still unfinished after 15 s (`hung`: a client left waiting).
 */
function fetchRaw(
  base: string,
  path: string,
  auth: Record<string, string>,
): Promise<{ status: number; body: string; broken: boolean; hung?: boolean }> {
  return new Promise((resolve) => {
    const req = get(`${base}${path}`, { headers: auth }, (res) => {
      const timer = setTimeout(() => {
        resolve({ status: res.statusCode ?? 0, body: '', broken: false, hung: true });
        req.destroy();
      }, 15_000);
      const chunks: Buffer[] = [];
      let broken = false;
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('aborted', () => (broken = true));
      res.on('error', () => (broken = true));
      res.on('close', () => {
        clearTimeout(timer);
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          broken: broken || !res.complete,
        });
      });
    });
    req.on('error', () => resolve({ status: 0, body: '', broken: true }));
  });
}

/**
 * Lists longer than one cursor batch (1 000 rows): every row once, in order (invoices: array rows;
 * subscriptions: pgtyped's object rows); and a list that fails after its first batch ends the
 * connection rather than leaving the client waiting, and gives its database connection back.
 */
describe('Streamed lists', () => {
  let t: TestApp;
  let m: TestMerchant;
  let base: string;
  const ROWS = 2_345;

  beforeAll(async () => {
    t = await createTestApp({ env: { DATABASE_POOL_SIZE: '3' } });
    m = await t.createMerchant('Big');
    const server = t.app.getHttpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const created = await t.http
      .post('/api/invoices')
      .set(m.auth)
      .send({
        walletAddress: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin',
        mint: 'USDC',
        lineItems: [{ description: 'Seed', quantity: 2, unitAmount: '1.5' }],
      })
      .expect(201);
    // Copies of that invoice, older and older, as if created over time (numbers 2..ROWS).
    await t.sql(
      `INSERT INTO invoices (id, merchant_id, customer_id, number, status, onchain_id, memo, mint,
         line_items, line_items_json, subtotal, tax_bps, tax, total, amount_paid, due_date,
         created_at, updated_at)
       SELECT gen_random_uuid(), i.merchant_id, i.customer_id, g + 1, i.status,
              substr(md5(g::text), 1, 32), 'copy ' || g, i.mint, i.line_items, i.line_items_json,
              i.subtotal, i.tax_bps, i.tax, i.total, 0, NULL,
              i.created_at - (g || ' seconds')::interval, i.created_at - (g || ' seconds')::interval
         FROM invoices i, generate_series(1, $2::int - 1) AS g
        WHERE i.id = $1`,
      [created.body.invoice.id, ROWS],
    );
  });
  afterAll(async () => {
    const server = t.app.getHttpServer();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await t.close();
  });

  it('returns every row of several batches once, newest first', async () => {
    const res = await fetchRaw(base, '/api/invoices', { Authorization: m.auth.Authorization });
    expect(res).toMatchObject({ status: 200, broken: false });
    const list = JSON.parse(res.body) as { number: string; createdAt: string }[];
    expect(list).toHaveLength(ROWS);
    expect(new Set(list.map((i) => i.number)).size).toBe(ROWS);
    const times = list.map((i) => Date.parse(i.createdAt));
    expect(times.every((time, k) => k === 0 || time <= times[k - 1])).toBe(true);
  });

  it('a subscription list of several batches: object rows, every row once, newest first', async () => {
    const plan = await t.http
      .post('/api/plans')
      .set(m.auth)
      .send({ label: 'Big "plan"', mint: 'USDC', amount: '1.5', intervalSeconds: 86_400 })
      .expect(201);
    const wallet = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
    await t.app.get(Db).transaction((tx) =>
      t.app.get(SubscriptionsService).create(tx, m.id, {
        planId: plan.body.plan.id,
        walletAddress: wallet,
        onchainAddress: null,
        scheme: 'token-delegate',
      }),
    );
    // Cancelled copies of it, older and older (not live: the one-live-per-plan rule holds).
    await t.sql(
      `INSERT INTO subscriptions (id, merchant_id, plan_id, customer_id, status, cancelled_at,
         current_period_end, created_at, updated_at, scheme)
       SELECT gen_random_uuid(), s.merchant_id, s.plan_id, s.customer_id, 'Cancelled',
              s.created_at, NULL, s.created_at - (g || ' seconds')::interval, s.updated_at, s.scheme
         FROM subscriptions s, generate_series(1, $2::int - 1) AS g
        WHERE s.merchant_id = $1`,
      [m.id, ROWS],
    );
    for (const [query, rows] of [
      ['', ROWS],
      ['?status=Cancelled', ROWS - 1],
    ] as const) {
      const res = await fetchRaw(base, `/api/subscriptions${query}`, {
        Authorization: m.auth.Authorization,
      });
      expect(res).toMatchObject({ status: 200, broken: false });
      const list = JSON.parse(res.body) as { id: string; createdAt: string; plan: object }[];
      expect(list).toHaveLength(rows);
      expect(new Set(list.map((s) => s.id)).size).toBe(rows);
      const times = list.map((s) => Date.parse(s.createdAt));
      expect(times.every((time, k) => k === 0 || time < times[k - 1])).toBe(true);
      expect(list[rows - 1].plan).toEqual({
        id: plan.body.plan.id,
        label: 'Big "plan"',
        amount: '1.5',
        mint: 'USDC',
        intervalSeconds: 86_400,
      });
    }
  });

  it('a failure after the first batch breaks the connection, and the pool gets its connection back', async () => {
    // A row that cannot be rendered (a corrupt amount), in the second batch.
    await t.sql(
      `UPDATE invoices SET line_items_json = NULL,
              line_items = '[{"description":"x","quantity":1,"unitAmount":"not digits"}]'
        WHERE merchant_id = $1 AND number = 1500`,
      [m.id],
    );
    for (let round = 0; round < 5; round++) {
      // More failing lists than the pool has connections: each must give its connection back.
      const res = await fetchRaw(base, '/api/invoices', { Authorization: m.auth.Authorization });
      expect(res.hung).toBeUndefined();
      expect(res.status).toBe(200); // the first batch had gone out
      expect(res.broken).toBe(true);
      expect(() => JSON.parse(res.body)).toThrow();
    }
    const after = await t.http.get('/api/invoices?status=Cancelled').set(m.auth).expect(200);
    expect(after.body).toEqual([]);
  });
});
