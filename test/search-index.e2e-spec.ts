import { withoutNullabilityHints } from '../src/database/pg-transaction';
import { Db } from '../src/database/db';
import type { CursorStatement } from '../src/database/row-batches';
import { createTestApp, randomWallet, TestApp, TestMerchant } from './helpers/test-app';

/*
 * What the list searches (D11) answered before the trigram indexes, as the reference: the
 * statements of that time, with every searched column read through `|| ''` (the same text, which
 * no index holds), so PostgreSQL can only compare each row.
 */
const INVOICES_BEFORE = `
  SELECT i.id FROM invoices i JOIN customers c ON c.id = i.customer_id
   WHERE i.merchant_id = $1 AND ($3::text IS NULL OR i.status = $3)
     AND ((i.onchain_id || '') ILIKE $2 OR (i.memo || '') ILIKE $2 OR (c.label || '') ILIKE $2
          OR (c.wallet_address || '') ILIKE $2 OR (invoice_number(i.number) || '') ILIKE $2)
   ORDER BY i.created_at DESC, i.id DESC`;
const CUSTOMERS_BEFORE = `
  SELECT id FROM customers
   WHERE merchant_id = $1
     AND ((wallet_address || '') ILIKE $2 OR (label || '') ILIKE $2 OR (email || '') ILIKE $2)
   ORDER BY created_at DESC, id DESC`;

/** The list's pattern for a search, as the service makes it (`%`, `_` and `\` literal). */
const pattern = (search: string) => `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * The searches with the trigram indexes (Migration20261127020000): on a merchant with enough
 * rows that PostgreSQL prefers the indexes, every search answers the same rows in the same order
 * as the statements before them (one and two characters, which trigrams cannot narrow, any case,
 * `%` `_` `\` taken literally, accents, emoji), never another merchant's; and the statement the
 * service runs reads the trigram index for a search it narrows.
 */
describe('Searches on the trigram indexes', () => {
  let t: TestApp;
  let m: TestMerchant;
  let other: TestMerchant;
  const labels = [
    'Ada Lovelace',
    'ADA LOVELACE',
    'ada',
    'Ünïcödé Straße',
    'STRASSE Nord',
    'emoji 🧾 label',
    '100% pure',
    'under_score',
    'back\\slash',
    "O'Brien",
    null,
    'İstanbul',
  ];
  const memos = [
    'Quarterly 100% fee',
    'x_y',
    'a\\b',
    'ß',
    'STRASSE',
    null,
    '  spaced  ',
    'PO-12345',
    'abc',
    'ab',
    'a',
    'émigré 🧾',
    'Lovelace consulting',
  ];

  /** Customers and invoices of the hand-written shapes, then many ordinary ones. */
  async function seed(merchant: TestMerchant, bulk: number): Promise<void> {
    await t.sql(
      `INSERT INTO customers (id, merchant_id, wallet_address, email, label, created_at, updated_at)
       SELECT gen_random_uuid(), $1, w, CASE WHEN g % 3 = 0 THEN NULL
              WHEN g % 3 = 1 THEN 'Person.' || g || '@Example.COM' ELSE 'x_y' || g || '@z.io' END,
              ($3::text[])[g], now() - (g || ' minutes')::interval,
              now() - (g || ' minutes')::interval
         FROM unnest($2::text[]) WITH ORDINALITY AS x(w, g)`,
      [merchant.id, labels.map(() => randomWallet()), labels],
    );
    await t.sql(
      `INSERT INTO customers (id, merchant_id, wallet_address, email, label, created_at, updated_at)
       SELECT gen_random_uuid(), $1, w, 'bulk' || g || '@bulk.test', 'Bulk ' || g,
              now() - interval '1 day' - (g || ' seconds')::interval,
              now() - interval '1 day' - (g || ' seconds')::interval
         FROM unnest($2::text[]) WITH ORDINALITY AS x(w, g)`,
      [merchant.id, Array.from({ length: bulk / 4 }, () => randomWallet())],
    );
    // Invoices: the hand-written memos on the hand-written customers, then the bulk.
    const [{ max }] = await t.sql<{ max: number | null }>(
      'SELECT max(number) AS max FROM invoices WHERE merchant_id = $1',
      [merchant.id],
    );
    await t.sql(
      `INSERT INTO invoices (id, merchant_id, customer_id, number, status, onchain_id, memo, mint,
         line_items, subtotal, tax_bps, tax, total, amount_paid, created_at, updated_at)
       SELECT gen_random_uuid(), $1, c.id, $4 + n, CASE WHEN n % 2 = 0 THEN 'Paid' ELSE 'Open' END,
              ($2::text[])[n], memo, 'USDC',
              '[{"description":"Work","quantity":1,"unitAmount":"1000000"}]', 1000000, 0, 0,
              1000000, 0, c.created_at + (n || ' seconds')::interval,
              c.created_at + (n || ' seconds')::interval
         FROM unnest($3::text[]) WITH ORDINALITY AS x(memo, n)
         JOIN LATERAL (SELECT id, created_at FROM customers WHERE merchant_id = $1
                        ORDER BY created_at DESC, id OFFSET n % 12 LIMIT 1) c ON true`,
      [merchant.id, memos.map(() => randomWallet()), memos, max ?? 0],
    );
    await t.sql(
      `INSERT INTO invoices (id, merchant_id, customer_id, number, status, onchain_id, memo, mint,
         line_items, subtotal, tax_bps, tax, total, amount_paid, created_at, updated_at)
       SELECT gen_random_uuid(), $1, c.id, $3 + g, 'Paid',
              translate(encode(sha256(convert_to($1::text || g, 'UTF8')), 'base64'), '+/=0OIl', ''),
              CASE WHEN g % 5 = 0 THEN NULL ELSE 'Bulk memo ' || g END, 'USDC',
              '[{"description":"Work","quantity":1,"unitAmount":"1000000"}]', 1000000, 0, 0,
              1000000, 1000000, c.created_at, c.created_at
         FROM generate_series(1, $2::int) AS g
         JOIN customers c ON c.merchant_id = $1 AND c.label = 'Bulk ' || (1 + g % ($2::int / 4))`,
      [merchant.id, bulk, (max ?? 0) + memos.length],
    );
  }

  beforeAll(async () => {
    t = await createTestApp();
    m = await t.createMerchant('Searched');
    other = await t.createMerchant('Other');
    await seed(m, 20_000);
    await seed(other, 40);
    // As autovacuum leaves tables that filled over time: statistics, and the indexes' pending
    // entries merged (a GIN index takes new entries into a pending list first).
    await t.sql('VACUUM ANALYZE customers, invoices');
  });
  afterAll(() => t.close());

  /** Terms made of the data: an onchainId's and a wallet's fragments, in another case. */
  async function terms(): Promise<string[]> {
    const [{ onchain_id: onchainId }] = await t.sql<{ onchain_id: string }>(
      `SELECT onchain_id FROM invoices WHERE merchant_id = $1 AND memo = 'abc'`,
      [m.id],
    );
    const [{ wallet_address: wallet }] = await t.sql<{ wallet_address: string }>(
      `SELECT wallet_address FROM customers WHERE merchant_id = $1 AND label = 'ada'`,
      [m.id],
    );
    return [
      ...['a', 'A', 'ß', '%', '_', '\\', '🧾', 'é', '7'],
      ...['ab', 'AB', '%%', '_y', '\\b', 'ss', '00', 'İs'],
      ...['x_y', '100%', 'lovelace', 'LOVELACE', 'ada lov', 'Ünï', 'ünï', 'straße', 'STRASSE'],
      ...["o'brien", 'PO-123', 'po-12345', 'inv-0000', 'INV-000003', 'bulk memo 1234'],
      ...['Bulk 42', 'example.com', 'X_Y1', '  spaced', 'émigré', 'back\\sl', 'zzz-no-match'],
      onchainId.slice(5, 17).toLowerCase(),
      wallet.slice(-12).toUpperCase(),
      wallet,
    ];
  }

  it('invoices: every search answers the rows and order of the statement before the indexes', async () => {
    const mismatches: string[] = [];
    let matched = 0;
    for (const search of await terms()) {
      for (const status of [undefined, 'Open']) {
        const [want, got] = await Promise.all([
          t.sql<{ id: string }>(INVOICES_BEFORE, [m.id, pattern(search), status ?? null]),
          t.http.get('/api/invoices').query({ search, status }).set(m.auth).expect(200),
        ]);
        const ids = got.body.map((invoice: { id: string }) => invoice.id);
        if (JSON.stringify(ids) !== JSON.stringify(want.map((r) => r.id)))
          mismatches.push(`${search} ${status}: ${ids.length} against ${want.length}`);
        if (want.length > 0) matched++;
      }
    }
    expect(mismatches).toEqual([]);
    expect(matched).toBeGreaterThan(40); // most terms find something: the comparison is not vacuous
  });

  it('customers: every search answers the rows and order of the statement before the index', async () => {
    const mismatches: string[] = [];
    let matched = 0;
    for (const search of await terms()) {
      const [want, got] = await Promise.all([
        t.sql<{ id: string }>(CUSTOMERS_BEFORE, [m.id, pattern(search)]),
        t.http.get('/api/customers').query({ search }).set(m.auth).expect(200),
      ]);
      const ids = got.body.map((customer: { id: string }) => customer.id);
      if (JSON.stringify(ids) !== JSON.stringify(want.map((r) => r.id)))
        mismatches.push(`${search}: ${ids.length} against ${want.length}`);
      if (want.length > 0) matched++;
    }
    expect(mismatches).toEqual([]);
    expect(matched).toBeGreaterThan(25);
  });

  it('a search with a page answers the first rows of the whole search', async () => {
    for (const search of ['a', 'bulk memo 1', 'bulk 4']) {
      const whole = await t.http.get('/api/invoices').query({ search }).set(m.auth).expect(200);
      const page = await t.http
        .get('/api/invoices')
        .query({ search, limit: 7 })
        .set(m.auth)
        .expect(200);
      expect(page.body).toEqual(whole.body.slice(0, 7));
      const next = await t.http
        .get('/api/invoices')
        .query({ search, limit: 7, startingAfter: page.body[6].id })
        .set(m.auth)
        .expect(200);
      expect(next.body).toEqual(whole.body.slice(7, 14));
    }
  });

  /**
   * The statement the service reads a list with (through `Db.forEachBatch`), as PostgreSQL plans
   * it for the values the service gives.
   */
  async function planOf(path: string, search: string): Promise<string> {
    const seen: CursorStatement<unknown>[] = [];
    const spy = jest
      .spyOn(Db.prototype, 'forEachBatch')
      .mockImplementation(async (statement: CursorStatement<unknown>, onBatch) => {
        seen.push(statement);
        await onBatch([]);
      });
    try {
      await t.http.get(path).query({ search }).set(m.auth).expect(200);
    } finally {
      spy.mockRestore();
    }
    expect(seen).toHaveLength(1);
    let declared: { text: string; values: unknown[] } | undefined;
    const statement = seen[0];
    if ('stream' in statement) {
      statement.stream({
        query: () => Promise.reject(new Error('streamed only')),
        stream: (text: string, values: unknown[]) => {
          declared = { text, values };
          return { read: () => Promise.resolve([]), close: () => Promise.resolve() };
        },
      });
    }
    const [{ 'QUERY PLAN': plan }] = await t.sql<{ 'QUERY PLAN': unknown }>(
      `EXPLAIN (FORMAT JSON) ${withoutNullabilityHints(declared!.text)}`,
      declared!.values,
    );
    return JSON.stringify(plan);
  }

  it('the search statements read the trigram indexes for a search they narrow', async () => {
    for (const search of ['lovelace', 'bulk memo 1234', 'PO-12345']) {
      const plan = await planOf('/api/invoices', search);
      expect(plan).toContain('"Index Name":"invoices_search_idx"');
      expect(plan).toContain('"Index Name":"customers_search_idx"');
    }
    for (const search of ['lovelace', 'example.com', 'bulk7']) {
      expect(await planOf('/api/customers', search)).toContain(
        '"Index Name":"customers_search_idx"',
      );
    }
  });

  it('a search of one or two characters, which trigrams cannot narrow, reads the merchant’s rows instead', async () => {
    for (const search of ['a', 'ab']) {
      const plan = await planOf('/api/invoices', search);
      expect(plan).not.toContain('_search_idx');
    }
  });
});
