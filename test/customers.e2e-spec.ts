import { createTestApp, randomWallet, TestApp, TestMerchant } from './helpers/test-app';
import { ROW_BATCH } from '../src/database/row-batches';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('Customers API', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let globex: TestMerchant;

  beforeAll(async () => {
    t = await createTestApp();
    acme = await t.createMerchant('Acme');
    globex = await t.createMerchant('Globex');
  });
  afterAll(() => t.close());

  describe('POST /api/customers', () => {
    it('creates a customer and returns exactly the customer fields', async () => {
      const wallet = randomWallet();
      const res = await t.http
        .post('/api/customers')
        .set(acme.auth)
        .send({ walletAddress: wallet, email: 'ada@example.com', label: 'Ada' })
        .expect(201);
      expect(Object.keys(res.body).sort()).toEqual(
        ['createdAt', 'email', 'id', 'label', 'merchantId', 'updatedAt', 'walletAddress'].sort(),
      );
      expect(res.body).toMatchObject({
        merchantId: acme.id,
        walletAddress: wallet,
        email: 'ada@example.com',
        label: 'Ada',
      });
      expect(res.body.createdAt).toMatch(ISO_MS);
      const rows = await t.sql('SELECT merchant_id, email, label FROM customers WHERE id = $1', [
        res.body.id,
      ]);
      expect(rows).toEqual([{ merchant_id: acme.id, email: 'ada@example.com', label: 'Ada' }]);
    });

    it('upserts by wallet: updates only the given fields and never duplicates', async () => {
      const wallet = randomWallet();
      const first = await t.http
        .post('/api/customers')
        .set(acme.auth)
        .send({ walletAddress: wallet, email: 'old@example.com', label: 'Old' })
        .expect(201);
      t.clock.advance(1000);
      const second = await t.http
        .post('/api/customers')
        .set(acme.auth)
        .send({ walletAddress: wallet, label: 'New' })
        .expect(201);
      expect(second.body.id).toBe(first.body.id);
      expect(second.body.label).toBe('New');
      expect(second.body.email).toBe('old@example.com');
      expect(second.body.createdAt).toBe(first.body.createdAt);
      expect(Date.parse(second.body.updatedAt)).toBeGreaterThan(Date.parse(first.body.updatedAt));
      const [{ count }] = await t.sql<{ count: string }>(
        'SELECT count(*) FROM customers WHERE wallet_address = $1',
        [wallet],
      );
      expect(count).toBe('1');
    });

    it('an upsert that changes nothing keeps updatedAt', async () => {
      const wallet = randomWallet();
      const first = await t.http
        .post('/api/customers')
        .set(acme.auth)
        .send({ walletAddress: wallet, label: 'Same' });
      t.clock.advance(1000);
      const again = await t.http
        .post('/api/customers')
        .set(acme.auth)
        .send({ walletAddress: wallet, label: 'Same' })
        .expect(201);
      expect(again.body.updatedAt).toBe(first.body.updatedAt);
    });

    it('concurrent upserts of one wallet create one customer', async () => {
      const wallet = randomWallet();
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          t.http
            .post('/api/customers')
            .set(acme.auth)
            .send({ walletAddress: wallet, label: `L${i}` }),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
      expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    });

    it('the same wallet is a separate customer for another merchant', async () => {
      const wallet = randomWallet();
      const a = await t.http
        .post('/api/customers')
        .set(acme.auth)
        .send({ walletAddress: wallet })
        .expect(201);
      const g = await t.http
        .post('/api/customers')
        .set(globex.auth)
        .send({ walletAddress: wallet })
        .expect(201);
      expect(g.body.id).not.toBe(a.body.id);
      expect(g.body.merchantId).toBe(globex.id);
    });
  });

  describe('GET /api/customers', () => {
    let m: TestMerchant;
    const wallets: string[] = [];

    beforeAll(async () => {
      m = await t.createMerchant('Lister');
      const specs = [
        { label: 'Ada Lovelace', email: 'ada@analytical.org' },
        { label: 'Grace Hopper', email: 'grace@navy.mil' },
        { label: '100%_done', email: null },
      ];
      for (const spec of specs) {
        const wallet = randomWallet();
        wallets.push(wallet);
        t.clock.advance(1000);
        await t.http
          .post('/api/customers')
          .set(m.auth)
          .send({
            walletAddress: wallet,
            label: spec.label,
            ...(spec.email ? { email: spec.email } : {}),
          })
          .expect(201);
      }
    });

    it('lists newest first, each with _count', async () => {
      const res = await t.http.get('/api/customers').set(m.auth).expect(200);
      expect(res.body.map((c: { walletAddress: string }) => c.walletAddress)).toEqual(
        [...wallets].reverse(),
      );
      for (const c of res.body) expect(c._count).toEqual({ invoices: 0, subscriptions: 0 });
    });

    it.each([
      ['label, any case', 'LOVELACE', ['Ada Lovelace']],
      ['email', 'navy.MIL', ['Grace Hopper']],
      ['LIKE wildcards literally', '%_', ['100%_done']],
      ['nothing', 'zzz-no-match', []],
    ])('searches by %s', async (_, search, labels) => {
      const res = await t.http.get('/api/customers').query({ search }).set(m.auth).expect(200);
      expect(res.body.map((c: { label: string }) => c.label)).toEqual(labels);
    });

    it('stores and finds text with quotes and backslashes literally (no SQL injection)', async () => {
      const label = `O'Brien \\ "x"; DROP TABLE customers; --`;
      const created = await t.http
        .post('/api/customers')
        .set(m.auth)
        .send({ walletAddress: randomWallet(), label })
        .expect(201);
      expect(created.body.label).toBe(label);
      const res = await t.http
        .get('/api/customers')
        .query({ search: "o'brien \\" })
        .set(m.auth)
        .expect(200);
      expect(res.body.map((c: { id: string }) => c.id)).toEqual([created.body.id]);
      const [row] = await t.sql('SELECT label FROM customers WHERE id = $1', [created.body.id]);
      expect(row.label).toBe(label);
      await t.http
        .patch(`/api/customers/${created.body.id}`)
        .set(m.auth)
        .send({ label: "it's" })
        .expect(200);
    });

    it('searches by a fragment of the wallet address', async () => {
      const fragment = wallets[1].slice(5, 15).toLowerCase();
      const res = await t.http
        .get('/api/customers')
        .query({ search: fragment })
        .set(m.auth)
        .expect(200);
      expect(res.body.map((c: { walletAddress: string }) => c.walletAddress)).toContain(wallets[1]);
    });

    it('streams the whole list through a cursor: more rows than one batch, chunked, none lost or repeated', async () => {
      const many = await t.createMerchant('Many customers');
      const count = ROW_BATCH * 2 + 7;
      await t.sql(
        `INSERT INTO customers (id, merchant_id, wallet_address, label, created_at, updated_at)
         SELECT gen_random_uuid(), $1, 'W' || lpad(g::text, 43, '0'), 'C ' || g,
                timestamptz '2026-11-01T00:00:00Z' + (g || ' seconds')::interval,
                timestamptz '2026-11-01T00:00:00Z' + (g || ' seconds')::interval
           FROM generate_series(1, $2::int) AS g`,
        [many.id, count],
      );
      const res = await t.http.get('/api/customers').set(many.auth).expect(200);
      // Written a batch at a time as the cursor reads, not built in memory and sent with a length.
      expect(res.headers['transfer-encoding']).toBe('chunked');
      expect(res.headers['content-length']).toBeUndefined();
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const labels = (res.body as { label: string }[]).map((c) => c.label);
      expect(labels).toEqual(Array.from({ length: count }, (_, i) => `C ${count - i}`));
      expect(res.body[0]).toEqual({
        id: expect.any(String),
        merchantId: many.id,
        walletAddress: `W${String(count).padStart(43, '0')}`,
        email: null,
        label: `C ${count}`,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        _count: { invoices: 0, subscriptions: 0 },
      });
    });

    it("never shows another merchant's customers", async () => {
      const res = await t.http.get('/api/customers').set(globex.auth).expect(200);
      expect(res.body.every((c: { merchantId: string }) => c.merchantId === globex.id)).toBe(true);
      const search = await t.http
        .get('/api/customers')
        .query({ search: 'Lovelace' })
        .set(globex.auth)
        .expect(200);
      expect(search.body).toEqual([]);
    });
  });

  describe('GET /api/customers/:id', () => {
    it('returns the customer with its (empty) invoice and subscription history', async () => {
      const created = await t.http
        .post('/api/customers')
        .set(acme.auth)
        .send({ walletAddress: randomWallet() });
      const res = await t.http.get(`/api/customers/${created.body.id}`).set(acme.auth).expect(200);
      expect(res.body).toEqual({ ...created.body, invoices: [], subscriptions: [] });
    });

    it("another merchant's customer is not found", async () => {
      const created = await t.http
        .post('/api/customers')
        .set(acme.auth)
        .send({ walletAddress: randomWallet() });
      const res = await t.http
        .get(`/api/customers/${created.body.id}`)
        .set(globex.auth)
        .expect(404);
      expect(res.body.error).toMatchObject({ code: 'NOT_FOUND', message: 'Customer not found' });
    });

    it('an unknown or malformed id is not found', async () => {
      for (const id of ['00000000-0000-4000-8000-000000000000', 'abc', '1']) {
        const res = await t.http.get(`/api/customers/${id}`).set(acme.auth).expect(404);
        expect(res.body.error.code).toBe('NOT_FOUND');
      }
    });
  });

  describe('PATCH /api/customers/:id', () => {
    it('changes only the supplied fields and null clears', async () => {
      const created = await t.http
        .post('/api/customers')
        .set(acme.auth)
        .send({ walletAddress: randomWallet(), email: 'a@example.com', label: 'A' });
      t.clock.advance(5000);
      const res = await t.http
        .patch(`/api/customers/${created.body.id}`)
        .set(acme.auth)
        .send({ email: null })
        .expect(200);
      expect(res.body).toMatchObject({
        email: null,
        label: 'A',
        walletAddress: created.body.walletAddress,
      });
      expect(Date.parse(res.body.updatedAt) - Date.parse(created.body.updatedAt)).toBe(5000);
      const relabel = await t.http
        .patch(`/api/customers/${created.body.id}`)
        .set(acme.auth)
        .send({ label: 'B', email: 'b@example.com' })
        .expect(200);
      expect(relabel.body).toMatchObject({ email: 'b@example.com', label: 'B' });
      const [row] = await t.sql('SELECT email, label FROM customers WHERE id = $1', [
        created.body.id,
      ]);
      expect(row).toEqual({ email: 'b@example.com', label: 'B' });
    });

    it('an empty body changes nothing and returns the customer', async () => {
      const created = await t.http
        .post('/api/customers')
        .set(acme.auth)
        .send({ walletAddress: randomWallet(), label: 'K' });
      const res = await t.http
        .patch(`/api/customers/${created.body.id}`)
        .set(acme.auth)
        .send({})
        .expect(200);
      expect(res.body).toEqual(created.body);
    });

    it('rejects an invalid e-mail with VALIDATION_ERROR and changes nothing', async () => {
      const created = await t.http
        .post('/api/customers')
        .set(acme.auth)
        .send({ walletAddress: randomWallet(), email: 'keep@example.com' });
      const res = await t.http
        .patch(`/api/customers/${created.body.id}`)
        .set(acme.auth)
        .send({ email: 'not-an-email' })
        .expect(400);
      expect(res.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: [{ field: 'email', message: 'must be a plain e-mail address (name@example.com)' }],
      });
      const [row] = await t.sql('SELECT email FROM customers WHERE id = $1', [created.body.id]);
      expect(row.email).toBe('keep@example.com');
    });

    it("cannot change another merchant's customer", async () => {
      const created = await t.http
        .post('/api/customers')
        .set(acme.auth)
        .send({ walletAddress: randomWallet(), label: 'Mine' });
      const res = await t.http
        .patch(`/api/customers/${created.body.id}`)
        .set(globex.auth)
        .send({ label: 'Stolen' })
        .expect(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
      const [row] = await t.sql('SELECT label FROM customers WHERE id = $1', [created.body.id]);
      expect(row.label).toBe('Mine');
    });
  });
});
