/**
 * Webhook benchmark (`npm run bench:webhooks`). See bench/README.md.
 *
 * 1. Delivery throughput: N queued deliveries are released at once to two service instances
 *    (ROLE=worker) on one database, which POST them signed to a local receiver in this process.
 *    Baseline, same run: a bare undici client POSTing signed bodies to the same receiver with
 *    the same number in flight (no database). `BENCH_ROUNDS` rounds, each the bare client and
 *    then the service, so that the machine's drift weighs on both; medians.
 * 2. Recording cost: the median latency of a customer upsert that changes a value (records
 *    `customer.updated`: event row, delivery row, NOTIFY) against the same upsert changing
 *    nothing (no event), sequential requests on one connection, interleaved in blocks.
 */
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import { Client } from 'pg';
import { Agent, request } from 'undici';
import {
  BenchServer,
  cpuMicros,
  createMerchant,
  median,
  pin,
  runBench,
  saveResults,
  startDatabase,
  startServer,
  stopServers,
  treeCpuMicros,
  wallet,
} from './harness';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000);
const CONCURRENCY = Number(process.env.BENCH_WEBHOOK_CONCURRENCY ?? 64); // per instance
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 2000); // per kind of request
/** Rounds of the delivery throughput, each the bare client and then the service (medians). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** BENCH_PG_STATEMENTS=1: pg_stat_statements on; the delivery round lists its statements. */
const PG_STATEMENTS = process.env.BENCH_PG_STATEMENTS === '1';
/** BENCH_PROFILE_DIR=dir: each delivering instance writes a V8 CPU profile there when it stops. */
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR;
/** BENCH_ONLY=delivery skips the recording cost. */
const ONLY = process.env.BENCH_ONLY;

/** A receiver that answers 200 at once and counts deliveries per event id. */
class Receiver {
  readonly seen = new Map<string, number>();
  total = 0;
  onCount?: () => void;
  private server?: Server;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const id = req.headers['service-event-id'];
      req.resume();
      req.on('end', () => {
        res.end();
        if (typeof id === 'string') this.seen.set(id, (this.seen.get(id) ?? 0) + 1);
        this.total++;
        this.onCount?.();
      });
    });
    this.server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  reset(): void {
    this.seen.clear();
    this.total = 0;
  }

  waitFor(count: number, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`receiver got ${this.total}/${count} in ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.onCount = () => {
        if (this.total >= count) {
          clearTimeout(timer);
          this.onCount = undefined;
          resolve();
        }
      };
      this.onCount();
    });
  }

  stop(): Promise<void> {
    this.server?.closeAllConnections();
    return new Promise((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/**
 * The bare client, on a thread of its own (as the service is a process of its own): `inFlight`
 * loops POSTing `count` HMAC-signed event bodies back to back over a keep-alive undici agent.
 * Returns POSTs per second.
 */
function bareClient(url: string, count: number, inFlight: number): Promise<number> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { createHmac, randomUUID } = require('node:crypto');
    const { Agent, request } = require('undici');
    const { url, count, inFlight } = workerData;
    const agent = new Agent({ keepAliveTimeout: 30000, connections: 64 });
    const bodies = Array.from({ length: count }, () => {
      const id = 'evt_' + randomUUID();
      return [id, JSON.stringify({ id, type: 'customer.updated', createdAt: new Date().toISOString(),
        data: { object: { id: randomUUID(), walletAddress: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin',
          email: 'ada@example.com', label: 'Ada Lovelace' } } })];
    });
    let next = 0;
    const started = performance.now();
    Promise.all(Array.from({ length: inFlight }, async () => {
      while (next < count) {
        const [id, body] = bodies[next++];
        const t = Math.floor(Date.now() / 1000);
        const v1 = createHmac('sha256', 'whsec_bench').update(t + '.' + body).digest('hex');
        const res = await request(url, { method: 'POST', body, dispatcher: agent, headers: {
          'content-type': 'application/json', 'service-event-id': id,
          'service-signature': 't=' + t + ',v1=' + v1 } });
        await res.body.dump();
      }
    })).then(() => parentPort.postMessage(count / ((performance.now() - started) / 1000)))
      .finally(() => agent.close());
  `;
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: { url, count, inFlight } });
    worker.once('message', (rate: number) => resolve(rate));
    worker.once('error', reject);
  });
}

/**
 * Queues `count` deliveries due far in the future (so nothing starts yet), in one bulk insert,
 * then refreshes the planner's statistics. In service, rows arrive a few at a time and
 * autovacuum keeps the statistics current (the table's thresholds are tuned for a queue); a
 * table that grows from nothing to 20 000 rows in one statement would otherwise be planned as
 * nearly empty for the whole run, and the claim would scan every due row instead of the first few.
 */
async function queue(db: Client, merchantId: string, count: number): Promise<void> {
  await db.query(
    `WITH ids AS (SELECT gen_random_uuid() AS id FROM generate_series(1, $2)),
     e AS (
       INSERT INTO events (id, merchant_id, type, payload, created_at)
       SELECT id, $1::uuid, 'customer.updated', json_build_object(
           'id', 'evt_' || id, 'type', 'customer.updated', 'createdAt', now(),
           'data', json_build_object('object', json_build_object(
             'id', gen_random_uuid(), 'merchantId', $1::text,
             'walletAddress', '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin',
             'email', 'ada@example.com', 'label', 'Ada Lovelace',
             'createdAt', now(), 'updatedAt', now()))), now()
         FROM ids RETURNING id
     )
     INSERT INTO webhook_deliveries
       (id, event_id, merchant_id, status, attempts, next_attempt_at, created_at, updated_at)
     SELECT gen_random_uuid(), e.id, $1::uuid, 'pending', 0, now() + interval '1 day', now(), now()
       FROM e`,
    [merchantId, count],
  );
  await db.query('ANALYZE webhook_deliveries');
}

/** CPU time (µs) of the processes in play: both service instances, PostgreSQL, this process. */
interface Cpu {
  service: number;
  postgres: number;
  bench: number;
}

function readCpu(services: number[], postgres: number | undefined): Cpu {
  const usage = process.cpuUsage(); // every thread of this process: the receiver, a bare client
  return {
    service: services.reduce((sum, pid) => sum + cpuMicros(pid), 0),
    postgres: postgres ? treeCpuMicros(postgres) : 0,
    bench: usage.user + usage.system,
  };
}

function addCpu(total: Cpu, more: Cpu): void {
  total.service += more.service;
  total.postgres += more.postgres;
  total.bench += more.bench;
}

/** CPU µs per item between two readings. */
function cpuPer(before: Cpu, after: Cpu, items: number): Cpu {
  return {
    service: (after.service - before.service) / items,
    postgres: (after.postgres - before.postgres) / items,
    bench: (after.bench - before.bench) / items,
  };
}

/** The database's commits so far (every transaction, the bench's own few included). */
async function commits(db: Client): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    `SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()`,
  );
  return Number(rows[0].n);
}

/** The statements the service ran in the round, per delivery (BENCH_PG_STATEMENTS=1). */
async function statements(
  db: Client,
  deliveries: number,
): Promise<{ query: string; perDelivery: number; rowsPerCall: number; usPerDelivery: number }[]> {
  const { rows } = await db.query<{ query: string; calls: string; rows: string; ms: number }>(
    `SELECT regexp_replace(query, '\\s+', ' ', 'g') AS query, calls::text AS calls,
            rows::text AS rows, total_exec_time + total_plan_time AS ms
       FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND query NOT LIKE '%pg_stat_%'
      ORDER BY calls DESC LIMIT 12`,
  );
  return rows.map((row) => ({
    query: row.query.slice(0, 100),
    perDelivery: Number(row.calls) / deliveries,
    rowsPerCall: Number(row.rows) / Math.max(1, Number(row.calls)),
    usPerDelivery: (1000 * row.ms) / deliveries,
  }));
}

async function deliveryThroughput(
  databaseUrl: string,
  postgresPid: number | undefined,
  receiver: Receiver,
  url: string,
): Promise<Record<string, unknown>> {
  const merchant = createMerchant(databaseUrl);
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  await db.query('UPDATE merchants SET webhook_url = $2 WHERE id = $1', [
    merchant.merchant.id,
    url,
  ]);
  const workerEnv = {
    ROLE: 'worker',
    WEBHOOK_CONCURRENCY: String(CONCURRENCY),
    LOG_LEVEL: 'warn',
  };
  const servers: BenchServer[] = [];
  const release = () =>
    db.query(`UPDATE webhook_deliveries SET next_attempt_at = now() - interval '1 second'
               WHERE status = 'pending'; NOTIFY webhook_delivery_queued`);
  try {
    const nodeArgs = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
    servers.push(await startServer(databaseUrl, { env: workerEnv, nodeArgs }));
    servers.push(await startServer(databaseUrl, { env: workerEnv, nodeArgs }));
    const pids = servers.map((s) => s.child.pid!);
    // Warm-up rounds: the bare client, then the service.
    await bareClient(url, 2000, 2 * CONCURRENCY);
    await queue(db, merchant.merchant.id, 2000);
    receiver.reset();
    await release();
    await receiver.waitFor(2000, 60_000);

    const bareRates: number[] = [];
    const rates: number[] = [];
    const bareCpu: Cpu = { service: 0, postgres: 0, bench: 0 };
    const cpu: Cpu = { service: 0, postgres: 0, bench: 0 };
    let commitsDuring = 0;
    let duplicates = 0;
    let distinct = 0;
    if (PG_STATEMENTS) await db.query('SELECT pg_stat_statements_reset()');
    for (let round = 0; round < ROUNDS; round++) {
      // Baseline: the same receiver, the same total in flight, no service in between (the idle
      // instances are paused, so that their timers take nothing from it).
      receiver.reset();
      for (const server of servers) server.child.kill('SIGSTOP');
      const bareBefore = readCpu(pids, postgresPid);
      try {
        bareRates.push(await bareClient(url, EVENTS, 2 * CONCURRENCY));
      } finally {
        for (const server of servers) server.child.kill('SIGCONT');
      }
      addCpu(bareCpu, cpuPer(bareBefore, readCpu(pids, postgresPid), EVENTS * ROUNDS));

      await queue(db, merchant.merchant.id, EVENTS);
      receiver.reset();
      const commitsBefore = await commits(db);
      const cpuBefore = readCpu(pids, postgresPid);
      const started = performance.now();
      await release();
      await receiver.waitFor(EVENTS, 300_000);
      rates.push(EVENTS / ((performance.now() - started) / 1000));
      // Until every result is written: the last POSTs' results follow the receiver's count.
      for (let i = 0; i < 200; i++) {
        const { rows } = await db.query<{ n: string }>(
          `SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'`,
        );
        if (rows[0].n === '0') break;
        await new Promise((r) => setTimeout(r, 25));
      }
      addCpu(cpu, cpuPer(cpuBefore, readCpu(pids, postgresPid), EVENTS * ROUNDS));
      commitsDuring += (await commits(db)) - commitsBefore;
      if (round === ROUNDS - 1) await new Promise((r) => setTimeout(r, 1000)); // late duplicates
      duplicates += [...receiver.seen.values()].filter((n) => n > 1).length;
      distinct += receiver.seen.size;
      process.stderr.write(
        `  round ${round + 1}: bare ${bareRates[round].toFixed(0)} POST/s, 2 instances ${rates[round].toFixed(0)} deliveries/s (${((100 * rates[round]) / bareRates[round]).toFixed(1)}%)\n`,
      );
    }
    const perStatement = PG_STATEMENTS ? await statements(db, EVENTS * ROUNDS) : [];
    const { rows } = await db.query<{ status: string; n: string }>(
      `SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status`,
    );
    const delivered = Number(rows.find((r) => r.status === 'delivered')?.n ?? 0);
    return {
      bareRates,
      rates,
      bareRate: median(bareRates),
      rate: median(rates),
      ratio: median(rates.map((rate, i) => rate / bareRates[i])),
      duplicates,
      distinct,
      deliveredRows: delivered,
      bareCpuUs: bareCpu,
      cpuUs: cpu,
      commitsPerDelivery: commitsDuring / (EVENTS * ROUNDS),
      statements: perStatement,
    };
  } finally {
    await stopServers(servers);
    await db.end();
  }
}

async function recordingCost(databaseUrl: string, url: string): Promise<Record<string, number>> {
  const merchant = createMerchant(databaseUrl);
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  // A realistic merchant: with an endpoint, so recording writes the event, a delivery and a NOTIFY.
  await db.query('UPDATE merchants SET webhook_url = $2 WHERE id = $1', [
    merchant.merchant.id,
    url,
  ]);
  await db.end();
  // ROLE=api: nothing delivers in this process, so only the request path is measured. The
  // server runs on core 1, this client and PostgreSQL on core 0.
  pin(process.pid, 0);
  const server = await startServer(databaseUrl, { core: 1, env: { ROLE: 'api' } });
  const agent = new Agent({ connections: 1 });
  const headers = {
    authorization: `Bearer ${merchant.apiKey}`,
    'content-type': 'application/json',
  };
  const walletAddress = wallet();
  let flip = 0;
  const post = async (label: string): Promise<number> => {
    const t0 = performance.now();
    const res = await request(`${server.base}/api/customers`, {
      method: 'POST',
      dispatcher: agent,
      headers,
      body: JSON.stringify({ walletAddress, label }),
    });
    await res.body.dump();
    if (res.statusCode !== 201) throw new Error(`HTTP ${res.statusCode}`);
    return performance.now() - t0;
  };
  try {
    const withEvent: number[] = [];
    const without: number[] = [];
    for (let i = 0; i < 300; i++) await post(i % 2 ? 'A' : 'B'); // warm-up
    for (let block = 0; block < SAMPLES / 100; block++) {
      await post('Same'); // untimed: sets the label back, which is a change
      for (let i = 0; i < 100; i++) without.push(await post('Same')); // no change: no event
      for (let i = 0; i < 100; i++) withEvent.push(await post(flip++ % 2 ? 'A' : 'B'));
    }
    const check = new Client({ connectionString: databaseUrl });
    await check.connect();
    // The outbox also put the upsert in a transaction: BEGIN and COMMIT are two more round trips
    // (plus MikroORM's transaction bookkeeping, not measured here). Same client, same core.
    const plain: number[] = [];
    const wrapped: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      let t0 = performance.now();
      await check.query('SELECT 1');
      plain.push(performance.now() - t0);
      t0 = performance.now();
      await check.query('BEGIN');
      await check.query('SELECT 1');
      await check.query('COMMIT');
      wrapped.push(performance.now() - t0);
    }
    const counted = await check.query<{ n: string }>(
      'SELECT count(*) AS n FROM events WHERE merchant_id = $1',
      [merchant.merchant.id],
    );
    await check.end();
    const events = Number(counted.rows[0].n);
    const unchanged = median(without);
    const changed = median(withEvent);

    return {
      unchangedMedianMs: unchanged,
      changedMedianMs: changed,
      addedMs: changed - unchanged,
      eventsRecorded: events,
      transactionMs: median(wrapped) - median(plain),
    };
  } finally {
    await agent.close();
    await stopServers([server]);
  }
}

async function main(): Promise<void> {
  const db = await startDatabase(
    PG_STATEMENTS ? { settings: ['shared_preload_libraries=pg_stat_statements'] } : {},
  );
  if (PG_STATEMENTS) {
    const admin = new Client({ connectionString: db.url });
    await admin.connect();
    await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await admin.end();
  }
  const receiver = new Receiver();
  const url = await receiver.start();
  try {
    process.stderr.write('delivery throughput...\n');
    const delivery = await deliveryThroughput(db.url, db.postmasterPid, receiver, url);
    const rate = delivery.rate as number;
    const bareRate = delivery.bareRate as number;
    const cpu = delivery.cpuUs as Cpu;
    const bareCpu = delivery.bareCpuUs as Cpu;
    const ratio = delivery.ratio as number;
    const lines = [
      `Webhook benchmark: ${ROUNDS} rounds of ${EVENTS} events (medians), 2 instances x ${CONCURRENCY} in flight, receiver in the bench process`,
      '',
      `bare undici client -> receiver (baseline):   ${bareRate.toFixed(0)} POST/s  (${(delivery.bareRates as number[]).map((r) => r.toFixed(0)).join(', ')})`,
      `  CPU µs per POST: client and receiver (this process) ${bareCpu.bench.toFixed(0)}; the idle service instances ${bareCpu.service.toFixed(1)}, PostgreSQL ${bareCpu.postgres.toFixed(1)}`,
      `service, 2 instances -> receiver:            ${rate.toFixed(0)} deliveries/s  (${(delivery.rates as number[]).map((r) => r.toFixed(0)).join(', ')})`,
      `  ${(ratio * 100).toFixed(1)}% of the baseline (median of the rounds' ratios; target >= 1000/s: ${rate >= 1000 ? 'yes' : 'NO'})`,
      `  ${String(delivery.distinct)} distinct events received, ${String(delivery.duplicates)} duplicates, ${String(delivery.deliveredRows)} rows marked delivered (warm-up included)`,
      `  CPU µs per delivery: service (both instances) ${cpu.service.toFixed(0)}, PostgreSQL ${cpu.postgres.toFixed(0)}, receiver (this process) ${cpu.bench.toFixed(0)}`,
      `  PostgreSQL commits per delivery: ${(delivery.commitsPerDelivery as number).toFixed(3)}`,
    ];
    const perStatement = delivery.statements as Awaited<ReturnType<typeof statements>>;
    if (perStatement.length > 0) {
      lines.push(
        `  statements per delivery: ${perStatement.reduce((sum, row) => sum + row.perDelivery, 0).toFixed(3)}`,
      );
      for (const row of perStatement) {
        lines.push(
          `    ${row.perDelivery.toFixed(3).padStart(7)} calls, ${row.rowsPerCall.toFixed(1).padStart(6)} rows/call, ${row.usPerDelivery.toFixed(1).padStart(6)} µs per delivery  ${row.query}`,
        );
      }
    }
    let recording: Record<string, number> | undefined;
    if (ONLY !== 'delivery') {
      process.stderr.write('recording cost...\n');
      if (db.postmasterPid) pin(db.postmasterPid, 0); // new backends inherit core 0
      recording = await recordingCost(db.url, url);
      lines.push(
        '',
        `POST /api/customers, sequential, one connection, median of ${SAMPLES} each:`,
        `  upsert changing nothing (no event):        ${recording.unchangedMedianMs.toFixed(3)} ms`,
        `  upsert changing the label (event recorded): ${recording.changedMedianMs.toFixed(3)} ms`,
        `  recording an event adds:                   ${recording.addedMs.toFixed(3)} ms (target < 1 ms: ${recording.addedMs < 1 ? 'yes' : 'NO'})`,
        `  BEGIN + COMMIT round trips (the transaction the outbox needs): ${recording.transactionMs.toFixed(3)} ms`,
        `  events recorded: ${recording.eventsRecorded} (expected ${300 + SAMPLES + SAMPLES / 100}: one per upsert that changes the label)`,
      );
    }
    process.stdout.write(`\n${lines.join('\n')}\n`);
    saveResults('webhooks', { delivery, recording });
  } finally {
    await receiver.stop();
    await db.stop();
  }
}

runBench(main);
