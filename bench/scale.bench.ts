/**
 * Data at scale (`npm run bench:scale`). See bench/README.md.
 *
 * One merchant with `BENCH_INVOICES` (1,000,000) invoices, `BENCH_CUSTOMERS` (200,000) customers
 * and `BENCH_SUBSCRIPTIONS` (100,000) subscriptions, written straight to the tables in a few
 * statements (`generate_series`), then measured through the real HTTP API (the built service,
 * `ROLE=api`, pinned to core 1; PostgreSQL, the chain and this process on core 0):
 *
 * 1. Searches, one request at a time: p50/p95 of matching (a handful of rows) and non-matching
 *    searches of invoices and customers, a broad one (~2,000 rows), and one and two characters.
 *    Baseline, same run: the same searches before the trigram indexes are built (they are
 *    dropped before seeding and built after, timed: what the migration costs an install of
 *    this size).
 * 2. Lists: the first page (`limit=100`) and a page in the middle (`startingAfter`) of each list,
 *    and the whole subscription and customer lists once (the spec's default array).
 * 3. Background work, each statement as the service runs it (`EXPLAIN ANALYZE` in a transaction
 *    rolled back): the charge run's claims with `BENCH_DUE` (100) due among all subscriptions,
 *    the watchers' reads (newly overdue, expired, unfinalized payments, merchants without
 *    cursors): time, rows and buffers read. Baselines, same run: the overdue read without its
 *    partial index, and the merchants-without-cursors statement as it was before.
 * 4. The write cost of the trigram indexes: 2,000 invoice (and customer) inserts with and
 *    without them, alternating, and the merge of their pending entries; then the searches again
 *    with the pending lists full of another merchant's new rows.
 */
import { Agent, get } from 'node:http';
import { Client } from 'pg';
import { ChainCursorsRepository } from '../src/billing/repositories/chain-cursors.repository';
import { ChargeAttemptsRepository } from '../src/billing/repositories/charge-attempts.repository';
import { InvoiceWatchRepository } from '../src/billing/repositories/invoice-watch.repository';
import type { Db } from '../src/database/db';
import { withoutNullabilityHints } from '../src/database/pg-transaction';
import {
  BenchServer,
  createMerchant,
  hasTaskset,
  median,
  pin,
  rssMb,
  runBench,
  saveResults,
  startDatabase,
  startLocalnet,
  startServer,
  stopServers,
} from './harness';

const INVOICES = Number(process.env.BENCH_INVOICES ?? 1_000_000);
const CUSTOMERS = Number(process.env.BENCH_CUSTOMERS ?? 200_000);
const SUBSCRIPTIONS = Number(process.env.BENCH_SUBSCRIPTIONS ?? 100_000);
const DUE = Number(process.env.BENCH_DUE ?? 100);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 20);
const BASELINE_SAMPLES = Number(process.env.BENCH_BASELINE_SAMPLES ?? 3);
/** The trigram indexes of Migration20261127020000, dropped for the seeding and the baseline. */
const TRIGRAM_INDEXES = ['invoices_search_idx', 'customers_search_idx'];

const FIRST_NAMES = ['Ada', 'Grace', 'Alan', 'Linus', 'Barbara', 'Ken', 'Dennis', 'Margaret'];
const LAST_NAMES = ['Lovelace', 'Hopper', 'Turing', 'Torvalds', 'Liskov', 'Thompson', 'Ritchie'];
const MORE_FIRST = ['Edsger', 'Donald', 'Frances', 'John', 'Radia', 'Tim', 'Sophie', 'Hedy'];
const MORE_LAST = ['Dijkstra', 'Knuth', 'Allen', 'McCarthy', 'Perlman', 'Berners-Lee', 'Wilson'];
const FIRST = [...FIRST_NAMES, ...MORE_FIRST, 'Katherine', 'Guido', 'Bjarne', 'Anders'];
const LAST = [...LAST_NAMES, ...MORE_LAST, 'Lamarr', 'Johnson', 'van Rossum', 'Stroustrup'];

/**
 * Base58-looking text made of a seed (sha256 in base64 without the characters base58 lacks): a
 * wallet or a reference key as random as the real ones, for a trigram index; and a version 4
 * UUID made of a seed, so that rows can name each other without a join.
 */
const B58 = `CREATE FUNCTION pg_temp.b58(seed text) RETURNS text LANGUAGE sql IMMUTABLE AS
  $$ SELECT translate(rtrim(encode(sha256(convert_to(seed, 'UTF8')), 'base64'), '='),
                      '+/0OIl', 'abcdef') $$;
  CREATE FUNCTION pg_temp.uid(seed text) RETURNS uuid LANGUAGE sql IMMUTABLE AS
  $$ SELECT overlay(overlay(md5(seed) PLACING '4' FROM 13) PLACING '8' FROM 17)::uuid $$`;

/** Seconds since `started`, one decimal. */
const since = (started: number) => ((performance.now() - started) / 1000).toFixed(1);

/** Runs `sql` on a connection of its own (the seeding runs statements side by side). */
async function onConnection(url: string, statements: string[], params: unknown[][]) {
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    await db.query(B58);
    for (const [i, sql] of statements.entries()) await db.query(sql, params[i] ?? []);
  } finally {
    await db.end();
  }
}

/**
 * The merchant's customers, invoices, plans, subscriptions, charge attempts and ledger lines.
 * Invoices: a million over two years, five per customer; the newest 2% Open (half due ahead,
 * `DUE` just past due and not yet marked, the rest overdue and marked, 100 past the expiry);
 * subscriptions: 90% Active, `DUE` of them due now, each charged once. Two connections write
 * halves side by side (invoices of even and odd customers: no customer row locked by both).
 */
async function seed(url: string, merchantId: string): Promise<Record<string, string>> {
  const times: Record<string, string> = {};
  let started = performance.now();
  const customers = `
    INSERT INTO customers (id, merchant_id, wallet_address, email, label, created_at, updated_at)
    SELECT pg_temp.uid($1::text || ':c:' || j), $1::uuid, pg_temp.b58($1::text || ':w:' || j),
           CASE WHEN j % 4 = 0 THEN NULL ELSE lower(replace(f, ' ', '')) || '.' ||
                lower(replace(l, ' ', '')) || j || '@' || (ARRAY['gmail.com', 'example.com',
                'acme.io', 'proton.me', 'outlook.com', 'corp.co'])[1 + j % 6] END,
           CASE WHEN j % 10 = 0 THEN NULL
                WHEN j % 7 = 0 THEN l || ' ' || (ARRAY['GmbH', 'Ltd', 'Inc.', 'LLC', '& Co'])[1 + j % 5]
                ELSE f || ' ' || l END,
           ts, ts
      FROM generate_series($2::int, $3::int) j,
           LATERAL (SELECT ($4::text[])[1 + j % 20] AS f, ($5::text[])[1 + (j / 20) % 18] AS l,
                           now() - (($6::int - j) * interval '315 seconds') - interval '1 day'
                             AS ts) x`;
  const half = Math.floor(CUSTOMERS / 2);
  await Promise.all(
    [
      [1, half],
      [half + 1, CUSTOMERS],
    ].map(([from, to]) =>
      onConnection(url, [customers], [[merchantId, from, to, FIRST, LAST, CUSTOMERS]]),
    ),
  );
  times.customers = since(started);

  started = performance.now();
  const open = INVOICES - Math.floor(INVOICES * 0.02);
  const invoices = `
    INSERT INTO invoices (id, merchant_id, customer_id, number, status, onchain_id, memo, mint,
      line_items, line_items_json, subtotal, tax_bps, tax, total, amount_paid, due_date, paid_at,
      overdue_at, created_at, updated_at)
    SELECT pg_temp.uid($1::text || ':i:' || i), $1::uuid, pg_temp.uid($1::text || ':c:' || (1 + i % $3::int)), i,
           st, pg_temp.b58($1::text || ':r:' || i),
           CASE i % 10 WHEN 0 THEN NULL WHEN 1 THEN NULL WHEN 2 THEN NULL
                WHEN 3 THEN 'PO ' || (10000 + i % 90000) WHEN 4 THEN 'Order #' || (500000 + i)
                WHEN 5 THEN 'Consulting, ' || to_char(ts, 'FMMonth YYYY')
                WHEN 6 THEN 'Hosting plan renewal'
                WHEN 7 THEN 'Project ' || (ARRAY['Apollo', 'Gemini', 'Mercury', 'Artemis',
                  'Voyager'])[1 + i % 5] || ' milestone ' || (i % 9)
                ELSE 'Ref ' || to_hex(i::bigint * 2654435761 % 4294967296) END,
           'USDC', '[{"description":"Consulting","quantity":3,"unitAmount":"150000000"}]',
           '[{"description":"Consulting","quantity":3,"unitAmount":"150","amount":"450"}]',
           450000000, 825, 37125000, 487125000,
           CASE WHEN st = 'Paid' THEN 487125000 ELSE 0 END, due,
           CASE WHEN st = 'Paid' THEN ts + interval '1 day' END,
           CASE WHEN st = 'Open' AND due < now() - interval '1 hour' THEN due + interval '1 minute'
           END,
           ts, ts
      FROM generate_series($2::int, $4::int, 2) i,
           LATERAL (SELECT now() - (($4::int - i) * interval '63 seconds') AS ts) t,
           LATERAL (SELECT CASE WHEN i > $5::int THEN 'Open' WHEN i % 50 = 0 THEN 'Cancelled'
                                WHEN i % 97 = 0 THEN 'Expired' ELSE 'Paid' END AS st) s,
           LATERAL (SELECT CASE
                      WHEN i <= $5::int THEN ts + interval '14 days'
                      WHEN i <= $5::int + 100 THEN now() - interval '40 days'
                      WHEN i <= $7::int THEN now() - interval '20 days'
                      WHEN i <= $7::int + $6::int THEN now() - interval '10 minutes'
                      ELSE ts + interval '30 days' END AS due) d`;
  // Of the Open invoices: 100 past the expiry, then overdue and marked up to the middle of them,
  // then `DUE` newly overdue, the rest due ahead.
  const marked = open + Math.floor((INVOICES - open) / 2);
  await Promise.all(
    [1, 2].map((first) =>
      onConnection(url, [invoices], [[merchantId, first, CUSTOMERS, INVOICES, open, DUE, marked]]),
    ),
  );
  times.invoices = since(started);

  started = performance.now();
  await onConnection(
    url,
    [
      `INSERT INTO invoice_numbers (merchant_id, last) VALUES ($1, $2)
       ON CONFLICT (merchant_id) DO UPDATE SET last = EXCLUDED.last`,
      `INSERT INTO plans (id, merchant_id, label, mint, amount, interval_seconds, active,
         onchain_plan_id, created_at, updated_at)
       SELECT pg_temp.uid($1::text || ':p:' || k), $1::uuid, 'Plan ' || k, 'USDC', 1000000 * k, 2592000, true,
              k::text, now() - interval '800 days', now() - interval '800 days'
         FROM generate_series(1, 20) k`,
      // Each customer subscribes to one plan at most: the live-subscription key holds.
      `INSERT INTO subscriptions (id, merchant_id, plan_id, customer_id, status,
         current_period_end, onchain_address, authorized_amount, charged_amount,
         periods_charged, last_charge_at, created_at, updated_at, scheme)
       SELECT pg_temp.uid($1::text || ':s:' || s), $1::uuid, pg_temp.uid($1::text || ':p:' || (1 + s % 20)),
              pg_temp.uid($1::text || ':c:' || (1 + (s * 2) % $3::int)),
              CASE WHEN s % 10 = 0 THEN 'Cancelled' ELSE 'Active' END,
              CASE WHEN s % 10 <> 0 AND s - s / 10 <= $4::int THEN now() - interval '1 minute'
                   ELSE now() + ((s % 2592000) * interval '1 second') + interval '1 hour' END,
              pg_temp.b58($1::text || ':o:' || s), 12000000 * (1 + s % 20), 1000000 * (1 + s % 20), 1,
              now() - interval '29 days', now() - (($2::int - s) * interval '600 seconds'),
              now() - (($2::int - s) * interval '600 seconds'), 'token-delegate'
         FROM generate_series(1, $2::int) s`,
      // Each subscription's first charge: its attempt and its ledger line.
      `INSERT INTO charge_attempts (id, created_at, updated_at, merchant_id, subscription_id,
         period, amount, mint, state, signature, tries)
       SELECT pg_temp.uid(s.id || ':a'), s.last_charge_at, s.last_charge_at, s.merchant_id, s.id,
              1, s.charged_amount, 'USDC', 'succeeded', pg_temp.b58(s.id || ':sig'), 1
         FROM subscriptions s WHERE s.merchant_id = $1`,
      `INSERT INTO payments (id, created_at, updated_at, merchant_id, kind, status, customer_id,
         subscription_id, period, signature, mint, amount, fee, excess, finalized_at)
       SELECT pg_temp.uid(s.id || ':pay'), s.last_charge_at, s.last_charge_at, s.merchant_id,
              'subscription', CASE WHEN n <= 200 THEN 'confirmed' ELSE 'finalized' END,
              s.customer_id, s.id, 1, pg_temp.b58(s.id || ':sig'), 'USDC', s.charged_amount, 0, 0,
              CASE WHEN n > 200 THEN s.last_charge_at END
         FROM (SELECT *, row_number() OVER (ORDER BY id) AS n FROM subscriptions
                WHERE merchant_id = $1) s`,
      // The merchant's receiving accounts are watched already (one cursor per mint).
      `INSERT INTO chain_cursors (address, kind, merchant_id, mint, updated_at)
       SELECT pg_temp.b58($1::text || ':ata:' || mint), 'merchant_account', $1::uuid, mint, now()
         FROM unnest(ARRAY['USDC', 'PYUSD', 'USDG']) mint`,
    ],
    [
      [merchantId, INVOICES],
      [merchantId],
      [merchantId, SUBSCRIPTIONS, CUSTOMERS, DUE],
      [merchantId],
      [merchantId],
      [merchantId],
    ],
  );
  times.subscriptions = since(started);
  started = performance.now();
  // As autovacuum leaves rows that arrived over time: visibility map and hint bits set,
  // statistics current.
  await onConnection(
    url,
    [
      `VACUUM (ANALYZE, FREEZE) customers, invoices, plans, subscriptions, charge_attempts,
         payments, chain_cursors`,
    ],
    [],
  );
  times.vacuum = since(started);
  return times;
}

const agent = new Agent({ keepAlive: true });

/** One GET to the last byte: milliseconds, status, items (a JSON array), size, and the ids. */
function fetchList(
  base: string,
  path: string,
  headers: Record<string, string>,
  keepIds = false,
): Promise<{ ms: number; status: number; items: number; bytes: number; ids: string[] }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    get(`${base}${path}`, { headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const ms = performance.now() - started;
        const text = Buffer.concat(chunks).toString('utf8');
        const body = JSON.parse(text) as unknown;
        const items = Array.isArray(body) ? body.length : -1;
        const ids =
          keepIds && Array.isArray(body) ? body.map((item: { id: string }) => item.id) : [];
        resolve({ ms, status: res.statusCode ?? 0, items, bytes: Buffer.byteLength(text), ids });
      });
      res.on('error', reject);
    }).on('error', reject);
  });
}

interface Timed {
  name: string;
  samples: number;
  p50: number;
  p95: number;
  /** Items of the last response (the same for each of a fixed path). */
  items: string;
}

/** p50/p95 of the paths in turn (each path once per sample, cycling), after `warmups` requests. */
async function timed(
  server: BenchServer,
  auth: Record<string, string>,
  name: string,
  paths: string[],
  samples: number,
  warmups = 3,
): Promise<Timed> {
  for (let i = 0; i < warmups; i++) await fetchList(server.base, paths[i % paths.length], auth);
  const times: number[] = [];
  const items: number[] = [];
  for (let i = 0; i < samples; i++) {
    const res = await fetchList(server.base, paths[i % paths.length], auth);
    if (res.status !== 200) throw new Error(`${paths[i % paths.length]}: ${res.status}`);
    times.push(res.ms);
    items.push(res.items);
  }
  const sorted = [...times].sort((a, b) => a - b);
  const row = {
    name,
    samples,
    p50: median(times),
    p95: sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)],
    items:
      Math.min(...items) === Math.max(...items)
        ? String(items[0])
        : `${Math.min(...items)}-${Math.max(...items)}`,
  };
  process.stderr.write(`  ${name}: p50 ${row.p50.toFixed(1)} ms, p95 ${row.p95.toFixed(1)} ms\n`);
  return row;
}

/** A statement as a repository runs it (its text without nullability hints, its values). */
async function statementOf(
  run: (db: Db) => Promise<unknown>,
): Promise<{ text: string; values: unknown[] }> {
  let seen: { text: string; values: unknown[] } | undefined;
  const db = {
    query: (text: string, values: unknown[]) => {
      seen = { text: withoutNullabilityHints(text), values };
      return Promise.resolve({ rows: [], rowCount: 0 });
    },
  } as unknown as Db;
  await run(db);
  return seen!;
}

interface Explained {
  name: string;
  ms: number;
  rows: number;
  buffers: number;
  note: string;
}

/**
 * `EXPLAIN (ANALYZE, BUFFERS)` of a statement in a transaction rolled back (a claim writes its
 * attempts), after `before` (e.g. a DROP INDEX, rolled back with it); the median of three.
 */
async function explain(
  db: Client,
  name: string,
  statement: { text: string; values: unknown[] },
  note: string,
  before?: string,
): Promise<Explained> {
  const runs: { ms: number; rows: number; buffers: number }[] = [];
  for (let i = 0; i < 3; i++) {
    await db.query('BEGIN');
    try {
      if (before) await db.query(before);
      const res = await db.query<{
        'QUERY PLAN': [{ Plan: Record<string, number> } & Record<string, number>];
      }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement.text}`, statement.values);
      const [top] = res.rows[0]['QUERY PLAN'];
      runs.push({
        ms: top['Execution Time'],
        rows: top.Plan['Actual Rows'],
        buffers: top.Plan['Shared Hit Blocks'] + top.Plan['Shared Read Blocks'],
      });
    } finally {
      await db.query('ROLLBACK');
    }
  }
  const row = {
    name,
    ms: median(runs.map((r) => r.ms)),
    rows: runs[0].rows,
    buffers: median(runs.map((r) => r.buffers)),
    note,
  };
  process.stderr.write(
    `  ${name}: ${row.ms.toFixed(2)} ms, ${row.rows} rows, ${row.buffers} buffers\n`,
  );
  return row;
}

/** The merchants-without-cursors statement as it was before this issue (the baseline). */
const MERCHANTS_WITHOUT_CURSORS_BEFORE = `
  SELECT i.merchant_id, m.wallet_address AS wallet, min(i.chain_slot)::text AS start_slot,
         bool_or(i.chain_slot IS NULL) AS "unknown"
    FROM invoices i JOIN merchants m ON m.id = i.merchant_id
   WHERE i.status = 'Open'
     AND (SELECT count(*) FROM chain_cursors k
           WHERE k.kind = 'merchant_account' AND k.merchant_id = i.merchant_id) < $1
   GROUP BY i.merchant_id, m.wallet_address`;

/**
 * A loop of `count` inserts into `table` (one statement each), as the API's writes make them.
 * Customers are numbered after `firstCustomer`; invoices go to the merchant's first 1,000.
 */
function insertLoop(
  table: 'invoices' | 'customers',
  merchantId: string,
  count: number,
  firstCustomer = CUSTOMERS,
): string {
  const insert =
    table === 'invoices'
      ? `INSERT INTO invoices (id, merchant_id, customer_id, number, status, onchain_id, memo,
           mint, line_items, line_items_json, subtotal, tax_bps, tax, total, amount_paid,
           created_at, updated_at)
         VALUES (gen_random_uuid(), m, pg_temp.uid(m || ':c:' || (1 + n * 97 % 1000)),
                 ${INVOICES} + 10 + n, 'Open', pg_temp.b58(random()::text), 'PO ' || n, 'USDC',
                 '[]', '[]', 1, 0, 0, 1, 0, now(), now())`
      : `INSERT INTO customers (id, merchant_id, wallet_address, email, label, created_at,
           updated_at)
         VALUES (pg_temp.uid(m || ':c:' || (${firstCustomer} + n)), m, pg_temp.b58(random()::text),
                 'new' || n || '@example.com',
                 'New Customer ' || n, now(), now())`;
  return `DO $$
    DECLARE m uuid := '${merchantId}';
    BEGIN
      FOR n IN 1..${count} LOOP ${insert}; END LOOP;
    END $$`;
}

/** Merges the trigram indexes' pending entries into them (what VACUUM or a full list does). */
const mergePending = (db: Client) =>
  db.query(`SELECT gin_clean_pending_list(i::regclass) FROM unnest($1::text[]) i`, [
    TRIGRAM_INDEXES,
  ]);

/**
 * µs per insert into `table` (2,000 in a loop, in a transaction rolled back), and with the
 * indexes, what merging their pending entries into the index costs afterwards (a GIN index takes
 * new entries into a pending list, merged when it fills or by VACUUM): per insert.
 */
async function insertCost(
  db: Client,
  table: 'invoices' | 'customers',
  merchantId: string,
  withIndexes: boolean,
): Promise<{ insert: number; merge: number }> {
  if (withIndexes) await mergePending(db); // what earlier rounds left
  await db.query('BEGIN');
  try {
    if (!withIndexes) await db.query(`DROP INDEX ${TRIGRAM_INDEXES.join(', ')}`);
    let started = performance.now();
    await db.query(insertLoop(table, merchantId, 2000));
    const insert = ((performance.now() - started) * 1000) / 2000;
    started = performance.now();
    if (withIndexes) await mergePending(db);
    return { insert, merge: withIndexes ? ((performance.now() - started) * 1000) / 2000 : 0 };
  } finally {
    await db.query('ROLLBACK');
  }
}

async function main(): Promise<void> {
  const db = await startDatabase();
  const chain = await startLocalnet({ core: 0 });
  const servers: BenchServer[] = [];
  const sql = new Client({ connectionString: db.url });
  try {
    const merchant = createMerchant(db.url);
    const merchantId = merchant.merchant.id;
    const auth = { Authorization: `Bearer ${merchant.apiKey}` };
    await sql.connect();
    await sql.query(B58);

    // The trigram indexes as the migration made them, dropped for the seeding and the baseline.
    const { rows: definitions } = await sql.query<{ indexdef: string }>(
      `SELECT indexdef FROM pg_indexes WHERE indexname = ANY($1) ORDER BY indexname DESC`,
      [TRIGRAM_INDEXES],
    );
    if (definitions.length !== TRIGRAM_INDEXES.length) throw new Error('trigram indexes missing');
    await sql.query(`DROP INDEX ${TRIGRAM_INDEXES.join(', ')}`);

    process.stderr.write(
      `seeding ${CUSTOMERS} customers, ${INVOICES} invoices, ${SUBSCRIPTIONS} subscriptions...\n`,
    );
    const seeding = performance.now();
    const seedTimes = await seed(db.url, merchantId);
    const seedSeconds = since(seeding);
    process.stderr.write(`  seeded in ${seedSeconds} s (${JSON.stringify(seedTimes)})\n`);

    pin(process.pid, 0);
    if (db.postmasterPid) pin(db.postmasterPid, 0);
    const server = await startServer(db.url, {
      core: 1,
      env: { SOLANA_RPC_URL: chain.url, ROLE: 'api' },
    });
    servers.push(server);

    // Search terms taken from the data: a handful of rows each.
    const pick = async (sqlText: string): Promise<string[]> =>
      (await sql.query<{ t: string }>(sqlText, [merchantId])).rows.map((r) => r.t);
    const invoiceTerms = [
      ...(await pick(`SELECT substr(onchain_id, 9, 12) AS t FROM invoices WHERE merchant_id = $1
                       ORDER BY md5(id::text) LIMIT 5`)),
      ...(await pick(`SELECT invoice_number(number) AS t FROM invoices WHERE merchant_id = $1
                       ORDER BY md5(id::text || 'n') LIMIT 5`)),
      ...(await pick(`SELECT memo AS t FROM invoices WHERE merchant_id = $1 AND memo LIKE 'Order #%'
                       ORDER BY md5(id::text || 'm') LIMIT 5`)),
      ...(await pick(`SELECT substr(wallet_address, 21, 12) AS t FROM customers
                       WHERE merchant_id = $1 ORDER BY md5(id::text) LIMIT 5`)),
    ];
    const customerTerms = [
      ...(await pick(`SELECT substr(wallet_address, 5, 12) AS t FROM customers
                       WHERE merchant_id = $1 ORDER BY md5(id::text || 'w') LIMIT 10`)),
      ...(await pick(`SELECT split_part(email, '@', 1) || '@' AS t FROM customers
                       WHERE merchant_id = $1 AND email IS NOT NULL
                       ORDER BY md5(id::text || 'e') LIMIT 10`)),
    ];
    const noMatch = Array.from({ length: 20 }, (_, i) => `zq-no-match-${i}`);
    const q = (path: string, query: Record<string, string | number>) => {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) params.set(k, String(v));
      return `${path}?${params.toString()}`;
    };
    const searches = (path: string, terms: string[], extra: Record<string, string> = {}) =>
      terms.map((search) => q(path, { search, ...extra }));
    const broad = `${FIRST[1]} ${LAST[1]}`; // one label in 360: ~480 customers, ~2,400 invoices

    const searchRows = async (samples: number, warmups: number): Promise<Timed[]> => [
      await timed(
        server,
        auth,
        'invoices: a few match',
        searches('/api/invoices', invoiceTerms),
        samples,
        warmups,
      ),
      await timed(
        server,
        auth,
        'invoices: none match',
        searches('/api/invoices', noMatch),
        samples,
        warmups,
      ),
      await timed(
        server,
        auth,
        'invoices: broad (a customer name)',
        searches('/api/invoices', [broad]),
        samples,
        warmups,
      ),
      await timed(
        server,
        auth,
        'customers: a few match',
        searches('/api/customers', customerTerms),
        samples,
        warmups,
      ),
      await timed(
        server,
        auth,
        'customers: none match',
        searches('/api/customers', noMatch),
        samples,
        warmups,
      ),
    ];

    process.stderr.write('searches without the trigram indexes (baseline)...\n');
    const baseline = await searchRows(BASELINE_SAMPLES, 1);

    process.stderr.write('building the trigram indexes...\n');
    const builds: { index: string; seconds: string }[] = [];
    for (const { indexdef } of definitions) {
      const started = performance.now();
      await sql.query(indexdef);
      builds.push({ index: /INDEX (\S+)/.exec(indexdef)![1], seconds: since(started) });
    }
    await sql.query('ANALYZE customers, invoices'); // statistics of the indexed expression
    const sizes = await sql.query<{ name: string; size: string; table: string }>(
      `SELECT c.relname AS name, pg_size_pretty(pg_relation_size(c.oid)) AS size,
              pg_size_pretty(pg_relation_size(i.indrelid)) AS table
         FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = ANY($1)`,
      [TRIGRAM_INDEXES],
    );

    process.stderr.write('searches with the trigram indexes...\n');
    const indexed = await searchRows(SAMPLES, 3);
    const short = [
      await timed(
        server,
        auth,
        'invoices: 1 character, limit=100',
        searches('/api/invoices', ['a', 'Q', 'x', '7'], { limit: '100' }),
        SAMPLES,
      ),
      await timed(
        server,
        auth,
        'invoices: 2 characters, limit=100',
        searches('/api/invoices', ['qz', 'Zk', 'w3', 'jj'], { limit: '100' }),
        SAMPLES,
      ),
      await timed(
        server,
        auth,
        'customers: 2 characters, limit=100',
        searches('/api/customers', ['qz', 'Zk', 'w3', 'jj'], { limit: '100' }),
        SAMPLES,
      ),
      await timed(
        server,
        auth,
        'invoices: 2 characters, whole result',
        searches('/api/invoices', ['qz']),
        1,
        0,
      ),
    ];

    // Pages: the first, and one in the middle of each list.
    process.stderr.write('pages...\n');
    /** The id in the middle of a list (a search's: read whole through the API once). */
    const middle = async (path: string, table: string, extra: Record<string, string>) => {
      if (extra.search) {
        const res = await fetchList(server.base, q(path, extra), auth, true);
        return res.ids[Math.floor(res.ids.length / 2)];
      }
      const where = `merchant_id = $1${extra.status ? ' AND status = $2' : ''}`;
      const { rows } = await sql.query<{ id: string }>(
        `SELECT id FROM ${table} WHERE ${where} ORDER BY created_at DESC, id DESC
         OFFSET (SELECT count(*) / 2 FROM ${table} WHERE ${where}) LIMIT 1`,
        extra.status ? [merchantId, extra.status] : [merchantId],
      );
      return rows[0].id;
    };
    const pageRows: Timed[] = [];
    for (const [name, path, table, extra] of [
      ['invoices', '/api/invoices', 'invoices', {}],
      ['invoices, status=Open', '/api/invoices', 'invoices', { status: 'Open' }],
      ['invoices, search=(broad)', '/api/invoices', 'invoices', { search: broad }],
      ['customers', '/api/customers', 'customers', {}],
      ['customers, search=(broad)', '/api/customers', 'customers', { search: broad }],
      ['subscriptions', '/api/subscriptions', 'subscriptions', {}],
      ['payments', '/api/payments', 'payments', {}],
      ['plans', '/api/plans', 'plans', {}],
    ] as const) {
      const filters: Record<string, string> = extra;
      pageRows.push(
        await timed(
          server,
          auth,
          `${name}: limit=100`,
          [q(path, { ...filters, limit: 100 })],
          SAMPLES,
        ),
      );
      const after = await middle(path, table, filters);
      pageRows.push(
        await timed(
          server,
          auth,
          `${name}: limit=100, startingAfter=(the middle)`,
          [q(path, { ...filters, limit: 100, startingAfter: after })],
          SAMPLES,
        ),
      );
    }
    const wholeRows: (Timed & { mb: string; rssMb: number })[] = [];
    for (const [name, path] of [
      ['subscriptions (whole list)', '/api/subscriptions'],
      ['customers (whole list)', '/api/customers'],
    ]) {
      const res = await fetchList(server.base, path, auth);
      wholeRows.push({
        name,
        samples: 1,
        p50: res.ms,
        p95: res.ms,
        items: String(res.items),
        mb: (res.bytes / 1e6).toFixed(1),
        rssMb: rssMb(server.child.pid!),
      });
      process.stderr.write(`  ${name}: ${res.ms.toFixed(0)} ms\n`);
    }

    // Background work, statement by statement, as the service runs it.
    process.stderr.write('background statements...\n');
    const now = new Date();
    const claim = { now, limit: 200, busy: [], leaseSeconds: 30, owner: 'bench' };
    const attempts = (db: Db) => new ChargeAttemptsRepository(db);
    const watch = (db: Db) => new InvoiceWatchRepository(db);
    const cursors = (db: Db) => new ChainCursorsRepository(db);
    const dueNote = `${DUE} due of ${SUBSCRIPTIONS}`;
    const background = [
      await explain(
        sql,
        'charge claim, token-delegate (localnet)',
        await statementOf((d) => attempts(d).claimDue({ ...claim, oneAtATime: true })),
        dueNote,
      ),
      await explain(
        sql,
        'charge claim, Subscriptions program',
        await statementOf((d) => attempts(d).claimDue({ ...claim, oneAtATime: false })),
        dueNote,
      ),
      await explain(
        sql,
        'stale attempts taken over',
        await statementOf((d) => attempts(d).resumeStale(200, [], 30, 'bench')),
        `0 stale of ${SUBSCRIPTIONS} attempts`,
      ),
      await explain(
        sql,
        'failed tries followed',
        await statementOf((d) => attempts(d).failedWithBytes(100)),
        `0 failed of ${SUBSCRIPTIONS} attempts`,
      ),
      await explain(
        sql,
        'newly overdue invoices',
        await statementOf((d) => watch(d).newlyOverdue(now, 500)),
        `${DUE} due of ${INVOICES}`,
      ),
      await explain(
        sql,
        '  baseline: without invoices_newly_overdue_idx',
        await statementOf((d) => watch(d).newlyOverdue(now, 500)),
        'the Open-by-due-date index only',
        'DROP INDEX invoices_newly_overdue_idx',
      ),
      await explain(
        sql,
        'invoices to expire',
        await statementOf((d) =>
          watch(d).openDueBefore(new Date(now.getTime() - 30 * 86_400_000), 500),
        ),
        `100 due of ${INVOICES}`,
      ),
      await explain(
        sql,
        'unfinalized payments',
        await statementOf((d) => watch(d).confirmedPayments(1024)),
        `200 of ${SUBSCRIPTIONS} lines`,
      ),
      await explain(
        sql,
        'merchants without cursors',
        await statementOf((d) => cursors(d).merchantsWithoutCursors(3)),
        'none (cursors exist)',
      ),
      await explain(
        sql,
        '  baseline: the statement before',
        { text: MERCHANTS_WITHOUT_CURSORS_BEFORE, values: [3] },
        'read every Open invoice',
      ),
    ];

    // The write cost of the trigram indexes, alternating.
    process.stderr.write('insert cost...\n');
    const writes: Record<
      string,
      { withIdx: { insert: number; merge: number }[]; without: number[] }
    > = {};
    for (const table of ['invoices', 'customers'] as const) {
      const rounds = {
        withIdx: [] as { insert: number; merge: number }[],
        without: [] as number[],
      };
      for (let round = 0; round < 3; round++) {
        rounds.without.push((await insertCost(sql, table, merchantId, false)).insert);
        rounds.withIdx.push(await insertCost(sql, table, merchantId, true));
      }
      writes[table] = rounds;
    }

    // Between merges a search also reads the pending entries: searches again with the pending
    // lists holding 3,000 new customers and invoices (of another merchant, committed).
    process.stderr.write('searches with full pending lists...\n');
    const second = createMerchant(db.url).merchant.id;
    await mergePending(sql);
    await sql.query(insertLoop('customers', second, 3000, 0));
    await sql.query(insertLoop('invoices', second, 3000));
    const pending = [
      await timed(
        server,
        auth,
        'invoices: a few match',
        searches('/api/invoices', invoiceTerms),
        SAMPLES,
      ),
      await timed(
        server,
        auth,
        'invoices: none match',
        searches('/api/invoices', noMatch),
        SAMPLES,
      ),
      await timed(
        server,
        auth,
        'customers: a few match',
        searches('/api/customers', customerTerms),
        SAMPLES,
      ),
      await timed(
        server,
        auth,
        'customers: none match',
        searches('/api/customers', noMatch),
        SAMPLES,
      ),
    ];

    const pad = (s: string, n: number) => s.padEnd(n);
    const ms = (n: number) => n.toFixed(n < 10 ? 2 : 1);
    const timedLines = (rows: Timed[]) =>
      rows.map(
        (r) =>
          `${pad(r.name, 62)}${pad(String(r.samples), 9)}${pad(r.items, 11)}${pad(ms(r.p50), 11)}${ms(r.p95)}`,
      );
    const header = `${pad('', 62)}${pad('samples', 9)}${pad('items', 11)}${pad('p50 ms', 11)}p95 ms`;
    const lines = [
      `Data at scale: one merchant with ${INVOICES.toLocaleString('en')} invoices, ${CUSTOMERS.toLocaleString('en')} customers, ${SUBSCRIPTIONS.toLocaleString('en')} subscriptions; server pinned to one core: ${hasTaskset() ? 'yes' : 'no (taskset missing)'}`,
      `seeded in ${seedSeconds} s: customers ${seedTimes.customers} s, invoices ${seedTimes.invoices} s, plans/subscriptions/attempts/ledger ${seedTimes.subscriptions} s, VACUUM (ANALYZE, FREEZE) ${seedTimes.vacuum} s`,
      `trigram indexes built in ${builds.map((b) => `${b.index} ${b.seconds} s`).join(', ')}; sizes ${sizes.rows.map((r) => `${r.name} ${r.size} (table ${r.table})`).join(', ')}`,
      '',
      'Searches, one request at a time, time to the last byte (target: under 100 ms):',
      `${header}`,
      ...timedLines(baseline.map((r) => ({ ...r, name: `${r.name} [without the indexes]` }))),
      ...timedLines(indexed),
      ...timedLines(short),
      '',
      'Pages:',
      `${header}`,
      ...timedLines(pageRows),
      ...wholeRows.map(
        (r) =>
          `${pad(r.name, 62)}${pad('1', 9)}${pad(r.items, 11)}${pad(ms(r.p50), 11)}${r.mb} MB, server RSS after ${r.rssMb.toFixed(0)} MB`,
      ),
      '',
      'Background statements (EXPLAIN ANALYZE, median of 3, rolled back):',
      `${pad('', 50)}${pad('ms', 10)}${pad('rows', 8)}${pad('buffers', 10)}what exists`,
      ...background.map(
        (b) =>
          `${pad(b.name, 50)}${pad(ms(b.ms), 10)}${pad(String(b.rows), 8)}${pad(String(b.buffers), 10)}${b.note}`,
      ),
      '',
      'Writes (2,000 inserts in a loop, triggers and constraints included), µs per insert:',
      ...Object.entries(writes).map(
        ([table, r]) =>
          `  ${table}: ${median(r.without).toFixed(0)} without the trigram indexes (${r.without.map((v) => v.toFixed(0)).join(', ')}); ${median(r.withIdx.map((w) => w.insert)).toFixed(0)} with them (${r.withIdx.map((w) => w.insert.toFixed(0)).join(', ')}), plus ${median(r.withIdx.map((w) => w.merge)).toFixed(0)} to merge their pending entries (${r.withIdx.map((w) => w.merge.toFixed(0)).join(', ')})`,
      ),
      '',
      'Searches with the pending lists holding 3,000 new invoices and customers:',
      `${header}`,
      ...timedLines(pending),
    ];
    process.stdout.write(`\n${lines.join('\n')}\n`);
    saveResults('scale', {
      seedSeconds,
      seedTimes,
      builds,
      sizes: sizes.rows,
      baseline,
      indexed,
      short,
      pageRows,
      wholeRows,
      background,
      writes,
      pending,
    });
  } finally {
    await sql.end().catch(() => undefined);
    await stopServers(servers);
    await chain.stop();
    await db.stop();
  }
}

runBench(main);
