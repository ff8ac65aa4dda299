/**
 * Billing engine benchmark (`npm run bench:engine`). See bench/README.md.
 *
 * Nothing is pinned: PostgreSQL, the localnet chain (its own process), the service instances
 * and this process share the machine's cores, as they would on one small host.
 *
 * 1. Charge runs. `BENCH_SUBSCRIPTIONS` (10,000) due subscriptions are charged by one service
 *    instance, then another 10,000 by three instances on the same database: charges per second
 *    from the release (one `UPDATE` making them due) until every attempt has succeeded.
 *    Two anchors, same run, each once before and once after the service rounds (the ratios are
 *    against their medians), both sending the very same transfers (memo + `transferChecked`
 *    signed by the service key as each subscriber's delegate, to the same merchant accounts):
 *    - the chain's ceiling: the transfers pre-signed before the clock starts, sent straight to
 *      the RPC in JSON-RPC batches (`sendTransaction` items in one POST) and confirmed by
 *      `getSignatureStatuses` batches; no database, no client-side work per transfer. What
 *      the chain takes at most: a charge can be no faster;
 *    - a bare web3.js client (`sendAndConfirmTransaction`) with as many in flight as a service
 *      instance (`CHARGE_CONCURRENCY`): what a plain client pays per transfer.
 *    Afterwards the chain is checked: every merchant received exactly what the ledger says.
 * 2. Invoice watcher. 10 merchants with `BENCH_INVOICES` (10,000) open invoices between them;
 *    the service's RPC traffic goes through a counting proxy. Sweeps (`POST /api/dev/billing/run`
 *    on a `ROLE=api` instance, which runs nothing on its own): the first (cursors made), idle ones,
 *    one after 100 payments, one after they finalized: RPC calls and time each. Baseline, same
 *    run: a bare client scanning every open invoice's reference (`getSignaturesForAddress`),
 *    what a watcher that scanned per invoice would pay each sweep.
 *
 * `BENCH_ONLY=charges` or `BENCH_ONLY=watcher` runs one part. `BENCH_MANY` (3) is the number of
 * instances of the second configuration (`BENCH_MANY=2`: two workers against one).
 */
import {
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  createApproveCheckedInstruction,
} from '@solana/spl-token';
import {
  Connection,
  Keypair,
  PublicKey,
  sendAndConfirmTransaction,
  Transaction,
  TransactionInstruction,
  VersionedTransaction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { createPrivateKey, randomUUID, sign as cryptoSign } from 'node:crypto';
import { Client } from 'pg';
import { join } from 'node:path';
import { MINT_SYMBOLS, mintTable } from '../src/solana/mints';
import {
  BenchServer,
  cpuMicros,
  createMerchant,
  BENCH_DEV_KEY,
  freePort,
  median,
  rpc,
  runBench,
  saveResults,
  startDatabase,
  startLocalnet,
  startServer,
  stopServers,
  throughput,
  treeCpuMicros,
  wallet,
} from './harness';

const SUBSCRIPTIONS = Number(process.env.BENCH_SUBSCRIPTIONS ?? 10_000);
const INVOICES = Number(process.env.BENCH_INVOICES ?? 10_000);
const ONLY = process.env.BENCH_ONLY;
/**
 * BENCH_PG_STATEMENTS=1: pg_stat_statements on, and each service round prints its costliest
 * statements (`calls`: its most often run).
 */
const PG_STATEMENTS = ['1', 'calls'].includes(process.env.BENCH_PG_STATEMENTS ?? '');
const COUNT_RPC = process.env.BENCH_COUNT_RPC === '1';
/** BENCH_PG_SETTINGS='a=1 b=2': more PostgreSQL settings (e.g. auto_explain's, to read plans). */
const PG_SETTINGS = (process.env.BENCH_PG_SETTINGS ?? '').split(/\s+/).filter(Boolean);
/** As the service's default `CHARGE_CONCURRENCY`: charges in flight per instance. */
const IN_FLIGHT = 64;
const MERCHANTS = 4;
const PLANS_PER_MERCHANT = 5; // 20 plans: 10 charged by one instance, 10 by BENCH_MANY
/** Instances of the second configuration. */
const MANY = Number(process.env.BENCH_MANY ?? 3);
/**
 * Periods each subscription's share of its wallet's approval covers at least (the service's
 * default, 12); more when the rounds and their warm-ups charge more (`approvalPeriods`).
 */
const MIN_APPROVAL_PERIODS = 12;
const USDC = new PublicKey(mintTable('localnet')[0].address);
const MEMO_PROGRAM = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
const USDC_UNIT = 1_000_000n;
/** The ceiling anchor: transfers per JSON-RPC batch request, and batches in flight. */
const CEILING_BATCH = Number(process.env.BENCH_CEILING_BATCH ?? 100);
const CEILING_IN_FLIGHT = 4;
/** `getSignatureStatuses` takes at most this many signatures per call. */
const STATUS_BATCH = 256;
/** Anchor rounds that pull from every subscriber: the ceiling and the bare client, twice each. */
const ANCHOR_ROUNDS = 4n;
/**
 * Charges each instance makes before its measured round (`BENCH_WARM_UP_CHARGES`): periods of
 * the other half's plans, released a plan at a time and again from the first once all were.
 */
const WARM_UP_CHARGES = Number(process.env.BENCH_WARM_UP_CHARGES ?? 10_000);

/**
 * A share's periods for `wallets` subscribers a plan: the period charged before the bench, the
 * two measured rounds of its half, the warm-ups of both configurations that charge its half
 * (a period a pass over the half's plans), and three periods' room before the share's end (a
 * charge within them sends the customer a notice: not a charge's steady cost), plus one.
 */
function approvalPeriods(wallets: number): bigint {
  const half = (MERCHANTS * PLANS_PER_MERCHANT) / 2;
  const passes = (instances: number) =>
    Math.ceil(Math.ceil((WARM_UP_CHARGES * instances) / wallets) / half);
  return BigInt(Math.max(MIN_APPROVAL_PERIODS, 1 + 2 + passes(1) + passes(MANY) + 4));
}

interface Plan {
  id: string;
  merchantWallet: PublicKey;
  amount: bigint;
  round: 0 | 1;
}

const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(1)}%`;

/** Polls `probe` every `everyMs` until it returns true; throws `message()` after `ms`. */
async function until(
  probe: () => Promise<boolean>,
  ms: number,
  message: () => string | Promise<string>,
  everyMs = 100,
) {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(await message());
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

async function count(db: Client, sql: string, params: unknown[] = []): Promise<number> {
  return Number((await db.query<{ n: string }>(sql, params)).rows[0].n);
}

/** Per-table scan counters and the database's commits, to see what a charge costs PostgreSQL. */
async function tableStats(db: Client) {
  const tables = await db.query<{ relname: string; seq: string; seq_rows: string; idx: string }>(
    `SELECT relname, seq_scan::text AS seq, seq_tup_read::text AS seq_rows, coalesce(idx_scan, 0)::text AS idx
       FROM pg_stat_user_tables`,
  );
  const [database] = (
    await db.query<{ commits: string; rows: string }>(
      `SELECT xact_commit::text AS commits, (tup_returned + tup_fetched)::text AS rows
         FROM pg_stat_database WHERE datname = current_database()`,
    )
  ).rows;
  return {
    commits: Number(database.commits),
    tables: new Map(tables.rows.map((r) => [r.relname, r])),
  };
}

/** What changed in `tableStats` per charge: commits, and the tables read by sequential scans. */
function statsPerCharge(
  before: Awaited<ReturnType<typeof tableStats>>,
  after: Awaited<ReturnType<typeof tableStats>>,
  charges: number,
) {
  const seqRows: Record<string, number> = {};
  const indexScans: Record<string, number> = {};
  for (const [name, row] of after.tables) {
    const was = before.tables.get(name);
    const rows = (Number(row.seq_rows) - Number(was?.seq_rows ?? 0)) / charges;
    const idx = (Number(row.idx) - Number(was?.idx ?? 0)) / charges;
    if (rows >= 1) seqRows[name] = Math.round(rows);
    if (idx >= 0.05) indexScans[name] = Number(idx.toFixed(1));
  }
  return {
    commits: Number(((after.commits - before.commits) / charges).toFixed(1)),
    seqRows,
    indexScans,
  };
}

/** The statements that cost PostgreSQL most in the round, per charge (BENCH_PG_STATEMENTS=1). */
async function printStatements(db: Client, charges: number): Promise<void> {
  const { rows } = await db.query<{ query: string; calls: string; exec: number; plan: number }>(
    `SELECT regexp_replace(query, '\\s+', ' ', 'g') AS query, calls::text AS calls,
            total_exec_time AS exec, total_plan_time AS plan
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
      ORDER BY ${process.env.BENCH_PG_STATEMENTS === 'calls' ? 'pg_stat_statements.calls' : 'total_exec_time + total_plan_time'} DESC LIMIT 15`,
  );
  for (const row of rows) {
    process.stdout.write(
      `  ${(Number(row.calls) / charges).toFixed(2).padStart(6)} calls/charge ${((1000 * (row.exec + row.plan)) / charges).toFixed(0).padStart(5)} µs/charge${row.plan > 0 ? ` (planning ${((1000 * row.plan) / charges).toFixed(0)})` : ''}  ${row.query.slice(0, 110)}\n`,
    );
  }
}

async function merchantWallet(db: Client, merchantId: string): Promise<string> {
  return (
    await db.query<{ w: string }>('SELECT wallet_address AS w FROM merchants WHERE id = $1', [
      merchantId,
    ])
  ).rows[0].w;
}

/** CPU time (µs) of the processes in play, read before and after a round. */
interface Cpu {
  service: number;
  /** Of `service`: V8's helper threads (its optimising compiler, parallel and concurrent GC). */
  serviceHelpers: number;
  postgres: number;
  chain: number;
  client: number;
}

/**
 * CPU of the service processes, PostgreSQL, the chain and the bench. PostgreSQL is the
 * postmaster and its backends but the bench's own (`benchBackend`: its polls of the attempts,
 * which scan them, and its table statistics), which counts with the bench client: the bench's
 * measuring is not what a charge costs.
 */
function cpuMeter(pids: { postgres?: number; chain: number; benchBackend?: number }) {
  const read = (services: number[]): Cpu => {
    const usage = process.cpuUsage();
    const benchBackend = pids.benchBackend ? cpuMicros(pids.benchBackend) : 0;
    const service = services.reduce((sum, pid) => sum + cpuMicros(pid), 0);
    return {
      service,
      serviceHelpers: service - services.reduce((sum, pid) => sum + cpuMicros(pid, pid), 0),
      postgres: pids.postgres ? treeCpuMicros(pids.postgres) - benchBackend : 0,
      chain: cpuMicros(pids.chain),
      client: usage.user + usage.system + benchBackend,
    };
  };
  return {
    /** Starts measuring; the returned function gives CPU ms per item since then. */
    start(services: number[] = []) {
      const before = read(services);
      return (items: number): Cpu => {
        const after = read(services);
        const per = (k: keyof Cpu) => (after[k] - before[k]) / 1000 / items;
        return {
          service: per('service'),
          serviceHelpers: per('serviceHelpers'),
          postgres: per('postgres'),
          chain: per('chain'),
          client: per('client'),
        };
      };
    },
  };
}

const cpuLine = (cpu: Cpu) =>
  `CPU ms per charge: service ${cpu.service.toFixed(2)}${cpu.service > 0 ? ` (V8's helper threads ${cpu.serviceHelpers.toFixed(2)})` : ''}, PostgreSQL ${cpu.postgres.toFixed(2)}, chain ${cpu.chain.toFixed(2)}, bench client ${cpu.client.toFixed(2)}`;

runBench(async () => {
  const database = await startDatabase({
    settings: [
      ...(PG_STATEMENTS ? ['shared_preload_libraries=pg_stat_statements'] : []),
      ...PG_SETTINGS,
    ],
  });
  const localnet = await startLocalnet();
  const db = new Client({ connectionString: database.url });
  await db.connect();
  if (PG_STATEMENTS) await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const connection = new Connection(localnet.url, 'confirmed');
  const serviceKey = Keypair.generate();
  const serviceEnv = {
    SOLANA_RPC_URL: localnet.url,
    SERVICE_KEYPAIR: JSON.stringify([...serviceKey.secretKey]),
    DEMO_MERCHANT: 'false',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    WATCH_INTERVAL_MS: '3600000',
  };
  const results: Record<string, unknown> = {};
  try {
    await rpc(localnet.url, 'localnet_faucet', [
      { walletAddress: serviceKey.publicKey.toBase58(), lamports: '1000000000000' },
    ]);
    if (ONLY !== 'watcher') {
      const [{ pid: benchBackend }] = (
        await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
      ).rows;
      const meter = cpuMeter({
        postgres: database.postmasterPid,
        chain: localnet.pid,
        benchBackend: database.postmasterPid ? benchBackend : undefined,
      });
      results.charges = await chargeRuns(
        db,
        database.url,
        localnet.url,
        connection,
        serviceKey,
        {
          ...serviceEnv,
        },
        meter,
      );
    }
    if (ONLY !== 'charges') {
      // A database of its own: the charge runs' ledger lines are not the watcher's to finalize.
      const watcherUrl = ONLY === 'watcher' ? database.url : await database.another();
      const watcherDb = new Client({ connectionString: watcherUrl });
      await watcherDb.connect();
      try {
        results.watcher = await watcherSweeps(
          watcherDb,
          watcherUrl,
          localnet.url,
          connection,
          serviceEnv,
        );
      } finally {
        await watcherDb.end();
      }
    }
    saveResults('engine', results);
  } finally {
    await db.end();
    await localnet.stop();
    await database.stop();
  }
});

async function chargeRuns(
  db: Client,
  databaseUrl: string,
  chainUrl: string,
  connection: Connection,
  serviceKey: Keypair,
  serviceEnv: NodeJS.ProcessEnv,
  meter: ReturnType<typeof cpuMeter>,
) {
  const wallets = Math.ceil(SUBSCRIPTIONS / ((MERCHANTS * PLANS_PER_MERCHANT) / 2));
  process.stdout.write(
    `\nSeeding: ${MERCHANTS} merchants, ${MERCHANTS * PLANS_PER_MERCHANT} plans, ${wallets} subscriber wallets, ${2 * wallets * ((MERCHANTS * PLANS_PER_MERCHANT) / 2)} subscriptions...\n`,
  );

  // Merchants (the CLI) and their USDC accounts; plans 1..20 USDC, every other one per round.
  const plans: Plan[] = [];
  const merchantAccounts: PublicKey[] = [];
  for (let m = 0; m < MERCHANTS; m++) {
    const { merchant } = createMerchant(databaseUrl);
    const owner = new PublicKey(await merchantWallet(db, merchant.id));
    merchantAccounts.push(getAssociatedTokenAddressSync(USDC, owner, true));
    await rpc(chainUrl, 'localnet_faucet', [
      {
        walletAddress: owner.toBase58(),
        lamports: '1000000000',
        mint: USDC.toBase58(),
        amount: '1',
      },
    ]);
    for (let p = 0; p < PLANS_PER_MERCHANT; p++) {
      const amount = BigInt(plans.length + 1) * USDC_UNIT;
      const { rows } = await db.query<{ id: string }>(
        `INSERT INTO plans (id, merchant_id, label, mint, amount, interval_seconds, active,
           onchain_plan_id, created_at, updated_at)
         VALUES (gen_random_uuid(), $1, $2, 'USDC', $3, 2592000, true, $4, now(), now())
         RETURNING id`,
        [merchant.id, `Plan ${plans.length + 1}`, amount.toString(), String(plans.length + 1)],
      );
      plans.push({
        id: rows[0].id,
        merchantWallet: owner,
        amount,
        round: (plans.length % 2) as 0 | 1,
      });
    }
  }
  const merchantIds = (
    await db.query<{ id: string; merchant_id: string }>('SELECT id, merchant_id FROM plans')
  ).rows;
  const planMerchant = new Map(merchantIds.map((r) => [r.id, r.merchant_id]));

  // Subscriber wallets: funded, approving the service key for their 20 shares plus the anchor
  // rounds' transfers (the anchors pull from the same accounts, to the same merchants).
  const perRound = (round: 0 | 1) => plans.filter((p) => p.round === round);
  const approval = approvalPeriods(wallets);
  const shares = plans.reduce((sum, p) => sum + p.amount * approval, 0n);
  const anchorTotal = ANCHOR_ROUNDS * perRound(0).reduce((sum, p) => sum + p.amount, 0n);
  const subscribers: { wallet: Keypair; ata: PublicKey }[] = [];
  await throughput(wallets, 16, async () => {
    const owner = Keypair.generate();
    const ata = getAssociatedTokenAddressSync(USDC, owner.publicKey);
    await rpc(chainUrl, 'localnet_faucet', [
      {
        walletAddress: owner.publicKey.toBase58(),
        lamports: '100000000',
        mint: USDC.toBase58(),
        amount: (shares + anchorTotal).toString(),
      },
    ]);
    const approve = new Transaction().add(
      createApproveCheckedInstruction(
        ata,
        USDC,
        serviceKey.publicKey,
        owner.publicKey,
        shares + anchorTotal,
        6,
      ),
    );
    await sendAndConfirmTransaction(connection, approve, [owner], { commitment: 'confirmed' });
    subscribers.push({ wallet: owner, ata });
  });

  // Customers and subscriptions straight to the tables: subscribed a month ago and charged once
  // then (so the runs are renewals, as a run's charges are), next due a day ahead until released.
  const owners = subscribers.map((s) => s.wallet.publicKey.toBase58());
  const atas = subscribers.map((s) => s.ata.toBase58());
  await db.query('BEGIN');
  for (const merchantId of new Set(planMerchant.values())) {
    await db.query(
      `INSERT INTO customers (id, merchant_id, wallet_address, created_at, updated_at)
       SELECT gen_random_uuid(), $1, w, now(), now() FROM unnest($2::text[]) AS t(w)`,
      [merchantId, owners],
    );
  }
  for (const plan of plans) {
    await db.query(
      `INSERT INTO subscriptions (id, merchant_id, plan_id, customer_id, status, current_period_end,
         onchain_address, authorized_amount, charged_amount, periods_charged, last_charge_at,
         created_at, updated_at, scheme)
       SELECT gen_random_uuid(), c.merchant_id, $1, c.id, 'Active', now() + interval '1 day',
              t.ata, $3, $6, 1, now() - interval '30 days',
              now() - interval '30 days' - make_interval(secs => t.i), now() - interval '30 days',
              'token-delegate'
         FROM unnest($4::text[], $5::text[]) WITH ORDINALITY AS t(w, ata, i)
         JOIN customers c ON c.merchant_id = $2 AND c.wallet_address = t.w`,
      [
        plan.id,
        planMerchant.get(plan.id),
        (plan.amount * approval).toString(),
        owners,
        atas,
        plan.amount.toString(),
      ],
    );
  }
  await db.query('COMMIT');
  await db.query('VACUUM ANALYZE customers, plans, subscriptions');

  const balances = async () =>
    Promise.all(
      merchantAccounts.map(async (a) =>
        BigInt((await connection.getTokenAccountBalance(a)).value.amount),
      ),
    );
  const sumOf = (values: bigint[]) => values.reduce((a, b) => a + b, 0n);

  // The anchors: the same transfers, the service key signing as delegate.
  const transfers = perRound(0).flatMap((plan) =>
    subscribers.map((s) => ({ source: s.ata, plan })),
  );
  const transfer = (i: number) => {
    const { source, plan } = transfers[i];
    return new Transaction().add(
      new TransactionInstruction({
        programId: MEMO_PROGRAM,
        keys: [],
        data: Buffer.from(`charge:v1:${plan.id}:${randomUUID()}`),
      }),
      createTransferCheckedInstruction(
        source,
        USDC,
        getAssociatedTokenAddressSync(USDC, plan.merchantWallet, true),
        serviceKey.publicKey,
        plan.amount,
        6,
      ),
    );
  };
  const bareRound = async () => {
    const cpu = meter.start();
    const rate = await throughput(transfers.length, IN_FLIGHT, async (_, i) => {
      await sendAndConfirmTransaction(connection, transfer(i), [serviceKey], {
        commitment: 'confirmed',
      });
    });
    return { rate, cpu: cpu(transfers.length) };
  };
  const ceilingRound = () => chainCeiling(chainUrl, serviceKey, transfers.length, transfer, meter);

  const succeeded = () =>
    count(db, `SELECT count(*) AS n FROM charge_attempts WHERE state = 'succeeded'`);
  // What is left of a release: its subscriptions still due, and the attempts open. Polled
  // instead of `succeeded`, which reads every attempt (10-47 ms a poll as the table grows to
  // 80 000 rows over a run: CPU taken from the processes measured, on two cores); this is a
  // range of the due index and the partial index of open attempts. (`released` is the
  // release's `now()` cut to the millisecond, and the due time column keeps milliseconds,
  // rounded: hence the millisecond more.)
  const unsettled = (released: Date) =>
    count(
      db,
      `SELECT (SELECT count(*) FROM subscriptions
                WHERE status = 'Active' AND scheme IN ('token-delegate', 'program')
                  AND current_period_end <= $1::timestamptz + interval '1 millisecond')
            + (SELECT count(*) FROM charge_attempts WHERE state IN ('pending', 'sent')) AS n`,
      [released],
    );
  // What the service rounds (warm-ups included) were given to charge: one period of each
  // released plan's subscriptions.
  let releasedTotal = 0n;
  const release = async (released: typeof plans) => {
    releasedTotal += BigInt(subscribers.length) * sumOf(released.map((p) => p.amount));
    return (
      await db.query<{ at: Date }>(
        `UPDATE subscriptions SET current_period_end = now() WHERE plan_id = ANY($1::uuid[])
         RETURNING now() AS at`,
        [released.map((p) => p.id)],
      )
    ).rows[0].at;
  };
  const serviceRound = async (instances: number, round: 0 | 1) => {
    // BENCH_COUNT_RPC=1: the instances' RPC goes through the counting proxy (which costs this
    // process CPU, so the rates of such a run are not the figures).
    const proxy = COUNT_RPC ? await countingProxy(chainUrl) : undefined;
    const servers: BenchServer[] = [];
    for (let i = 0; i < instances; i++) {
      servers.push(
        await startServer(databaseUrl, {
          env: {
            ...serviceEnv,
            ...(proxy ? { SOLANA_RPC_URL: proxy.url } : {}),
            ROLE: 'worker',
            CHARGE_RUN_INTERVAL_MS: '1000',
          },
          // BENCH_PROFILE_DIR: each instance writes a V8 CPU profile there when it stops.
          // BENCH_NODE_ARGS: more node options for the instances (e.g. V8 tracing), with
          // BENCH_STDOUT_DIR for what they print.
          nodeArgs: [
            ...(process.env.BENCH_PROFILE_DIR
              ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`]
              : []),
            ...(process.env.BENCH_NODE_ARGS?.split(/\s+/).filter(Boolean) ?? []),
          ],
          stdoutFile: process.env.BENCH_STDOUT_DIR
            ? join(process.env.BENCH_STDOUT_DIR, `instance-${Date.now()}-${i}.log`)
            : undefined,
        }),
      );
    }
    // Warm-up, not measured: `WARM_UP_CHARGES` charges for each instance, so each is measured as
    // a long-running one is, not paying its first seconds inside the window: its code optimised
    // by V8, its mints, plan simulations, connections and its subscribers' token accounts. V8
    // optimises a service this size function by function as each gets hot, for tens of seconds
    // under load (`--trace-opt`: hundreds of first optimisations, no re-optimisation loop).
    // Two plans' worth (a fifth of a round) left its optimising compiler busy well into the
    // measured round: the instance's CPU a charge was 0.90 ms after 1 200 charges of warm-up
    // and 0.60-0.65 after 6 000 (6 000 a round); 0.66-0.81 after 3 000 and 0.59-0.63 after
    // 10 000 (10 000 a round), its helper threads' part ~0.3, 0.11-0.13 and 0.08
    // (docs/performance.md). Per instance: three instances warm up three times as many charges
    // between them as one does.
    const others = perRound(round === 0 ? 1 : 0);
    let left = Math.ceil((WARM_UP_CHARGES * instances) / subscribers.length);
    while (left > 0) {
      const warmUp = others.slice(0, Math.min(left, others.length));
      left -= warmUp.length;
      const at = await release(warmUp);
      await until(
        async () => (await unsettled(at)) === 0,
        300_000,
        () => 'the warm-up charges did not all settle',
        500,
      );
    }
    const before = await succeeded();
    proxy?.take();
    const cpu = meter.start(servers.map((s) => s.child.pid!));
    const statsBefore = await tableStats(db);
    if (PG_STATEMENTS) await db.query('SELECT pg_stat_statements_reset()');
    const started = performance.now();
    const released = await release(perRound(round));
    let last = Number.MAX_SAFE_INTEGER;
    let lastProgress = Date.now();
    await until(
      async () => {
        const now = await unsettled(released);
        if (now < last) [last, lastProgress] = [now, Date.now()];
        return now === 0 || Date.now() - lastProgress > 60_000;
      },
      Number.MAX_SAFE_INTEGER,
      () => '',
      500,
    );
    const charged = (await succeeded()) - before;
    // From the release to the last charge settled (the attempts' own times, so the polling
    // interval does not count).
    const [{ settled }] = (
      await db.query<{ settled: Date }>(
        `SELECT max(updated_at) AS settled FROM charge_attempts WHERE state = 'succeeded'`,
      )
    ).rows;
    const seconds =
      charged >= SUBSCRIPTIONS
        ? (settled.getTime() - released.getTime()) / 1000
        : (performance.now() - started) / 1000;
    const perCharge = cpu(Math.max(charged, 1));
    const database = statsPerCharge(statsBefore, await tableStats(db), Math.max(charged, 1));
    if (PG_STATEMENTS) await printStatements(db, Math.max(charged, 1));
    if (proxy) {
      const calls = Object.entries(proxy.take()).map(
        ([method, n]) => `${method} ${(n / Math.max(charged, 1)).toFixed(2)}`,
      );
      process.stdout.write(`  RPC calls per charge: ${calls.join(', ')}\n`);
    }
    await stopServers(servers);
    await proxy?.close();
    if (charged < SUBSCRIPTIONS) {
      const states = await db.query(
        'SELECT state, failure_reason, count(*) FROM charge_attempts GROUP BY 1, 2',
      );
      throw new Error(`only ${charged} charged; attempts: ${JSON.stringify(states.rows)}`);
    }
    return { instances, charged, seconds, rate: charged / seconds, cpu: perCharge, database };
  };

  const start = await balances();
  process.stdout.write('Chain ceiling round 1...\n');
  const ceiling1 = await ceilingRound();
  process.stdout.write('Bare client round 1...\n');
  const bare1 = await bareRound();
  // A-B-B-A: one instance, three, three, one, each plan half charged once by each configuration
  // (a half released again is its next period), so a drift of the machine over the run (another
  // process, the chain's growing state) weighs on both configurations alike.
  process.stdout.write('One instance...\n');
  const one1 = await serviceRound(1, 0);
  process.stdout.write(`${MANY} instances...\n`);
  const three1 = await serviceRound(MANY, 1);
  process.stdout.write(`${MANY} instances, again...\n`);
  const three2 = await serviceRound(MANY, 0);
  process.stdout.write('One instance, again...\n');
  const one2 = await serviceRound(1, 1);
  process.stdout.write('Bare client round 2...\n');
  const bare2 = await bareRound();
  process.stdout.write('Chain ceiling round 2...\n');
  const ceiling2 = await ceilingRound();
  const bare = median([bare1.rate, bare2.rate]);
  const ceiling = median([ceiling1.rate, ceiling2.rate]);
  const one = { ...one1, rate: median([one1.rate, one2.rate]) };
  const three = { ...three1, rate: median([three1.rate, three2.rate]) };

  // Exactly once, on the chain: the merchants received the four anchor rounds plus one period of
  // every subscription per release (two per subscription, and the warm-ups'), and the ledger
  // says the same.
  const received = sumOf(await balances()) - sumOf(start);
  const expected = anchorTotal * BigInt(subscribers.length) + releasedTotal;
  const ledger = BigInt(
    (
      await db.query<{ s: string }>(
        `SELECT coalesce(sum(amount), 0)::text AS s FROM payments WHERE kind = 'subscription' AND status <> 'failed'`,
      )
    ).rows[0].s,
  );
  const attempts = (
    await db.query<{ state: string; n: string }>(
      'SELECT state, count(*) AS n FROM charge_attempts GROUP BY state ORDER BY state',
    )
  ).rows;
  const exact =
    received === expected && ledger === expected - anchorTotal * BigInt(subscribers.length);

  const ok = (good: boolean) => (good ? 'yes' : 'NO');
  process.stdout.write(
    [
      '',
      `Charge runs: ${SUBSCRIPTIONS} due subscriptions per round on localnet (${subscribers.length} wallets, shared approvals)`,
      '',
      `chain ceiling, same transfers pre-signed, JSON-RPC batches of ${CEILING_BATCH}, ${CEILING_IN_FLIGHT} in flight: ${ceiling1.rate.toFixed(0)} and ${ceiling2.rate.toFixed(0)} tx/s (median ${ceiling.toFixed(0)})`,
      `  ${cpuLine(ceiling1.cpu)}`,
      `bare web3.js client, same transfers, ${IN_FLIGHT} in flight: ${bare1.rate.toFixed(0)} and ${bare2.rate.toFixed(0)} tx/s (median ${bare.toFixed(0)}; ${pct(bare, ceiling)} of the ceiling)`,
      `  ${cpuLine(bare1.cpu)}`,
      `service, 1 instance:   ${one.rate.toFixed(0)} charges/s (rounds ${one1.rate.toFixed(0)} and ${one2.rate.toFixed(0)}; ${pct(one.rate, ceiling)} of the ceiling, ${pct(one.rate, bare)} of bare; target >= 60% of bare: ${ok(one.rate / bare >= 0.6)})`,
      `  ${cpuLine(one.cpu)}`,
      `  service + PostgreSQL CPU per charge: ${(one.cpu.service + one.cpu.postgres).toFixed(2)} ms (target < 1.5: ${ok(one.cpu.service + one.cpu.postgres < 1.5)})`,
      `  PostgreSQL per charge: ${one.database.commits} commits; index scans ${JSON.stringify(one.database.indexScans)}; rows read by sequential scans ${JSON.stringify(one.database.seqRows)}`,
      `service, ${MANY} instances:  ${three.rate.toFixed(0)} charges/s (rounds ${three1.rate.toFixed(0)} and ${three2.rate.toFixed(0)}; ${pct(three.rate, ceiling)} of the ceiling, ${pct(three.rate, one.rate)} of 1 instance; target >= 100% of 1: ${ok(three.rate >= one.rate)})`,
      `  ${cpuLine(three.cpu)}`,
      `  PostgreSQL per charge: ${three.database.commits} commits; index scans ${JSON.stringify(three.database.indexScans)}`,
      `attempts: ${attempts.map((a) => `${a.n} ${a.state}`).join(', ')}; merchants received ${received} base units, expected ${expected}; ledger ${ledger}: exactly once ${ok(exact)}`,
      '',
    ].join('\n'),
  );
  if (!exact) throw new Error('the chain or the ledger disagrees with one charge per period');
  return {
    subscriptions: SUBSCRIPTIONS,
    inFlight: IN_FLIGHT,
    ceiling: [ceiling1, ceiling2],
    bare: [bare1, bare2],
    one: [one1, one2],
    three: [three1, three2],
    attempts,
  };
}

/** One JSON-RPC batch request (one POST): the answers in the calls' order; throws on any error. */
async function rpcBatch<T>(url: string, calls: { method: string; params: unknown[] }[]) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(calls.map((c, id) => ({ jsonrpc: '2.0', id, ...c }))),
  });
  const answers = (await res.json()) as { id: number; result?: T; error?: unknown }[];
  const results: T[] = [];
  for (const answer of answers) {
    if (answer.error)
      throw new Error(`${calls[answer.id].method}: ${JSON.stringify(answer.error)}`);
    results[answer.id] = answer.result as T;
  }
  return results;
}

/**
 * The chain's ceiling for these transfers: each built by `transfer(i)` and signed by the service
 * key (node:crypto's Ed25519) over one recent blockhash before the clock starts; then sent straight
 * to the RPC in JSON-RPC batches of `CEILING_BATCH` (`sendTransaction`, no preflight retries),
 * `CEILING_IN_FLIGHT` batches at a time, each batch's signatures polled with
 * `getSignatureStatuses` until every one is confirmed. No database and no per-transfer work in
 * the client while timed: what the chain (RPC server included) takes, at most.
 */
async function chainCeiling(
  chainUrl: string,
  serviceKey: Keypair,
  count: number,
  transfer: (i: number) => Transaction,
  meter: ReturnType<typeof cpuMeter>,
) {
  const key = createPrivateKey({
    key: Buffer.concat([
      Buffer.from('302e020100300506032b657004220420', 'hex'), // PKCS #8 of an Ed25519 seed
      serviceKey.secretKey.subarray(0, 32),
    ]),
    format: 'der',
    type: 'pkcs8',
  });
  const [{ value: latest }] = await rpcBatch<{ value: { blockhash: string } }>(chainUrl, [
    { method: 'getLatestBlockhash', params: [{ commitment: 'confirmed' }] },
  ]);
  const signed = Array.from({ length: count }, (_, i) => {
    const tx = transfer(i);
    tx.feePayer = serviceKey.publicKey;
    tx.recentBlockhash = latest.blockhash;
    const message = tx.compileMessage();
    const signature = cryptoSign(null, message.serialize(), key);
    return {
      signature: bs58.encode(signature),
      wire: Buffer.from(new VersionedTransaction(message, [signature]).serialize()).toString(
        'base64',
      ),
    };
  });
  const batches: (typeof signed)[] = [];
  for (let i = 0; i < signed.length; i += CEILING_BATCH) {
    batches.push(signed.slice(i, i + CEILING_BATCH));
  }
  const options = { encoding: 'base64', skipPreflight: false, maxRetries: 0 };
  const cpu = meter.start();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CEILING_IN_FLIGHT }, async () => {
      while (next < batches.length) {
        const batch = batches[next++];
        await rpcBatch<string>(
          chainUrl,
          batch.map((t) => ({ method: 'sendTransaction', params: [t.wire, options] })),
        );
        let waiting = batch.map((t) => t.signature);
        for (let polls = 0; waiting.length > 0; polls++) {
          if (polls > 0) await new Promise((resolve) => setTimeout(resolve, 20));
          if (polls > 3_000) throw new Error(`ceiling: ${waiting.length} never confirmed`);
          const pending: string[] = [];
          for (let i = 0; i < waiting.length; i += STATUS_BATCH) {
            const chunk = waiting.slice(i, i + STATUS_BATCH);
            const [{ value }] = await rpcBatch<{
              value: ({ err: unknown; confirmationStatus: string } | null)[];
            }>(chainUrl, [{ method: 'getSignatureStatuses', params: [chunk] }]);
            value.forEach((status, j) => {
              if (status?.err) throw new Error(`ceiling: ${chunk[j]} failed`);
              if (
                status?.confirmationStatus !== 'confirmed' &&
                status?.confirmationStatus !== 'finalized'
              ) {
                pending.push(chunk[j]);
              }
            });
          }
          waiting = pending;
        }
      }
    }),
  );
  const rate = count / ((performance.now() - started) / 1000);
  return { rate, cpu: cpu(count) };
}

/** The counting proxy's key for the HTTP requests it saw (each may carry a batch of calls). */
const HTTP_REQUESTS = '(HTTP requests)';

/** A JSON-RPC proxy in front of the chain that counts the calls made through it, by method. */
async function countingProxy(target: string) {
  const counts = new Map<string, number>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      counts.set(HTTP_REQUESTS, (counts.get(HTTP_REQUESTS) ?? 0) + 1);
      try {
        const parsed = JSON.parse(body.toString()) as { method: string } | { method: string }[];
        for (const call of Array.isArray(parsed) ? parsed : [parsed]) {
          counts.set(call.method, (counts.get(call.method) ?? 0) + 1);
        }
      } catch {
        counts.set('(unparsed)', (counts.get('(unparsed)') ?? 0) + 1);
      }
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (req.headers.authorization) headers.authorization = req.headers.authorization;
      fetch(target, { method: 'POST', headers, body })
        .then(async (answer) => {
          res.writeHead(answer.status, { 'content-type': 'application/json' });
          res.end(Buffer.from(await answer.arrayBuffer()));
        })
        .catch(() => {
          res.writeHead(502);
          res.end();
        });
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    take: () => {
      const snapshot = Object.fromEntries(counts);
      counts.clear();
      return snapshot;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function watcherSweeps(
  db: Client,
  databaseUrl: string,
  chainUrl: string,
  connection: Connection,
  serviceEnv: NodeJS.ProcessEnv,
) {
  const WATCHED_MERCHANTS = 10;
  const PAYMENTS = 100;
  process.stdout.write(`\nSeeding: ${WATCHED_MERCHANTS} merchants, ${INVOICES} open invoices...\n`);
  const merchants: { id: string; apiKey: string }[] = [];
  for (let m = 0; m < WATCHED_MERCHANTS; m++) {
    const { merchant, apiKey } = createMerchant(databaseUrl);
    merchants.push({ id: merchant.id, apiKey });
    // Its receiving account exists (what its first registration does), before any cursor.
    await rpc(chainUrl, 'localnet_faucet', [
      {
        walletAddress: await merchantWallet(db, merchant.id),
        lamports: '1000000000',
        mint: USDC.toBase58(),
        amount: '1',
      },
    ]);
  }
  const perMerchant = Math.ceil(INVOICES / WATCHED_MERCHANTS);
  const invoices: { id: string; reference: string }[] = [];
  for (const merchant of merchants) {
    const refs = Array.from({ length: perMerchant }, () => wallet());
    await db.query(
      `INSERT INTO customers (id, merchant_id, wallet_address, created_at, updated_at)
       VALUES (gen_random_uuid(), $1, $2, now(), now())`,
      [merchant.id, wallet()],
    );
    const { rows } = await db.query<{ id: string; onchain_id: string }>(
      `INSERT INTO invoices (id, merchant_id, customer_id, number, status, onchain_id, mint,
         line_items, line_items_json, subtotal, tax_bps, tax, total, amount_paid, due_date,
         created_at, updated_at)
       SELECT gen_random_uuid(), c.merchant_id, c.id, r.i, 'Open', r.ref, 'USDC',
              '[{"description":"Hosting","quantity":1,"unitAmount":"1000000"}]'::jsonb,
              '[{"description":"Hosting","quantity":1,"unitAmount":"1","amount":"1"}]',
              1000000, 0, 0, 1000000, 0, NULL, now(), now()
         FROM unnest($2::text[]) WITH ORDINALITY AS r(ref, i)
         JOIN customers c ON c.merchant_id = $1
       RETURNING id, onchain_id`,
      [merchant.id, refs],
    );
    await db.query(
      `INSERT INTO invoice_numbers (merchant_id, last) VALUES ($1, $2)
       ON CONFLICT (merchant_id) DO UPDATE SET last = EXCLUDED.last`,
      [merchant.id, perMerchant],
    );
    invoices.push(...rows.map((r) => ({ id: r.id, reference: r.onchain_id })));
  }
  await db.query('VACUUM ANALYZE customers, invoices');
  const open = await count(db, `SELECT count(*) AS n FROM invoices WHERE status = 'Open'`);

  const proxy = await countingProxy(chainUrl);
  const server = await startServer(databaseUrl, {
    env: { ...serviceEnv, SOLANA_RPC_URL: proxy.url, ROLE: 'api' },
  });
  try {
    const sweep = async () => {
      proxy.take();
      const started = performance.now();
      const res = await fetch(`${server.base}/api/dev/billing/run`, {
        method: 'POST',
        headers: { authorization: `Bearer ${BENCH_DEV_KEY}` },
      });
      const ms = performance.now() - started;
      if (!res.ok) throw new Error(`billing run: ${res.status} ${await res.text()}`);
      const body = (await res.json()) as { invoices: Record<string, number> };
      const calls = proxy.take();
      return {
        ms,
        // The JSON-RPC calls, not the HTTP requests that carried them (counted apart).
        calls: Object.entries(calls)
          .filter(([key]) => key !== HTTP_REQUESTS)
          .reduce((sum, [, n]) => sum + n, 0),
        byMethod: calls,
        result: body.invoices,
      };
    };

    const first = await sweep();
    const idleSweeps = [];
    for (let i = 0; i < 5; i++) idleSweeps.push(await sweep());
    const idle = {
      ms: median(idleSweeps.map((s) => s.ms)),
      calls: median(idleSweeps.map((s) => s.calls)),
      byMethod: idleSweeps[idleSweeps.length - 1].byMethod,
    };

    // 100 invoices paid through the checkout's transaction request, signed by 10 payers.
    const payers = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const payer = Keypair.generate();
        await rpc(chainUrl, 'localnet_faucet', [
          {
            walletAddress: payer.publicKey.toBase58(),
            lamports: '1000000000',
            mint: USDC.toBase58(),
            amount: '1000000000',
          },
        ]);
        return payer;
      }),
    );
    const paid = invoices
      .filter((_, i) => i % Math.floor(invoices.length / PAYMENTS) === 0)
      .slice(0, PAYMENTS);
    await throughput(paid.length, payers.length, async (worker, i) => {
      const payer = payers[worker];
      const res = await fetch(`${server.base}/api/checkout/invoices/${paid[i].id}/transaction`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ account: payer.publicKey.toBase58() }),
      });
      if (!res.ok) throw new Error(`transaction request: ${res.status} ${await res.text()}`);
      const tx = Transaction.from(
        Buffer.from(((await res.json()) as { transaction: string }).transaction, 'base64'),
      );
      tx.partialSign(payer);
      const signature = await connection.sendRawTransaction(tx.serialize());
      const latest = await connection.getLatestBlockhash('confirmed');
      await connection.confirmTransaction({ signature, ...latest }, 'confirmed');
    });
    const withPayments = await sweep();

    // Finality: wait until the chain calls every one of those payments finalized, then one sweep.
    const signatures = (
      await db.query<{ signature: string }>(`SELECT signature FROM payments WHERE kind = 'invoice'`)
    ).rows.map((r) => r.signature);
    await until(
      async () => {
        const { value } = await connection.getSignatureStatuses(signatures);
        return value.every((status) => status?.confirmationStatus === 'finalized');
      },
      120_000,
      () => 'payments never finalized',
    );
    const finality = await sweep();
    const paidCount = await count(db, `SELECT count(*) AS n FROM invoices WHERE status = 'Paid'`);

    // Baseline: what one sweep would cost a watcher that scanned every open invoice's reference.
    proxy.take();
    const bareStarted = performance.now();
    await throughput(invoices.length, 16, async (_, i) => {
      await connection.getSignaturesForAddress(new PublicKey(invoices[i].reference), { limit: 10 });
    });
    const perInvoice = { ms: performance.now() - bareStarted, calls: invoices.length };

    const line = (name: string, s: { ms: number; calls: number }, extra = '') =>
      `${name.padEnd(34)} ${String(s.calls).padStart(6)} RPC calls  ${s.ms.toFixed(0).padStart(7)} ms${extra}`;
    process.stdout.write(
      [
        '',
        `Invoice watcher: ${open} open invoices of ${WATCHED_MERCHANTS} merchants (one sweep = POST /api/dev/billing/run)`,
        '',
        line('first sweep (cursors made)', first),
        line('idle sweep (median of 5)', idle, `  ${JSON.stringify(idle.byMethod)}`),
        line(
          `sweep after ${PAYMENTS} payments`,
          withPayments,
          `  recorded ${withPayments.result.paymentsRecorded}`,
        ),
        line(
          'sweep after they finalized',
          finality,
          `  finalized ${finality.result.paymentsFinalized}, invoices paid ${finality.result.invoicesPaid}`,
        ),
        line('baseline: per-invoice reference scan', perInvoice),
        '',
        `idle sweep: ${idle.calls} RPC calls for ${open} open invoices (target: one per merchant receiving account, ${MINT_SYMBOLS.length} mints x ${WATCHED_MERCHANTS} merchants, not ${open}: ${idle.calls <= MINT_SYMBOLS.length * WATCHED_MERCHANTS + 2 ? 'yes' : 'NO'}); ${pct(idle.ms, perInvoice.ms)} of the per-invoice scan's time`,
        `invoices Paid: ${paidCount} of ${PAYMENTS}`,
        '',
      ].join('\n'),
    );
    return { open, first, idle, withPayments, finality, perInvoice, paid: paidCount };
  } finally {
    await stopServers([server]);
    await proxy.close();
  }
}
