/**
 * The ledger's CSV export (`GET /api/exports/ledger`, issue 25) over a long ledger:
 * `npm run bench:export`. A fresh database gets `BENCH_EXPORT_ROWS` (default 1,000,000) ledger
 * lines for one merchant (one `INSERT ... SELECT generate_series`), then the built service
 * streams the export to this process, which reads it as it comes and counts its records.
 *
 * Measured in the same run:
 * - **baseline**: a bare `pg` client reading the same statement's rows through a cursor
 *   (`DECLARE`, `FETCH 1000`), and writing nothing: what PostgreSQL and the driver cost alone;
 * - **the export**: rows/s through the whole service (cursor, CSV, HTTP with backpressure), its
 *   ratio to the baseline, and the service's resident memory: before, the peak while streaming
 *   (sampled every 50 ms from /proc), and after, for a tenth of the ledger and for all of it:
 *   memory bounded by the batches, not by the ledger's length, shows as the same peak for both.
 */
import { request } from 'undici';
import { Client } from 'pg';
import {
  createMerchant,
  rssMb,
  runBench,
  saveResults,
  startDatabase,
  startServer,
  stopServers,
} from './harness';

const ROWS = Number(process.env.BENCH_EXPORT_ROWS ?? 1_000_000);

runBench(async () => {
  const db = await startDatabase();
  const { merchant, apiKey } = createMerchant(db.url);
  const client = new Client({ connectionString: db.url });
  await client.connect();
  const seeded = Date.now();
  await client.query(
    `INSERT INTO payments (id, created_at, updated_at, merchant_id, kind, status, mint, amount,
                           fee, excess, signature, payer, destination, instruction, "references",
                           slot, finalized_at)
     SELECT gen_random_uuid(), now() - make_interval(secs => $2::int - g), now(), $1,
            CASE WHEN g % 10 = 0 THEN 'subscription' ELSE 'invoice' END, 'finalized', 'USDC',
            g * 1000 + 1, 0, 0, md5(g::text) || md5((g + 1)::text), md5(g::text),
            md5((g + 2)::text), 2, ARRAY[md5((g + 3)::text)], 1000000 + g, now()
       FROM generate_series(1, $2::int) g`,
    [merchant.id, ROWS],
  );
  await client.query('VACUUM ANALYZE payments');
  const first = (
    await client.query<{ first: Date }>('SELECT min(created_at) AS first FROM payments')
  ).rows[0].first;
  process.stdout.write(`seeded ${ROWS} ledger lines in ${Date.now() - seeded} ms\n`);

  // Baseline: the rows through a bare cursor, nothing written.
  const bareStart = process.hrtime.bigint();
  await client.query('BEGIN');
  await client.query(
    `DECLARE bare NO SCROLL CURSOR FOR
       SELECT pm.id, pm.created_at, pm.kind, pm.status, pm.amount::text, pm.fee::text,
              pm.excess::text, pm.mint, pm.signature, pm.instruction, pm.invoice_id,
              pm.subscription_id, pm.period, pm.customer_id, pm.payer, pm.destination,
              pm."references", pm.note, pm.slot::text, pm.finalized_at
         FROM payments pm WHERE pm.merchant_id = $1 ORDER BY pm.created_at, pm.id`,
    [merchant.id],
  );
  let bareRows = 0;
  for (;;) {
    const { rows } = await client.query('FETCH 1000 FROM bare');
    if (rows.length === 0) break;
    bareRows += rows.length;
  }
  await client.query('COMMIT');
  const bareSeconds = Number(process.hrtime.bigint() - bareStart) / 1e9;
  await client.end();

  const server = await startServer(db.url, { env: { LOG_LEVEL: 'warn' } });
  const pid = server.child.pid!;
  // Warm: one small export, then the idle figure.
  await (
    await request(`${server.base}/api/exports/ledger?to=2000-01-01T00:00:00Z`, {
      headers: { authorization: `Bearer ${apiKey}` },
    })
  ).body.text();
  /** Streams the export (`query`), counting records as they come; the peak RSS meanwhile. */
  const stream = async (query: string) => {
    const before = rssMb(pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 50);
    const start = process.hrtime.bigint();
    const res = await request(`${server.base}/api/exports/ledger${query}`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    let bytes = 0;
    let records = -1; // the header
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) records++;
    }
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    clearInterval(sampler);
    if (res.statusCode !== 200) throw new Error(`export: status ${res.statusCode}`);
    return { records, bytes, seconds, before, peak };
  };
  // A tenth of the ledger first (by time), then all of it: memory bounded by the batches shows
  // as the same peak for both.
  const tenthEnd = new Date(first.getTime() + (ROWS / 10) * 1000).toISOString();
  const tenth = await stream(`?to=${encodeURIComponent(tenthEnd)}`);
  const whole = await stream('');
  const { records, bytes, seconds } = whole;
  const idle = tenth.before;
  const peak = whole.peak;
  const after = rssMb(pid);
  await stopServers([server]);
  await db.stop();

  if (records !== ROWS || tenth.records !== ROWS / 10 || bareRows !== ROWS) {
    throw new Error(`export: ${records} records of ${ROWS}, ${tenth.records} of ${ROWS / 10}`);
  }
  const results = {
    rows: ROWS,
    baseline: { seconds: bareSeconds, rowsPerSecond: Math.round(ROWS / bareSeconds) },
    export: {
      seconds,
      rowsPerSecond: Math.round(ROWS / seconds),
      megabytes: Math.round(bytes / 1e6),
      ratioToBaseline: Number((bareSeconds / seconds).toFixed(3)),
    },
    serviceRssMb: {
      idle,
      tenthPeak: tenth.peak,
      wholePeak: peak,
      after,
      tenthPeakAboveIdle: Math.round(tenth.peak - idle),
      wholePeakAboveIdle: Math.round(peak - idle),
    },
  };
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  saveResults('export', results);
});
