/**
 * Production topology benchmark (`npm run bench:topology`). See bench/README.md.
 *
 * Two `ROLE=api` instances of the built service on one database and one chain (its own process),
 * and Debian's nginx configured from `deploy/nginx.conf` twice: one balancing over both
 * instances, one sending everything to the first. `POST /api/invoices` (3 line items, a new
 * customer every request) is driven through each with autocannon in alternating rounds
 * (one, two, two, one, ...): the ratio two/one is what a second instance buys on this machine.
 * Nothing is pinned: the instances, nginx, PostgreSQL and the load share the cores, as on one
 * small host. Charge runs are the workers' (not HTTP): `BENCH_MANY=2 npm run bench:engine`
 * measures two worker instances against one.
 */
import autocannon from 'autocannon';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BenchServer,
  createMerchant,
  freePort,
  LOAD,
  median,
  runBench,
  saveResults,
  startDatabase,
  startLocalnet,
  startServer,
  stopServers,
  treeCpuMicros,
  wallet,
} from './harness';
import { startNginx } from './nginx';

const { seconds: SECONDS, connections: CONNECTIONS } = LOAD;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);

interface Load {
  rps: number;
  p99: number;
  bad: number;
  cpuUs: number;
}

async function main(): Promise<void> {
  const db = await startDatabase();
  const chain = await startLocalnet();
  const servers: BenchServer[] = [];
  const balancers: { stop: () => void }[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      servers.push(
        await startServer(db.url, {
          env: { SOLANA_RPC_URL: chain.url, ROLE: 'api', TRUST_PROXY: '1' },
        }),
      );
    }
    const ports = servers.map((s) => Number(new URL(s.base).port));
    const one = await startNginx(
      mkdtempSync(join(tmpdir(), 'bench-nginx-one-')),
      await freePort(),
      ports.slice(0, 1),
    );
    const two = await startNginx(
      mkdtempSync(join(tmpdir(), 'bench-nginx-two-')),
      await freePort(),
      ports,
    );
    balancers.push(one, two);
    const merchant = createMerchant(db.url);
    const post: Partial<autocannon.Options> = {
      method: 'POST',
      headers: { Authorization: `Bearer ${merchant.apiKey}`, 'content-type': 'application/json' },
      requests: [
        {
          setupRequest: (req) => ({
            ...req,
            body: JSON.stringify({
              walletAddress: wallet(),
              mint: 'USDC',
              taxBps: 825,
              customerLabel: 'Bench',
              lineItems: [
                { description: 'Consulting', quantity: 3, unitAmount: '150' },
                { description: 'Hosting', quantity: 1, unitAmount: '9.99' },
                { description: 'Support', quantity: 2, unitAmount: '25' },
              ],
            }),
          }),
        },
      ],
    };
    const pids = servers.map((s) => s.child.pid!);
    const load = async (url: string): Promise<Load> => {
      const before = pids.map(treeCpuMicros);
      const r = await autocannon({
        url: `${url}/api/invoices`,
        connections: CONNECTIONS,
        duration: SECONDS,
        ...post,
      });
      const cpu = pids.reduce((sum, pid, i) => sum + treeCpuMicros(pid) - before[i], 0);
      return {
        rps: r.requests.average,
        p99: r.latency.p99,
        bad: r.non2xx + r.errors + r.timeouts,
        cpuUs: cpu / Math.max(1, r.requests.total),
      };
    };
    // Warm-up through both balancers.
    for (const lb of [one, two]) {
      await autocannon({
        url: `${lb.url}/api/invoices`,
        connections: CONNECTIONS,
        duration: 2,
        ...post,
      });
    }
    const runs: { one: Load[]; two: Load[] } = { one: [], two: [] };
    for (let round = 0; round < ROUNDS; round++) {
      // A-B-B-A: one, two, two, one, ...
      const order = round % 2 === 0 ? (['one', 'two'] as const) : (['two', 'one'] as const);
      for (const which of order) {
        const result = await load(which === 'one' ? one.url : two.url);
        runs[which].push(result);
        process.stderr.write(
          `  round ${round + 1}: ${which} instance(s) ${result.rps.toFixed(0)} req/s, p99 ${result.p99} ms\n`,
        );
      }
    }
    const rps = (which: 'one' | 'two') => median(runs[which].map((r) => r.rps));
    const ratio = rps('two') / rps('one');
    const line = (which: 'one' | 'two') =>
      `${which === 'one' ? 'one api instance ' : 'two api instances'}: ${rps(which).toFixed(0)} req/s ` +
      `(${runs[which].map((r) => r.rps.toFixed(0)).join(', ')}), ` +
      `${median(runs[which].map((r) => r.cpuUs)).toFixed(0)} service CPU us/req, ` +
      `p99 ${median(runs[which].map((r) => r.p99))} ms, non-2xx ${runs[which].reduce((n, r) => n + r.bad, 0)}`;
    process.stdout.write(
      [
        '',
        `POST /api/invoices through nginx (${CONNECTIONS} connections, ${SECONDS} s rounds, ${ROUNDS} rounds each)`,
        `  ${line('one')}`,
        `  ${line('two')}`,
        `  two / one: ${(ratio * 100).toFixed(1)}%`,
        '',
      ].join('\n'),
    );
    saveResults('topology', { runs, ratio });
  } finally {
    for (const lb of balancers) lb.stop();
    await stopServers(servers);
    await chain.stop();
    await db.stop();
  }
}

runBench(main);
