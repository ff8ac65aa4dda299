/**
 * HTTP benchmark of the foundation's hot paths (`npm run bench`). See bench/README.md.
 *
 * Starts the built service as a child process pinned to one core (taskset) on its own database,
 * seeds a merchant with 100 customers, and drives each route with autocannon (50 connections)
 * from this process. Every route is reported as a ratio to GET /health/live, a trivial
 * unauthenticated route of the same app measured in the same run.
 */
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import {
  BenchServer,
  createMerchant,
  hasTaskset,
  pin,
  runBench,
  saveResults,
  startDatabase,
  startServer,
  stopServers,
  wallet,
} from './harness';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

interface Scenario {
  name: string;
  target: number; // minimum ratio to the trivial route
  path: string;
  options: Partial<autocannon.Options>;
}

interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  ratio: number;
  target: number;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

async function run(
  base: string,
  scenario: Scenario,
  pid: number,
): Promise<Omit<Row, 'ratio'> & { rss: number }> {
  await autocannon({
    url: base + scenario.path,
    connections: CONNECTIONS,
    duration: 2,
    ...scenario.options,
  }); // warm-up
  let rss = 0;
  const sampler = setInterval(() => (rss = Math.max(rss, rssMb(pid))), 250);
  const result = await autocannon({
    url: base + scenario.path,
    connections: CONNECTIONS,
    duration: SECONDS,
    ...scenario.options,
  });
  clearInterval(sampler);
  return {
    name: scenario.name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    target: scenario.target,
    rss,
  };
}

async function apiKeyIndexScans(client: Client): Promise<number> {
  const rows = await client.query<{ n: string }>(
    "SELECT coalesce(idx_scan, 0) + coalesce(seq_scan, 0) AS n FROM pg_stat_user_tables WHERE relname = 'api_keys'",
  );
  return Number(rows.rows[0]?.n ?? 0);
}

async function main(): Promise<void> {
  const db = await startDatabase();
  // The server runs alone on core 1; this load generator and PostgreSQL (its postmaster and the
  // backends it forks) share core 0. Left floating, PostgreSQL backends woken by the server's
  // queries run on the server's core and the server waits for them.
  pin(process.pid, 0);
  if (db.postmasterPid) pin(db.postmasterPid, 0);
  const databaseUrl = db.url;

  const servers: BenchServer[] = [];
  try {
    const a = await startServer(databaseUrl, { core: 1 });
    servers.push(a);
    const created = createMerchant(databaseUrl);
    const headers = {
      Authorization: `Bearer ${created.apiKey}`,
      'content-type': 'application/json',
    };
    let customerId = '';
    for (let i = 0; i < 100; i++) {
      const res = await fetch(`${a.base}/api/customers`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          walletAddress: wallet(),
          label: `Customer ${i}`,
          email: `c${i}@example.com`,
        }),
      });
      customerId = ((await res.json()) as { id: string }).id;
    }

    const scenarios: Scenario[] = [
      { name: 'GET /health/live (baseline)', target: 1, path: '/health/live', options: {} },
      {
        name: 'GET /api/customers/:id',
        target: 0.25,
        path: `/api/customers/${customerId}`,
        options: { headers },
      },
      {
        name: 'GET /api/customers (100 rows)',
        target: 0.08,
        path: '/api/customers',
        options: { headers },
      },
      {
        name: 'POST /api/customers',
        target: 0.12,
        path: '/api/customers',
        options: {
          method: 'POST',
          headers,
          requests: [
            {
              setupRequest: (req) => ({
                ...req,
                body: JSON.stringify({ walletAddress: wallet(), label: 'Bench' }),
              }),
            },
          ],
        },
      },
    ];

    const admin = new Client({ connectionString: databaseUrl });
    await admin.connect();
    const rows: Row[] = [];
    let peakRss = 0;
    let authScans = 0;
    let authRequests = 0;
    for (const scenario of scenarios) {
      const before = await apiKeyIndexScans(admin);
      const r = await run(a.base, scenario, a.child.pid!);
      await new Promise((res) => setTimeout(res, 600)); // let pg_stat catch up
      if (scenario.options.headers) {
        authScans += (await apiKeyIndexScans(admin)) - before;
        authRequests += r.rps * SECONDS;
      }
      peakRss = Math.max(peakRss, r.rss);
      rows.push({ ...r, ratio: rows.length ? r.rps / rows[0].rps : 1 });
      process.stderr.write(`  ${scenario.name}: ${r.rps.toFixed(0)} req/s\n`);
    }

    // Revocation: refused at once by the revoking instance, and how fast by another instance.
    const b = await startServer(databaseUrl, { core: 0 });
    servers.push(b);
    const key = (await (
      await fetch(`${a.base}/api/settings/api-keys`, { method: 'POST', headers, body: '{}' })
    ).json()) as {
      id: string;
      key: string;
    };
    const auth = { Authorization: `Bearer ${key.key}` };
    await fetch(`${b.base}/api/customers/${customerId}`, { headers: auth }); // cached on B
    await fetch(`${a.base}/api/customers/${customerId}`, { headers: auth }); // cached on A
    const revokedAt = performance.now();
    await fetch(`${a.base}/api/settings/api-keys/${key.id}`, { method: 'DELETE', headers });
    const sameInstance = (await fetch(`${a.base}/api/customers/${customerId}`, { headers: auth }))
      .status;
    let otherMs = -1;
    while (performance.now() - revokedAt < 5000) {
      if (
        (await fetch(`${b.base}/api/customers/${customerId}`, { headers: auth })).status === 401
      ) {
        otherMs = performance.now() - revokedAt;
        break;
      }
    }
    await admin.end();

    const pad = (s: string, n: number) => s.padEnd(n);
    const lines = [
      `HTTP benchmark: ${CONNECTIONS} connections, ${SECONDS}s per route, server pinned to one core: ${hasTaskset() ? 'yes' : 'no (taskset missing)'}`,
      '',
      `${pad('route', 32)}${pad('req/s', 10)}${pad('p50 ms', 8)}${pad('p99 ms', 8)}${pad('ratio', 8)}${pad('target', 8)}${pad('non-2xx', 9)}ok`,
      ...rows.map(
        (r) =>
          `${pad(r.name, 32)}${pad(r.rps.toFixed(0), 10)}${pad(String(r.p50), 8)}${pad(String(r.p99), 8)}${pad(`${(r.ratio * 100).toFixed(1)}%`, 8)}${pad(`${(r.target * 100).toFixed(0)}%`, 8)}${pad(String(r.non2xx + r.errors), 9)}${r.ratio >= r.target && r.p99 < 50 && r.non2xx + r.errors === 0 ? 'yes' : 'NO'}`,
      ),
      '',
      `peak server RSS: ${peakRss.toFixed(0)} MB (target < 300 MB)`,
      `api_keys table scans per authenticated request: ${(authScans / Math.max(1, authRequests)).toFixed(5)} (${authScans} scans / ${authRequests.toFixed(0)} requests)`,
      `revoked key on the revoking instance: HTTP ${sameInstance} (immediately after the DELETE returned)`,
      `revoked key refused by a second instance after: ${otherMs < 0 ? 'NOT within 5 s' : `${otherMs.toFixed(0)} ms`} (target < 1000 ms)`,
    ];
    process.stdout.write(`\n${lines.join('\n')}\n`);
    saveResults('http', { rows, peakRss, authScans, authRequests, sameInstance, otherMs });
  } finally {
    await stopServers(servers);
    await db.stop();
  }
}

runBench(main);
