/**
 * Billing API benchmark (`npm run bench:billing`). See bench/README.md.
 *
 * The built service runs pinned to core 1 on its own database, with the chain as its own process
 * (core 0, like PostgreSQL and this load generator). Measured in the same run:
 *
 * - POST /api/invoices (3 line items, a new customer every request) with autocannon, against a
 *   bare Nest hello app on the same core (alternating rounds, medians compared);
 * - the 10,000-row lists (GET /api/invoices plain and with `search`, GET /api/subscriptions,
 *   GET /api/customers) one request at a time: median and p90 time to the last byte (loopback,
 *   so server time), response size, and the server's peak RSS while 4 clients fetch them at once.
 */
import autocannon from 'autocannon';
import { mkdtempSync, readFileSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import {
  BenchServer,
  cpuMicros,
  createMerchant,
  hasTaskset,
  median,
  pin,
  rssMb,
  runBench,
  saveResults,
  startBareNest,
  startDatabase,
  startLocalnet,
  startServer,
  stopServers,
  wallet,
  LOAD,
} from './harness';

const { seconds: SECONDS, connections: CONNECTIONS, anchorRounds: ROUNDS } = LOAD;
const ROWS = Number(process.env.BENCH_ROWS ?? 10_000);
const SAMPLES = Number(process.env.BENCH_LIST_SAMPLES ?? 30);
/** `lists` skips the POST rounds, `post` the lists. */
const ONLY = process.env.BENCH_ONLY;

interface Load {
  rps: number;
  p99: number;
  cpuUs: number;
  bad: number;
}

async function load(url: string, pid: number, options: Partial<autocannon.Options>): Promise<Load> {
  const before = cpuMicros(pid);
  const r = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, ...options });
  return {
    rps: r.requests.average,
    p99: r.latency.p99,
    cpuUs: (cpuMicros(pid) - before) / Math.max(1, r.requests.total),
    bad: r.non2xx + r.errors + r.timeouts,
  };
}

/** 10,000 customers, each with an invoice and a subscription, written straight to the tables. */
async function seed(databaseUrl: string, merchantId: string): Promise<void> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const wallets = Array.from({ length: ROWS }, () => wallet());
    const refs = Array.from({ length: ROWS }, () => wallet());
    await db.query('BEGIN');
    await db.query(
      `INSERT INTO customers (id, merchant_id, wallet_address, email, label, created_at, updated_at)
       SELECT gen_random_uuid(), $1, w, 'c' || i || '@example.com', 'Customer ' || i,
              now() - (i || ' seconds')::interval, now() - (i || ' seconds')::interval
         FROM unnest($2::text[]) WITH ORDINALITY AS t(w, i)`,
      [merchantId, wallets],
    );
    const plan = await db.query<{ id: string }>(
      `INSERT INTO plans (id, merchant_id, label, mint, amount, interval_seconds, active,
         onchain_plan_id, created_at, updated_at)
       VALUES (gen_random_uuid(), $1, 'Pro', 'USDC', 9990000, 2592000, true, '1', now(), now())
       RETURNING id`,
      [merchantId],
    );
    await db.query(
      `INSERT INTO invoices (id, merchant_id, customer_id, number, status, onchain_id, memo, mint,
         line_items, line_items_json, subtotal, tax_bps, tax, total, amount_paid, due_date,
         created_at, updated_at)
       SELECT gen_random_uuid(), c.merchant_id, c.id, row_number() OVER (ORDER BY c.created_at),
              'Open', r.ref, 'PO ' || r.i, 'USDC',
              '[{"description":"Consulting","quantity":3,"unitAmount":"150000000"},
                {"description":"Hosting","quantity":1,"unitAmount":"9990000"},
                {"description":"Support","quantity":2,"unitAmount":"25000000"}]'::jsonb,
              '[{"description":"Consulting","quantity":3,"unitAmount":"150","amount":"450"},' ||
              '{"description":"Hosting","quantity":1,"unitAmount":"9.99","amount":"9.99"},' ||
              '{"description":"Support","quantity":2,"unitAmount":"25","amount":"50"}]',
              509990000, 825, 42074175, 552064175, 0, NULL, c.created_at, c.created_at
         FROM unnest($2::text[]) WITH ORDINALITY AS r(ref, i)
         JOIN customers c ON c.wallet_address = ($3::text[])[r.i] AND c.merchant_id = $1`,
      [merchantId, refs, wallets],
    );
    await db.query(
      `INSERT INTO invoice_numbers (merchant_id, last) VALUES ($1, $2)
       ON CONFLICT (merchant_id) DO UPDATE SET last = EXCLUDED.last`,
      [merchantId, ROWS],
    );
    await db.query(
      `INSERT INTO subscriptions (id, merchant_id, plan_id, customer_id, status, current_period_end,
         onchain_address, created_at, updated_at, scheme)
       SELECT gen_random_uuid(), $1, $2, c.id, 'Active', now() + interval '30 days',
              c.wallet_address, c.created_at, c.created_at, 'token-delegate'
         FROM customers c WHERE c.merchant_id = $1`,
      [merchantId, plan.rows[0].id],
    );
    await db.query('COMMIT');
    // As autovacuum would have left rows that arrived over time: visibility map and hint bits
    // set, statistics current (otherwise the first reads write every page, and autovacuum runs
    // on PostgreSQL's core during the measurements).
    await db.query('VACUUM (ANALYZE, FREEZE) customers, plans, invoices, subscriptions');
  } finally {
    await db.end();
  }
}

interface ListRow {
  name: string;
  path: string;
  /** Server time: the access line's `responseTime`, first byte in to last byte out. */
  medianMs: number;
  p90Ms: number;
  /** Time to the last byte at the client (includes the client's own reading). */
  clientMedianMs: number;
  items: number;
  bytes: number;
  peakRssMb: number;
}

const agent = new Agent({ keepAlive: true });
/** The service's log: its access lines give each request's server time (`responseTime`). */
const LOG_FILE = join(mkdtempSync(join(tmpdir(), 'bench-billing-')), 'service.log');

/** `responseTime` (ms) of the last `count` 200 responses to `path`, from the access lines. */
function serverTimes(path: string, count: number): number[] {
  const times: number[] = [];
  for (const line of readFileSync(LOG_FILE, 'utf8').split('\n')) {
    if (!line.includes('"responseTime"')) continue;
    const entry = JSON.parse(line) as { url?: string; statusCode?: number; responseTime?: number };
    if (entry.url === path && entry.statusCode === 200) times.push(entry.responseTime!);
  }
  return times.slice(-count);
}

async function list(
  server: BenchServer,
  name: string,
  path: string,
  headers: Record<string, string>,
): Promise<ListRow> {
  const url = server.base + path;
  // node:http, reading the body as raw chunks: the client's own work (undici's fetch decoding
  // 11 MB into a string on the core PostgreSQL uses) stays out of the server's time.
  const fetchAll = (keep = false) =>
    new Promise<{ ms: number; text: string; bytes: number }>((resolve, reject) => {
      const started = performance.now();
      get(url, { headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (keep) chunks.push(chunk);
        });
        res.on('end', () => {
          const ms = performance.now() - started;
          if (res.statusCode !== 200) reject(new Error(`${path}: ${res.statusCode}`));
          else resolve({ ms, text: keep ? Buffer.concat(chunks).toString('utf8') : '', bytes });
        });
        res.on('error', reject);
      }).on('error', reject);
    });
  for (let i = 0; i < 3; i++) await fetchAll(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) times.push((await fetchAll()).ms);
  const last = (await fetchAll(true)).text;
  await new Promise((resolve) => setTimeout(resolve, 600)); // log lines are flushed every 200 ms
  const serverMs = serverTimes(path, SAMPLES + 1).slice(0, SAMPLES);
  // Memory: 4 clients at once for a few seconds.
  const pid = server.child.pid!;
  let peak = rssMb(pid);
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 100);
  const until = performance.now() + 4000;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (performance.now() < until) await fetchAll();
    }),
  );
  clearInterval(sampler);
  return {
    name,
    path,
    medianMs: median(serverMs),
    p90Ms: [...serverMs].sort((x, y) => x - y)[Math.floor(serverMs.length * 0.9)],
    clientMedianMs: median(times),
    items: (JSON.parse(last) as unknown[]).length,
    bytes: Buffer.byteLength(last),
    peakRssMb: peak,
  };
}

async function main(): Promise<void> {
  const db = await startDatabase();
  pin(process.pid, 0);
  if (db.postmasterPid) pin(db.postmasterPid, 0);
  const chain = await startLocalnet({ core: 0 });
  const servers: BenchServer[] = [];
  try {
    const bare = await startBareNest({ core: 1 });
    servers.push(bare);
    const a = await startServer(db.url, {
      core: 1,
      env: { SOLANA_RPC_URL: chain.url },
      stdoutFile: LOG_FILE,
    });
    servers.push(a);
    const merchant = createMerchant(db.url);
    const headers = {
      Authorization: `Bearer ${merchant.apiKey}`,
      'content-type': 'application/json',
    };

    // POST /api/invoices against the bare Nest app, alternating rounds.
    const invoice = () =>
      JSON.stringify({
        walletAddress: wallet(),
        mint: 'USDC',
        taxBps: 825,
        customerLabel: 'Bench',
        lineItems: [
          { description: 'Consulting', quantity: 3, unitAmount: '150' },
          { description: 'Hosting', quantity: 1, unitAmount: '9.99' },
          { description: 'Support', quantity: 2, unitAmount: '25' },
        ],
      });
    const post: Partial<autocannon.Options> = {
      method: 'POST',
      headers,
      requests: [{ setupRequest: (req) => ({ ...req, body: invoice() }) }],
    };
    const bareRuns: Load[] = [];
    const postRuns: Load[] = [];
    if (ONLY !== 'lists') {
      await autocannon({ url: `${bare.base}/hello`, connections: CONNECTIONS, duration: 2 });
      await autocannon({
        url: `${a.base}/api/invoices`,
        connections: CONNECTIONS,
        duration: 2,
        ...post,
      });
      for (let round = 0; round < ROUNDS; round++) {
        bareRuns.push(await load(`${bare.base}/hello`, bare.child.pid!, {}));
        postRuns.push(await load(`${a.base}/api/invoices`, a.child.pid!, post));
        process.stderr.write(
          `  round ${round + 1}: bare Nest ${bareRuns[round].rps.toFixed(0)} req/s, POST /api/invoices ${postRuns[round].rps.toFixed(0)} req/s\n`,
        );
      }
    }
    const bareRps = median(bareRuns.map((r) => r.rps));
    const postRps = median(postRuns.map((r) => r.rps));
    const bareCpu = median(bareRuns.map((r) => r.cpuUs));
    const postCpu = median(postRuns.map((r) => r.cpuUs));

    // The 10,000-row lists, on a second merchant so the invoices created above do not count.
    const lists: ListRow[] = [];
    if (ONLY !== 'post') {
      const big = createMerchant(db.url);
      await seed(db.url, big.merchant.id);
      if (process.env.BENCH_PAUSE) {
        process.stderr.write(
          `seeded; DATABASE_URL=${db.url} merchant ${big.merchant.id} key ${big.apiKey}\n`,
        );
        await new Promise((resolve) => setTimeout(resolve, Number(process.env.BENCH_PAUSE)));
      }
      const auth = { Authorization: `Bearer ${big.apiKey}` };
      for (const [name, path] of [
        ['GET /api/invoices', '/api/invoices'],
        ['GET /api/invoices?search=', '/api/invoices?search=customer%201'],
        ['GET /api/invoices?search= (none)', '/api/invoices?search=zzzz-no-match'],
        ['GET /api/subscriptions', '/api/subscriptions'],
        ['GET /api/customers', '/api/customers'],
        ['GET /api/customers?search=', '/api/customers?search=customer%201'],
      ]) {
        lists.push(await list(a, name, path, auth));
        process.stderr.write(`  ${name}: median ${lists.at(-1)!.medianMs.toFixed(1)} ms\n`);
      }
    }

    const pad = (s: string, n: number) => s.padEnd(n);
    const lines = [
      `Billing benchmark: server pinned to one core: ${hasTaskset() ? 'yes' : 'no (taskset missing)'}; ${CONNECTIONS} connections, ${SECONDS}s x ${ROUNDS} alternating rounds`,
      '',
      `bare Nest GET /hello: ${bareRps.toFixed(0)} req/s (${bareRuns.map((r) => r.rps.toFixed(0)).join(', ')}), ${bareCpu.toFixed(0)} CPU us/req`,
      `POST /api/invoices (3 line items, new customer): ${postRps.toFixed(0)} req/s (${postRuns.map((r) => r.rps.toFixed(0)).join(', ')}), ${postCpu.toFixed(0)} CPU us/req, p99 ${median(postRuns.map((r) => r.p99))} ms, non-2xx ${postRuns.reduce((n, r) => n + r.bad, 0)}`,
      `  = ${((postRps / bareRps) * 100).toFixed(1)}% of bare Nest (target >= 8%): ${postRps / bareRps >= 0.08 ? 'yes' : 'NO'}`,
      '',
      `${ROWS.toLocaleString('en')} rows per list, one request at a time (${SAMPLES} samples), then 4 clients at once for RSS:`,
      `${pad('route', 36)}${pad('items', 8)}${pad('MB', 7)}${pad('server median ms', 18)}${pad('p90 ms', 9)}${pad('client median', 15)}${pad('peak RSS MB', 13)}< 150 ms`,
      ...lists.map(
        (l) =>
          `${pad(l.name, 36)}${pad(String(l.items), 8)}${pad((l.bytes / 1e6).toFixed(1), 7)}${pad(l.medianMs.toFixed(1), 18)}${pad(l.p90Ms.toFixed(1), 9)}${pad(l.clientMedianMs.toFixed(1), 15)}${pad(l.peakRssMb.toFixed(0), 13)}${l.medianMs < 150 ? 'yes' : 'NO'}`,
      ),
    ];
    process.stdout.write(`\n${lines.join('\n')}\n`);
    saveResults('billing', { bareRuns, postRuns, bareRps, postRps, lists });
  } finally {
    await stopServers(servers);
    await chain.stop();
    await db.stop();
  }
}

runBench(main);
