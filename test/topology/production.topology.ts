import { Connection, Keypair, PublicKey, Transaction } from '@solana/web3.js';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Pool } from 'pg';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { MIGRATION_LOCK } from '../../src/database/migrate';
import { MIGRATIONS } from '../../src/database/migrations';
import { MIGRATIONS_TABLE } from '../../src/database/mikro-orm.options';
import { mintTable } from '../../src/solana/mints';
import { verifyWebhookSignature } from '../../src/webhooks/signature';
import { ensureBuilt } from '../helpers/dist';
import { freePortPair, TEST_DEV_KEY } from '../helpers/test-chain';
import { parsePrometheus, sample } from '../helpers/prometheus';
import { waitFor, WebhookReceiver } from '../helpers/webhook-receiver';
import {
  DebianPostgres,
  Nginx,
  NodeProcess,
  runDirectory,
  ServiceInstance,
  topologyEnvironment,
} from './parts';

const USDC = 1_000_000n;
const DAY = 86_400;
const CUSTOMERS = 4;
const PERIODS = 4; // the first charged at subscribe, three more a day apart
const PLAN_AMOUNTS = [3n, 5n]; // USDC; every customer subscribes to both plans

/**
 * The production topology, with real parts on loopback (docs/deployment.md): Debian's PostgreSQL
 * server through `DATABASE_URL`, the chain from `npm run localnet` as a separate process reached
 * through `SOLANA_RPC_URL` (as a provider), two `ROLE=api` instances and one `ROLE=worker` behind
 * Debian's nginx with `TRUST_PROXY`.
 *
 * Through nginx: merchants (CLI), plans, subscriptions charged over several periods, invoices
 * paid, webhooks received and verified. During it: one api instance SIGKILLed and restarted, the
 * worker restarted with SIGTERM while it holds charges in flight (a rolling restart), PostgreSQL
 * restarted. Afterwards: nothing acknowledged is lost, every period is charged exactly once (the
 * chain's balances equal the ledger's), every event is delivered, both api instances served, and
 * rate limits and failed-authentication counting see the client's own address through the proxy.
 */
describe('Production topology: PostgreSQL, nginx, two api instances, a worker, an RPC provider', () => {
  const dir = runDirectory();
  const pg = new DebianPostgres(mkdir(join(dir, 'postgres')));
  const nginx = new Nginx(mkdir(join(dir, 'nginx')));
  const receiver = new WebhookReceiver();
  const serviceKey = Keypair.generate();
  let databaseUrl: string;
  let db: Pool;
  let localnet: NodeProcess;
  let rpcUrl: string;
  let connection: Connection;
  let api1: ServiceInstance;
  let api2: ServiceInstance;
  let worker: ServiceInstance;
  let env: Record<string, string>;
  let passed = 0;
  /** One HTTP client per loopback address: nginx sees each as a client of its own. */
  const clients = new Map<string, HttpAgent>();

  beforeAll(async () => {
    await pg.start();
    databaseUrl = await pg.createDatabase('billing');
    db = new Pool({ connectionString: databaseUrl, max: 4 });
    // PostgreSQL is restarted mid-run: an idle client of the test's pool may be cut.
    db.on('error', () => undefined);

    const rpcPort = await freePortPair();
    rpcUrl = `http://127.0.0.1:${rpcPort}`;
    localnet = new NodeProcess(
      'localnet',
      ensureBuilt('src', 'cli', 'localnet.js'),
      {
        DATA_DIR: mkdir(join(dir, 'localnet')),
        LOCALNET_RPC_PORT: String(rpcPort),
        LOCALNET_FINALITY_SLOTS: '2',
        DEV_KEY: TEST_DEV_KEY,
      },
      dir,
    ).start();
    connection = new Connection(rpcUrl, 'confirmed');
    await waitFor(
      () => {
        if (!localnet.running) throw new Error(`localnet exited:\n${localnet.output()}`);
        return localnet.output().includes('Localnet JSON-RPC:');
      },
      120_000,
      () => 'the localnet chain answering',
    );
    await faucet(serviceKey.publicKey.toBase58(), { lamports: 100_000_000_000 });
    await receiver.start();
  }, 300_000);

  afterAll(async () => {
    nginx.stop();
    for (const instance of [api1, api2, worker]) await instance?.stop('SIGKILL');
    await localnet?.stop('SIGKILL');
    await db?.end().catch(() => undefined);
    pg.stop();
    await receiver.stop();
    for (const agent of clients.values()) agent.destroy();
    // Kept for a look when something failed (logs of every process are in it).
    if (passed === 3 && !process.env.KEEP_TOPOLOGY) rmSync(dir, { recursive: true, force: true });
    else process.stderr.write(`topology run kept in ${dir}\n`);
  });

  it('ten instances starting at once migrate once: the others wait on the advisory lock', async () => {
    // The test holds the migrations' lock, so every starter must queue behind it; once it lets
    // go, one applies the migrations and the nine others find nothing to do.
    const holder = new Client({ connectionString: databaseUrl });
    await holder.connect();
    await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const starters = Array.from({ length: 10 }, (_, i) =>
      new NodeProcess(
        `migrate-${i}`,
        ensureBuilt('src', 'cli', 'migrate.js'),
        {
          DATABASE_URL: databaseUrl,
          DATA_DIR: mkdir(join(dir, `migrate-${i}`)),
          SOLANA_RPC_URL: rpcUrl,
        },
        dir,
      ).start(),
    );
    const waiting = async () =>
      Number(
        (
          await holder.query<{ n: string }>(
            `SELECT count(*) AS n FROM pg_locks
              WHERE locktype = 'advisory' AND NOT granted AND pid <> pg_backend_pid()`,
          )
        ).rows[0].n,
      );
    await waitFor(
      async () => {
        const exited = starters.filter((s) => !s.running);
        if (exited.length) {
          throw new Error(
            `${exited.length} starter(s) finished while the lock was held: ${exited[0].output()}`,
          );
        }
        return (await waiting()) === 10;
      },
      120_000,
      () => 'ten starters waiting on the lock',
    );
    const applied = await holder.query(`SELECT to_regclass($1) AS t`, [MIGRATIONS_TABLE]);
    expect(applied.rows[0].t).toBeNull(); // nothing ran past the lock

    await holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    const codes = await Promise.all(starters.map((s) => s.exited()));
    expect(codes).toEqual(Array(10).fill(0));
    const outputs = starters.map((s) => s.output());
    expect(outputs.filter((o) => o.includes('Applied Migration'))).toHaveLength(1);
    expect(outputs.filter((o) => o.includes('Database is up to date.'))).toHaveLength(9);
    const rows = await holder.query<{ name: string; n: string }>(
      `SELECT name, count(*) AS n FROM ${MIGRATIONS_TABLE} GROUP BY name ORDER BY name`,
    );
    expect(rows.rows).toEqual(MIGRATIONS.map((m) => ({ name: m.name, n: '1' })));
    await holder.end();
    passed++;
  });

  it('serves merchants through nginx: invoices paid, subscriptions charged every period exactly once, events delivered, through a kill, a rolling restart and a database restart', async () => {
    // --- The topology: two api instances and a worker, nginx in front.
    const publicPort = await freePortPair();
    const given = topologyEnvironment({
      databaseUrl,
      rpcUrl,
      serviceKey: JSON.stringify([...serviceKey.secretKey]),
      publicBaseUrl: `http://127.0.0.1:${publicPort}`,
      devKey: TEST_DEV_KEY,
    });
    env = { ...given.production, ...given.test };
    // Ports are picked free, not reserved: another process on the machine may take one between
    // the pick and the listen, and then the instance starts again on other ports.
    const instance = async (name: string, role: 'api' | 'worker') => {
      for (let attempt = 0; ; attempt++) {
        const started = new ServiceInstance(
          name,
          await freePortPair(),
          await freePortPair(),
          { ...env, ROLE: role },
          dir,
        ).start();
        try {
          await started.ready();
          return started;
        } catch (error) {
          if (attempt >= 4 || !started.output().includes('EADDRINUSE')) throw error;
        }
      }
    };
    [api1, api2, worker] = await Promise.all([
      instance('api1', 'api'),
      instance('api2', 'api'),
      instance('worker', 'worker'),
    ]);
    await nginx.start([api1.port, api2.port], publicPort);

    // --- Merchants, from the CLI on the same database; their webhook endpoint through nginx.
    const merchants = [await createMerchant('Acme'), await createMerchant('Globex')];
    for (const m of merchants) {
      await call('PUT', '/api/settings/webhook', {
        key: m.apiKey,
        body: { webhookUrl: receiver.url },
      });
    }
    const [acme, globex] = merchants;
    // The second merchant's own traffic: its events go to its endpoint, signed with its secret.
    const globexCustomer = await call('POST', '/api/customers', {
      key: globex.apiKey,
      body: { walletAddress: Keypair.generate().publicKey.toBase58(), label: 'G1' },
    });
    expect(globexCustomer.status).toBe(201);

    // --- Plans and subscriptions: every customer subscribes to both plans at the checkout.
    const plans: { id: string; amount: bigint }[] = [];
    for (const amount of PLAN_AMOUNTS) {
      const res = await call('POST', '/api/plans', {
        key: acme.apiKey,
        body: {
          label: `Daily ${amount}`,
          mint: 'USDC',
          amount: String(amount),
          intervalSeconds: DAY,
        },
      });
      expect(res.status).toBe(201);
      plans.push({ id: (res.body as { plan: { id: string } }).plan.id, amount: amount * USDC });
    }
    const customers: Keypair[] = [];
    for (let c = 0; c < CUSTOMERS; c++) {
      const customer = Keypair.generate();
      customers.push(customer);
      await faucet(customer.publicKey.toBase58(), {
        lamports: 2_000_000_000,
        mint: 'USDC',
        amount: 1000n * USDC,
      });
    }
    const startBalance = await usdc(acme.wallet);
    for (const customer of customers) {
      for (const plan of plans) {
        const req = await call('POST', `/api/checkout/plans/${plan.id}/transaction`, {
          body: { account: customer.publicKey.toBase58() },
        });
        expect(req.status).toBe(200);
        const signature = await signAndSend(
          customer,
          (req.body as { transaction: string }).transaction,
        );
        const confirmed = await call('POST', `/api/checkout/plans/${plan.id}/confirm`, {
          body: { signature },
        });
        // The first period is charged by the confirm, or (its outcome not known yet) by the worker.
        expect(confirmed.body).toMatchObject({ subscribed: true });
        expect(['paid', 'pending']).toContain(
          (confirmed.body as { firstPayment: string }).firstPayment,
        );
      }
    }
    const subscriptions = (await call('GET', '/api/subscriptions', { key: acme.apiKey })).body as {
      id: string;
      planId: string;
    }[];
    expect(subscriptions).toHaveLength(CUSTOMERS * plans.length);

    // --- Invoices: created through nginx while api1 is SIGKILLed and restarted. A create that
    // got no answer (the instance died under it) is retried with its Idempotency-Key, as a
    // client does; every acknowledged one must exist afterwards, exactly once.
    const acknowledged = new Map<string, string>(); // idempotency key -> invoice id
    const createInvoices = async (count: number, tag: string) => {
      for (let i = 0; i < count; i++) {
        const key = `inv-${tag}-${i}`;
        const body = {
          walletAddress: customers[i % CUSTOMERS].publicKey.toBase58(),
          mint: 'USDC',
          lineItems: [{ description: `Work ${tag} ${i}`, quantity: 1, unitAmount: '2' }],
        };
        for (let attempt = 0; ; attempt++) {
          const res = await call('POST', '/api/invoices', {
            key: acme.apiKey,
            body,
            idempotencyKey: key,
          }).catch(() => undefined);
          if (res?.status === 201) {
            acknowledged.set(key, (res.body as { invoice: { id: string } }).invoice.id);
            break;
          }
          if (attempt > 50)
            throw new Error(`invoice ${key}: ${res?.status} ${JSON.stringify(res?.body)}`);
          await pause(200);
        }
      }
    };
    const burst = createInvoices(40, 'a');
    await waitFor(
      () => acknowledged.size >= 10,
      60_000,
      () => 'ten invoices created',
    );
    expect(await api1.stop('SIGKILL')).toBeNull();
    await burst;
    api1.start();
    await api1.ready();
    await createInvoices(10, 'b');

    // Some invoices paid at the checkout (the worker's watcher marks them Paid).
    const paid = [...acknowledged.values()].slice(0, 6);
    for (const [i, invoiceId] of paid.entries()) {
      const req = await call('POST', `/api/checkout/invoices/${invoiceId}/transaction`, {
        body: { account: customers[i % CUSTOMERS].publicKey.toBase58() },
      });
      expect(req.status).toBe(200);
      await signAndSend(
        customers[i % CUSTOMERS],
        (req.body as { transaction: string }).transaction,
      );
    }
    await waitFor(
      async () => {
        const res = await dbQuery<{ n: string }>(
          `SELECT count(*) AS n FROM invoices WHERE id = ANY($1) AND status = 'Paid'`,
          [paid],
        );
        return Number(res[0]?.n) === paid.length;
      },
      120_000,
      () => 'the paid invoices marked Paid',
    );

    // --- Period 2: the worker charges every subscription.
    await advanceClock(DAY);
    await waitForCharges(subscriptions.length * 2);

    // --- Period 3: transactions land late, so the worker holds charges in flight when it is
    // told to stop (a rolling restart): it exits 0 and another worker settles what it held.
    await setFaults({ delaySlots: 25 });
    await advanceClock(DAY);
    await waitFor(
      async () => (await heldBy(worker.pid, 'sent')) > 0,
      120_000,
      () => 'the worker holding a sent charge',
    );
    expect(await worker.stop('SIGTERM')).toBe(0);
    expect(worker.output()).toContain('Shutting down');
    await setFaults({ delaySlots: 0 });
    worker.start();
    await worker.ready();
    await waitForCharges(subscriptions.length * 3);

    // --- PostgreSQL restarted; then period 4 and more invoices, through it.
    pg.restart();
    await createInvoices(10, 'c');
    const before = parsePrometheus(await worker.metrics());
    await advanceClock(DAY);
    await waitForCharges(subscriptions.length * 4);

    // --- The metrics moved as the journey did. The worker charged period 4 (every
    // subscription once), paid its fees, delivered webhooks; nothing is due any more.
    await waitFor(
      async () => {
        const after = parsePrometheus(await worker.metrics());
        return sample(after, 'billing_subscriptions_due') === 0;
      },
      60_000,
      () => 'nothing due in the metrics',
    );
    const after = parsePrometheus(await worker.metrics());
    const moved = (name: string, labels: Record<string, string> = {}) =>
      sample(after, name, labels) - sample(before, name, labels);
    expect(moved('billing_charges_total', { outcome: 'succeeded' })).toBe(subscriptions.length);
    expect(moved('billing_service_key_spent_lamports_total')).toBeGreaterThanOrEqual(
      5000 * subscriptions.length,
    );
    expect(
      moved('billing_delivery_attempts_total', { channel: 'webhook', outcome: 'delivered' }),
    ).toBeGreaterThan(0);
    expect(sample(after, 'billing_charge_lag_seconds')).toBe(0);
    // The key's balance as the chain has it (read at most every 5 s: it catches up).
    const lamports = await connection.getBalance(serviceKey.publicKey);
    await waitFor(
      async () =>
        sample(parsePrometheus(await worker.metrics()), 'billing_service_key_balance_lamports') ===
        lamports,
      30_000,
      () => `the service key's balance at ${lamports}`,
    );
    // Both api instances are behind nginx: each created some of the 20 invoices made since
    // api1 came back (a balancer that left one out would leave its count at 0).
    const created = async (i: ServiceInstance) =>
      sample(parsePrometheus(await i.metrics()), 'billing_http_requests_total', {
        method: 'POST',
        route: '/api/invoices',
        status: '201',
      });
    const [byApi1, byApi2] = [await created(api1), await created(api2)];
    expect(byApi1).toBeGreaterThan(0);
    expect(byApi2).toBeGreaterThan(0);
    expect(byApi1 + byApi2).toBeGreaterThanOrEqual(20);
    // The worker serves no API traffic (it is not behind the balancer).
    expect(
      sample(parsePrometheus(await worker.metrics()), 'billing_http_requests_total', {
        method: 'POST',
        route: '/api/invoices',
        status: '201',
      }),
    ).toBe(0);

    // --- Nothing acknowledged is lost, and nothing is there twice.
    const invoices = await dbQuery<{ id: string; idempotency: string }>(
      `SELECT id FROM invoices WHERE merchant_id = $1`,
      [acme.id],
    );
    expect(new Set(invoices.map((r) => r.id))).toEqual(new Set(acknowledged.values()));
    for (const id of acknowledged.values()) {
      expect((await call('GET', `/api/invoices/${id}`, { key: acme.apiKey })).status).toBe(200);
    }

    // --- Every period charged exactly once: one succeeded attempt per subscription and
    // period, and the chain agrees with the ledger to the base unit.
    const attempts = await dbQuery<{ subscription_id: string; period: number; n: string }>(
      `SELECT subscription_id, period, count(*) AS n FROM charge_attempts
        WHERE state = 'succeeded' GROUP BY subscription_id, period ORDER BY 1, 2`,
    );
    expect(attempts).toHaveLength(subscriptions.length * PERIODS);
    expect(attempts.every((a) => a.n === '1')).toBe(true);
    const perCustomer = plans.reduce((sum, p) => sum + p.amount, 0n) * BigInt(PERIODS);
    const invoiceIncome = BigInt(paid.length) * 2n * USDC;
    expect(await usdc(acme.wallet)).toBe(
      startBalance + perCustomer * BigInt(CUSTOMERS) + invoiceIncome,
    );
    for (const [i, customer] of customers.entries()) {
      const paidByCustomer = BigInt(paid.filter((_, p) => p % CUSTOMERS === i).length) * 2n * USDC;
      expect(await usdc(customer.publicKey.toBase58())).toBe(
        1000n * USDC - perCustomer - paidByCustomer,
      );
    }
    const ledger = (await call('GET', '/api/payments', { key: acme.apiKey })).body as {
      amount: string;
      status: string;
      signature: string | null;
    }[];
    const charged = ledger.filter((p) => p.status !== 'failed' && p.signature);
    expect(new Set(charged.map((p) => p.signature)).size).toBe(charged.length);

    // --- Every event delivered to the merchant's endpoint, signed with its secret.
    await waitFor(
      async () => {
        const left = await dbQuery<{ n: string }>(
          `SELECT count(*) AS n FROM webhook_deliveries WHERE status <> 'delivered'`,
        );
        return left[0]?.n === '0';
      },
      120_000,
      () => 'every delivery delivered',
    );
    for (const m of merchants) {
      const events = await dbQuery<{ id: string }>(`SELECT id FROM events WHERE merchant_id = $1`, [
        m.id,
      ]);
      expect(events.length).toBeGreaterThan(0);
      for (const event of events) {
        const got = receiver.forEvent(`evt_${event.id}`);
        expect(got.length).toBeGreaterThanOrEqual(1);
        for (const hook of got) {
          const header = hook.headers['service-signature'] as string;
          expect(verifyWebhookSignature(hook.rawBody, header, m.webhookSecret, 3600)).toBe(true);
        }
      }
    }

    passed++;

    // ------------------------------------------------------------------------------------
    async function waitForCharges(count: number): Promise<void> {
      await waitFor(
        async () => {
          const res = await dbQuery<{ n: string }>(
            `SELECT count(*) AS n FROM charge_attempts WHERE state = 'succeeded'`,
          );
          return Number(res[0]?.n) >= count;
        },
        180_000,
        () => `${count} charges`,
      );
    }
  }, 900_000);

  it('counts rate limits and failed authentications per client address, as nginx saw it', async () => {
    // AUTH_FAILURES_PER_MINUTE=5 per instance: nginx spreads one client's attempts over both.
    const bad = { key: 'sk_live_wrong_key_wrong_key_wrong_key_0000' };
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      statuses.push((await call('GET', '/api/customers', { ...bad, from: '127.0.0.2' })).status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual([429, 429]);
    // Another address is not blocked by the first one's failures (without TRUST_PROXY, every
    // request would come from nginx's address and this one would be refused too).
    expect((await call('GET', '/api/customers', { ...bad, from: '127.0.0.3' })).status).toBe(401);
    passed++;
  });

  // --------------------------------------------------------------------------------------
  interface Merchant {
    id: string;
    apiKey: string;
    webhookSecret: string;
    wallet: string;
  }

  async function createMerchant(name: string): Promise<Merchant> {
    const wallet = Keypair.generate().publicKey.toBase58();
    // Its receiving account: the faucet opens it (one base unit, counted in the start balance).
    await faucet(wallet, { lamports: 1_000_000_000, mint: 'USDC', amount: 1n });
    const cli = new NodeProcess(
      `merchant-${name}`,
      ensureBuilt('src', 'cli', 'merchant-create.js'),
      {
        DATABASE_URL: databaseUrl,
        DATA_DIR: mkdir(join(dir, `cli-${name}`)),
        SOLANA_RPC_URL: rpcUrl,
        DEV_KEY: TEST_DEV_KEY,
      },
      dir,
      ['--name', name, '--wallet', wallet, '--json'],
    ).start();
    expect(await cli.exited()).toBe(0);
    const line = cli
      .output()
      .split('\n')
      .find((l) => l.startsWith('{'))!;
    const created = JSON.parse(line) as {
      merchant: { id: string };
      apiKey: string;
      webhookSecret: string;
    };
    return {
      id: created.merchant.id,
      apiKey: created.apiKey,
      webhookSecret: created.webhookSecret,
      wallet,
    };
  }

  /** One request through nginx, from a loopback address of the test's choosing. */
  function call(
    method: string,
    path: string,
    options: { key?: string; body?: unknown; idempotencyKey?: string; from?: string } = {},
  ): Promise<{ status: number; body: unknown }> {
    const from = options.from ?? '127.0.0.1';
    let agent = clients.get(from);
    if (!agent) {
      agent = new HttpAgent({ keepAlive: true, localAddress: from });
      clients.set(from, agent);
    }
    const headers: Record<string, string> = {};
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: nginx.port, method, path, headers, agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            try {
              resolve({
                status: res.statusCode!,
                body: text ? (JSON.parse(text) as unknown) : undefined,
              });
            } catch {
              resolve({ status: res.statusCode!, body: text });
            }
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  async function rpc<T>(method: string, params: unknown[] = []): Promise<T> {
    const res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_DEV_KEY}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const body = (await res.json()) as { result?: T; error?: unknown };
    if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
    return body.result as T;
  }

  async function faucet(
    wallet: string,
    what: { lamports?: number; mint?: string; amount?: bigint },
  ) {
    await rpc('localnet_faucet', [
      {
        walletAddress: wallet,
        ...(what.lamports !== undefined ? { lamports: what.lamports } : {}),
        ...(what.mint ? { mint: what.mint, amount: String(what.amount) } : {}),
      },
    ]);
  }

  function setFaults(switches: Record<string, unknown>) {
    return rpc('localnet_setFaults', [switches]);
  }

  /** Moves the chain's clock; every instance takes it up within a few seconds (clock sync). */
  async function advanceClock(seconds: number) {
    await rpc('localnet_advanceClock', [{ seconds }]);
  }

  async function signAndSend(wallet: Keypair, unsigned: string): Promise<string> {
    const tx = Transaction.from(Buffer.from(unsigned, 'base64'));
    tx.partialSign(wallet);
    const signature = await connection.sendRawTransaction(tx.serialize());
    const { lastValidBlockHeight } = await connection.getLatestBlockhash();
    const outcome = await connection.confirmTransaction(
      { signature, blockhash: tx.recentBlockhash!, lastValidBlockHeight },
      'confirmed',
    );
    if (outcome.value.err) throw new Error(`${signature}: ${JSON.stringify(outcome.value.err)}`);
    return signature;
  }

  /** A wallet's USDC, over all its token accounts of the mint. */
  async function usdc(wallet: string): Promise<bigint> {
    const accounts = await connection.getParsedTokenAccountsByOwner(new PublicKey(wallet), {
      mint: new PublicKey(USDC_MINT),
    });
    return accounts.value.reduce(
      (sum, a) =>
        sum +
        BigInt(
          (a.account.data.parsed as { info: { tokenAmount: { amount: string } } }).info.tokenAmount
            .amount,
        ),
      0n,
    );
  }

  /** Charge attempts in `state` leased to the process `pid` (`lease_owner` is host:pid:…). */
  async function heldBy(pid: number, state: string): Promise<number> {
    const rows = await dbQuery<{ n: string }>(
      `SELECT count(*) AS n FROM charge_attempts WHERE state = $1 AND lease_owner LIKE $2`,
      [state, `%:${pid}:%`],
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** A query of the test's own, retried while PostgreSQL restarts. */
  async function dbQuery<T>(text: string, params: unknown[] = []): Promise<T[]> {
    for (let attempt = 0; ; attempt++) {
      try {
        return (await db.query(text, params)).rows as T[];
      } catch (error) {
        if (attempt > 50) throw error;
        await pause(200);
      }
    }
  }
});

/** The localnet table's USDC (the chain and the service share it). */
const USDC_MINT = mintTable('localnet').find((m) => m.symbol === 'USDC')!.address;

function mkdir(path: string): string {
  mkdirSync(path, { recursive: true });
  return path;
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
