/**
 * HTTP benchmark of the foundation's hot paths (`npm run bench`). See bench/README.md.
 *
 * Starts the built service as a child process pinned to one core (taskset) on its own database,
 * seeds a merchant with 100 customers, and drives each route with autocannon (50 connections)
 * from this process. Every route is reported against two anchors measured in the same run: a bare
 * Nest 11 hello app (bench/bare-nest.ts, its own process, pinned to the same core; measured in
 * rounds alternating with GET /health/live, medians compared) and GET /health/live, the
 * service's own trivial route.
 */
import autocannon from 'autocannon';
import { Client } from 'pg';
import {
  BenchServer,
  cpuMicros,
  createMerchant,
  hasTaskset,
  pin,
  rssMb,
  runBench,
  saveResults,
  startBareNest,
  startDatabase,
  startServer,
  stopServers,
  wallet,
  LOAD,
} from './harness';

const { seconds: SECONDS, connections: CONNECTIONS, anchorRounds: ANCHOR_ROUNDS } = LOAD;

interface Scenario {
  name: string;
  /** Minimum ratio: to the bare Nest app for the trivial route, to the trivial route otherwise. */
  target: number;
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
  /** Against the bare Nest hello app of the same run. */
  bareRatio: number;
  /** CPU microseconds per request of the server process (steadier than req/s). */
  cpuUs: number;
  target: number;
}

type Run = Omit<Row, 'ratio' | 'bareRatio'> & { rss: number };

async function run(
  base: string,
  scenario: Scenario,
  pid: number,
  options: { seconds?: number; warmUp?: boolean } = {},
): Promise<Run> {
  if (options.warmUp ?? true) {
    await autocannon({
      url: base + scenario.path,
      connections: CONNECTIONS,
      duration: 2,
      ...scenario.options,
    });
  }
  let rss = 0;
  const sampler = setInterval(() => (rss = Math.max(rss, rssMb(pid))), 250);
  const cpuBefore = cpuMicros(pid);
  const result = await autocannon({
    url: base + scenario.path,
    connections: CONNECTIONS,
    duration: options.seconds ?? SECONDS,
    ...scenario.options,
  });
  clearInterval(sampler);
  const cpuUs = (cpuMicros(pid) - cpuBefore) / Math.max(1, result.requests.total);
  return {
    name: scenario.name,
    cpuUs,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    target: scenario.target,
    rss,
  };
}

/** The run with the median req/s. */
function median(runs: Run[]): Run {
  return [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)];
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
    // The anchor: a bare Nest app on the service's core, idle while the service is measured
    // (and the service idle while the anchor is).
    const bare = await startBareNest({ core: 1 });
    servers.push(bare);
    const bareScenario: Scenario = {
      name: 'bare Nest GET /hello',
      target: 0,
      path: '/hello',
      options: {},
    };
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
      // The service's own trivial route: the request pipeline (request id, access log, guards)
      // must cost at most a quarter of what Nest itself costs.
      { name: 'GET /health/live', target: 0.8, path: '/health/live', options: {} },
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

    // The anchor and the trivial route, alternating (this machine's speed drifts over a run):
    // ANCHOR_ROUNDS rounds of each, the median of each is compared.
    const [live, ...others] = scenarios;
    await run(bare.base, bareScenario, bare.child.pid!, { seconds: 2, warmUp: false });
    await run(a.base, live, a.child.pid!, { seconds: 2, warmUp: false });
    const bareRuns: Run[] = [];
    const liveRuns: Run[] = [];
    for (let round = 0; round < ANCHOR_ROUNDS; round++) {
      bareRuns.push(await run(bare.base, bareScenario, bare.child.pid!, { warmUp: false }));
      liveRuns.push(await run(a.base, live, a.child.pid!, { warmUp: false }));
      process.stderr.write(
        `  round ${round + 1}: bare Nest ${bareRuns[round].rps.toFixed(0)} req/s, ${live.name} ${liveRuns[round].rps.toFixed(0)} req/s\n`,
      );
    }
    const bareRun = median(bareRuns);
    const bareRps = bareRun.rps;
    const bareCpuUs = median([...bareRuns].map((r) => ({ ...r, rps: r.cpuUs }))).rps;
    const liveRun = median(liveRuns);
    peakRss = Math.max(...liveRuns.map((r) => r.rss));
    rows.push({ ...liveRun, ratio: 1, bareRatio: 0 });

    for (const scenario of others) {
      const before = await apiKeyIndexScans(admin);
      const r = await run(a.base, scenario, a.child.pid!);
      await new Promise((res) => setTimeout(res, 600)); // let pg_stat catch up
      if (scenario.options.headers) {
        authScans += (await apiKeyIndexScans(admin)) - before;
        authRequests += r.rps * SECONDS;
      }
      peakRss = Math.max(peakRss, r.rss);
      rows.push({ ...r, ratio: rows.length ? r.rps / rows[0].rps : 1, bareRatio: 0 });
      process.stderr.write(`  ${scenario.name}: ${r.rps.toFixed(0)} req/s\n`);
    }
    for (const row of rows) row.bareRatio = row.rps / bareRps;

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
      `anchor: bare Nest 11 hello app, same core, same run, median of ${ANCHOR_ROUNDS} rounds alternating with GET /health/live: ${bareRps.toFixed(0)} req/s (${bareRuns.map((r) => r.rps.toFixed(0)).join(', ')}), ${bareCpuUs.toFixed(0)} CPU us/req`,
      '',
      `${pad('route', 32)}${pad('req/s', 10)}${pad('CPU us', 8)}${pad('p50 ms', 8)}${pad('p99 ms', 8)}${pad('vs bare', 9)}${pad('vs live', 9)}${pad('target', 14)}${pad('non-2xx', 9)}ok`,
      ...rows.map((r, i) => {
        // Row 0 (the trivial route) is held to the bare Nest app; the others to row 0.
        const ratio = i === 0 ? r.bareRatio : r.ratio;
        const target = `${(r.target * 100).toFixed(0)}% ${i === 0 ? 'bare' : 'live'}`;
        const ok = ratio >= r.target && r.p99 < 50 && r.non2xx + r.errors === 0;
        return `${pad(r.name, 32)}${pad(r.rps.toFixed(0), 10)}${pad(r.cpuUs.toFixed(0), 8)}${pad(String(r.p50), 8)}${pad(String(r.p99), 8)}${pad(`${(r.bareRatio * 100).toFixed(1)}%`, 9)}${pad(`${(r.ratio * 100).toFixed(1)}%`, 9)}${pad(target, 14)}${pad(String(r.non2xx + r.errors), 9)}${ok ? 'yes' : 'NO'}`;
      }),
      `ok: the ratio target, p99 < 50 ms and no errors.`,
      '',
      `peak server RSS: ${peakRss.toFixed(0)} MB (target < 300 MB)`,
      `api_keys table scans per authenticated request: ${(authScans / Math.max(1, authRequests)).toFixed(5)} (${authScans} scans / ${authRequests.toFixed(0)} requests)`,
      `revoked key on the revoking instance: HTTP ${sameInstance} (immediately after the DELETE returned)`,
      `revoked key refused by a second instance after: ${otherMs < 0 ? 'NOT within 5 s' : `${otherMs.toFixed(0)} ms`} (target < 1000 ms)`,
    ];
    process.stdout.write(`\n${lines.join('\n')}\n`);
    saveResults('http', {
      bare: { runs: bareRuns, rps: bareRps, cpuUs: bareCpuUs },
      live: { runs: liveRuns },
      rows,
      peakRss,
      authScans,
      authRequests,
      sameInstance,
      otherMs,
    });
  } finally {
    await stopServers(servers);
    await db.stop();
  }
}

runBench(main);
