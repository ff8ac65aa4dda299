import { ComputeBudgetProgram, Connection, Keypair, PublicKey } from '@solana/web3.js';
import { LocalnetRpc, startLocalnetRpc } from '@stablecoin-billing/localnet';
import { createServer } from 'node:net';
import { serviceKeySpend } from '../src/billing/service-key-spend';
import { Db } from '../src/database/db';
import { ChainPort } from '../src/solana/chain.port';
import { networkFee } from '../src/solana/compute-budget';
import { RpcOutcome, RpcTransport } from '../src/solana/rpc-transport';
import { billingHelpers } from './helpers/billing';
import { fund, signAndSend } from './helpers/chain-tx';
import { createTestApp, TestApp } from './helpers/test-app';
import { freePortPair, TEST_DEV_KEY, TestChain } from './helpers/test-chain';

const DAY = 86_400;
const USDC = 1_000_000n;

interface Report {
  method: string;
  outcome: RpcOutcome;
  url: number;
}

/** A URL nothing listens on: a provider that is down. */
function downUrl(): Promise<string> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(`http://127.0.0.1:${port}`));
    });
  });
}

/**
 * Another JSON-RPC server on the app's chain with fault switches of its own: a provider in
 * front of the same cluster as the app's own (healthy) one.
 */
async function provider(chain: TestChain): Promise<LocalnetRpc> {
  return startLocalnetRpc(chain.chain, { port: await freePortPair(), devKey: TEST_DEV_KEY });
}

/**
 * The service with several RPC URLs, made from its own chain (`rpcUrls`), every JSON-RPC
 * request it sends recorded from the transport's hook. The service key is funded in process:
 * localnet's start-up top-up goes to the first URL, which may be the one failing.
 */
async function serviceWith(
  rpcUrls: (chain: TestChain) => string | Promise<string>,
  env: Record<string, string> = {},
  chainOptions: { finalitySlots?: number } = {},
) {
  const t = await createTestApp({
    env: {
      // Only the test's own runs charge and watch.
      WATCH_INTERVAL_MS: '3600000',
      CHARGE_RUN_INTERVAL_MS: '3600000',
      ...env,
    },
    rpcUrls,
    chainOptions,
  });
  const reports: Report[] = [];
  t.app.get(RpcTransport).observe((method, outcome, seconds, url) => {
    expect(seconds).toBeGreaterThanOrEqual(0);
    reports.push({ method, outcome, url });
  });
  t.chain!.chain.faucet({
    wallet: t.app.get(ChainPort).servicePublicKey,
    lamports: 100_000_000_000n,
  });
  return { t, reports };
}

const count = (reports: Report[], url: number, outcome: RpcOutcome) =>
  reports.filter((r) => r.url === url && r.outcome === outcome).length;

/**
 * What the service must keep doing whatever its first provider does: `customers` wallets
 * subscribe at the checkout (each first period charged at once), a period later one run charges
 * them all, and invoices paid at the checkout are found by the watcher and marked Paid.
 * Returns how many runs the watcher took to mark them all Paid.
 */
async function keepsBilling(t: TestApp, customers: number): Promise<number> {
  const billing = billingHelpers(t);
  const acme = await t.createMerchant('Acme');
  const plan = await t.http
    .post('/api/plans')
    .set(acme.auth)
    .send({ label: 'Pro', mint: 'USDC', amount: '10', intervalSeconds: 30 * DAY })
    .expect(201);
  const wallets: Keypair[] = [];
  for (let i = 0; i < customers; i++) {
    const customer = Keypair.generate();
    fund(t, customer.publicKey.toBase58(), { symbol: 'USDC', amount: 30n * USDC });
    const { subscription } = await billing.subscribe(customer, plan.body.plan.id, acme.auth);
    expect(subscription).toMatchObject({ status: 'Active' });
    wallets.push(customer);
  }
  for (const w of wallets) expect(await billing.balance(w.publicKey.toBase58())).toBe(20n * USDC);

  // A period later one run charges them all (their sends go together). The clocks are moved in
  // process: the dev endpoint would ask the first URL.
  t.clock.advance(30 * DAY * 1000);
  t.chain!.chain.advanceClock(30 * DAY);
  expect((await billing.run()).charges).toMatchObject({
    succeeded: customers,
    failed: 0,
    deferred: 0,
  });
  for (const w of wallets) expect(await billing.balance(w.publicKey.toBase58())).toBe(10n * USDC);
  expect(await billing.balance(acme.walletAddress)).toBe(BigInt(customers) * 20n * USDC);

  // Invoices paid at the checkout: the watcher reads the payments (together) and marks them Paid.
  const ids: string[] = [];
  for (const payer of wallets) {
    const invoice = await t.http
      .post('/api/invoices')
      .set(acme.auth)
      .send({
        walletAddress: payer.publicKey.toBase58(),
        mint: 'USDC',
        lineItems: [{ description: 'Work', quantity: 1, unitAmount: '2.5' }],
      })
      .expect(201);
    const pay = await t.http
      .post(`/api/checkout/invoices/${invoice.body.invoice.id}/transaction`)
      .send({ account: payer.publicKey.toBase58() })
      .expect(200);
    const height = await billing.connection.getBlockHeight();
    expect(await signAndSend(t, pay.body.transaction, height + 150, payer)).toMatchObject({
      state: 'succeeded',
    });
    ids.push(invoice.body.invoice.id);
  }
  const status = async (id: string) =>
    (await t.http.get(`/api/invoices/${id}`).set(acme.auth).expect(200)).body.status as string;
  const deadline = Date.now() + 20_000;
  for (let runs = 1; ; runs++) {
    await billing.run();
    const statuses = await Promise.all(ids.map(status));
    if (statuses.every((s) => s === 'Paid')) return runs;
    if (Date.now() > deadline) throw new Error(`invoices not Paid: ${statuses.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('RPC providers: the service keeps billing whatever its first RPC URL does', () => {
  const close: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of close.splice(0).reverse()) await c();
  });

  it('with the first URL down: every request fails over to the second, and the first rests', async () => {
    const down = await downUrl();
    const { t, reports } = await serviceWith((chain) => `${down},${chain.url}`);
    close.push(() => t.close());
    await keepsBilling(t, 2);
    // Tried by the first requests only (those in flight before its first failure was known),
    // then left resting: after each rest (1 s, 2 s, 4 s...) a getHealth probe, never a request.
    // The very first are the mints' reads at start (their extensions), made before this test
    // observes the transport: what it sees at the first URL may be probes alone.
    expect(count(reports, 0, 'ok')).toBe(0);
    const atFirst = reports.filter((r) => r.url === 0);
    expect(atFirst.every((r) => r.outcome === 'transport_error')).toBe(true);
    const probes = atFirst.filter((r) => r.method === 'getHealth').length;
    expect(probes).toBeGreaterThan(0);
    expect(probes).toBeLessThanOrEqual(6);
    expect(atFirst.length - probes).toBeLessThanOrEqual(5);
    expect(count(reports, 1, 'ok')).toBeGreaterThan(50);
    // sendTransaction went to the second URL, the very bytes the service recorded.
    expect(reports.some((r) => r.method === 'sendTransaction' && r.url === 1)).toBe(true);
  });

  it('with the first URL rate-limited (HTTP 429, Retry-After): it cools down while the second serves', async () => {
    let limited!: LocalnetRpc;
    const { t, reports } = await serviceWith(async (chain) => {
      limited = await provider(chain);
      limited.faults.set({ rateLimitPerSecond: 4 });
      return `${limited.url},${chain.url}`;
    });
    close.push(
      () => t.close(),
      () => limited.close(),
    );
    await keepsBilling(t, 2);
    expect(count(reports, 0, 'http_429')).toBeGreaterThan(0);
    // The first URL served within its limit, the second the rest.
    expect(count(reports, 0, 'ok')).toBeGreaterThan(0);
    expect(count(reports, 1, 'ok')).toBeGreaterThan(0);
  });

  it('with the only URL rate-limited, requests wait for its Retry-After rather than fail', async () => {
    const { t, reports } = await serviceWith((chain) => chain.url);
    close.push(() => t.close());
    const chain = t.app.get(ChainPort);
    t.chain!.faults.set({ throttleNext: 2, retryAfterSeconds: 1 });
    const started = Date.now();
    expect(await chain.currentSlot()).toBeGreaterThan(0);
    // Two 429s a second apart (the second cooldown, 1 s again), then the answer.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_800);
    expect(reports.map((r) => [r.method, r.outcome])).toEqual([
      ['getSlot', 'http_429'],
      ['getSlot', 'http_429'],
      ['getSlot', 'ok'],
    ]);
  });

  it('with the first URL refusing batches: it learns to send singly there, and keeps using it', async () => {
    let refusing!: LocalnetRpc;
    const { t, reports } = await serviceWith(async (chain) => {
      refusing = await provider(chain);
      refusing.faults.set({ refuseBatches: true });
      return `${refusing.url},${chain.url}`;
    });
    close.push(
      () => t.close(),
      () => refusing.close(),
    );
    await keepsBilling(t, 3);
    const transport = t.app.get(RpcTransport);
    expect(transport.batchLimit(0)).toBe(1);
    // Refused batches are answers of a healthy URL, not failures: nothing went to the second.
    expect(count(reports, 0, 'rpc_error')).toBeGreaterThan(0);
    expect(reports.filter((r) => r.url === 1)).toEqual([]);
    expect(
      reports.filter((r) => r.method === 'sendTransaction' && r.outcome === 'ok').length,
    ).toBeGreaterThanOrEqual(3 + 3 + 3); // subscribes, first charges, the run's charges
  });

  it('with the first URL capping batches (HTTP 413): it learns the size it takes', async () => {
    let capping!: LocalnetRpc;
    const { t, reports } = await serviceWith(async (chain) => {
      capping = await provider(chain);
      capping.faults.set({ maxBatch: 2 });
      return `${capping.url},${chain.url}`;
    });
    close.push(
      () => t.close(),
      () => capping.close(),
    );
    await keepsBilling(t, 3);
    expect(t.app.get(RpcTransport).batchLimit(0)).toBeLessThanOrEqual(2);
    expect(count(reports, 0, 'http_error')).toBeGreaterThan(0);
    expect(reports.filter((r) => r.url === 1)).toEqual([]);
  });
});

describe('Priority fees: the charges bid a compute-unit price and a simulated limit, and the service key counts what it paid', () => {
  let t: TestApp;
  afterAll(() => t?.close());

  it('bids the recent fees capped by PRIORITY_FEE_MAX_MICRO_LAMPORTS; the fee paid is the fee counted', async () => {
    let reports: Report[];
    ({ t, reports } = await serviceWith((chain) => chain.url, {
      PRIORITY_FEE_MAX_MICRO_LAMPORTS: '20000',
    }));
    const service = new PublicKey(t.app.get(ChainPort).servicePublicKey);
    const connection = new Connection(t.chain!.url, 'confirmed');
    // A congested cluster: the recent fees are 50,000 micro-lamports a unit, above the ceiling.
    t.chain!.faults.set({ prioritizationFeeFloor: 50_000 });
    const before = await connection.getBalance(service);
    await keepsBilling(t, 2);
    const spent = BigInt(before - (await connection.getBalance(service)));

    const charges = await t.sql<{ signature: string; transaction: string; network_fee: string }>(
      `SELECT signature, transaction, network_fee::text FROM charge_attempts
        WHERE state = 'succeeded' ORDER BY created_at`,
    );
    expect(charges).toHaveLength(4);
    // The price came from the market's fees (read, then capped), not from a fallback.
    expect(
      reports.some((r) => r.method === 'getRecentPrioritizationFees' && r.outcome === 'ok'),
    ).toBe(true);
    let paid = 0n;
    for (const charge of charges) {
      const landed = await connection.getTransaction(charge.signature, {
        commitment: 'confirmed',
        maxSupportedTransactionVersion: 0,
      });
      const [limit, price] = landed!.transaction.message.compiledInstructions;
      const keys = landed!.transaction.message.staticAccountKeys;
      expect(keys[limit.programIdIndex].equals(ComputeBudgetProgram.programId)).toBe(true);
      expect(keys[price.programIdIndex].equals(ComputeBudgetProgram.programId)).toBe(true);
      // The price at the ceiling; the limit from the simulation (a memo and a transfer use far
      // less than the runtime's default of 200,000 a instruction).
      expect(Buffer.from(price.data)).toEqual(
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 20_000 }).data,
      );
      const units = Buffer.from(limit.data).readUInt32LE(1);
      expect(units).toBeGreaterThanOrEqual(10_000);
      expect(units).toBeLessThan(100_000);
      const fee = 5_000n + (20_000n * BigInt(units) + 999_999n) / 1_000_000n;
      // What the chain charged is what the bytes say, and what the attempt counted.
      expect(BigInt(landed!.meta!.fee)).toBe(fee);
      expect(networkFee(charge.transaction)).toBe(fee);
      expect(BigInt(charge.network_fee)).toBe(fee);
      paid += fee;
    }
    expect(paid).toBeGreaterThan(4n * 5_000n);
    // The service key paid those fees and nothing else; the spend report says the same.
    expect(spent).toBe(paid);
    const [spend] = await serviceKeySpend(t.app.get(Db));
    expect(spend).toMatchObject({ landedCharges: 4, lamports: String(paid) });
  });
});

describe('Commitment: a cluster where confirmed equals finalized', () => {
  let t: TestApp;
  afterAll(() => t?.close());

  it('with SOLANA_COMMITMENT=finalized and no finality lag, charges settle finalized and an invoice is Paid by the run that reads its payment', async () => {
    // Localnet without a finality lag behaves as an Alpenglow cluster: a confirmed block is final.
    ({ t } = await serviceWith(
      (chain) => chain.url,
      { SOLANA_COMMITMENT: 'finalized' },
      { finalitySlots: 0 },
    ));
    expect(await keepsBilling(t, 2)).toBe(1);
    const lines = await t.sql<{ kind: string; status: string }>(
      `SELECT kind, status FROM payments ORDER BY created_at`,
    );
    expect(lines).toEqual([
      ...Array.from({ length: 4 }, () => ({ kind: 'subscription', status: 'finalized' })),
      ...Array.from({ length: 2 }, () => ({ kind: 'invoice', status: 'finalized' })),
    ]);
    // Seen and final at once: both events for every payment, and each invoice paid.
    const events = await t.sql<{ type: string; n: string }>(
      `SELECT type, count(*)::text AS n FROM events
        WHERE type IN ('payment.received', 'payment.confirmed', 'invoice.paid')
        GROUP BY type ORDER BY type`,
    );
    expect(events).toEqual([
      { type: 'invoice.paid', n: '2' },
      { type: 'payment.confirmed', n: '6' },
      { type: 'payment.received', n: '6' },
    ]);
  });
});
