import { Keypair, PublicKey } from '@solana/web3.js';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { Metrics } from '../src/metrics/metrics';
import { MetricsServer } from '../src/metrics/metrics-server';
import { billingHelpers } from './helpers/billing';
import { fund } from './helpers/chain-tx';
import { parsePrometheus, sample, Samples, series } from './helpers/prometheus';
import { TestSmtpServer } from './helpers/smtp-server';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';
import { waitFor, WebhookReceiver } from './helpers/webhook-receiver';

const TOKEN = 'metrics-token-e2e-0123456789';
const DAY = 86_400;
const USDC = 1_000_000n;

/**
 * The metrics port through a merchant's journey, on real PostgreSQL and the localnet chain: each
 * step is scraped before and after, and the counters and gauges it should move are checked
 * (docs/operations.md#metrics). Only the test's own runs charge and sweep; the webhook and
 * e-mail workers run as they do in production.
 */
describe('Metrics: the Prometheus port follows the journey', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  let receiver: WebhookReceiver;
  let billing: ReturnType<typeof billingHelpers>;
  let acme: TestMerchant;
  let port: number;

  const metricsPort = () => request(`http://127.0.0.1:${port}`);
  const scrape = async (): Promise<Samples> => {
    const res = await metricsPort().get('/metrics').set('authorization', `Bearer ${TOKEN}`);
    expect(res.status).toBe(200);
    return parsePrometheus(res.text);
  };
  /** How much each series moved between two scrapes. */
  const moved = (before: Samples, after: Samples, name: string, labels = {}) =>
    sample(after, name, labels) - sample(before, name, labels);
  const createInvoice = (extra: Record<string, unknown> = {}) =>
    t.http
      .post('/api/invoices')
      .set(acme.auth)
      .send({
        walletAddress: Keypair.generate().publicKey.toBase58(),
        mint: 'USDC',
        lineItems: [{ description: 'Work', quantity: 1, unitAmount: '3' }],
        ...extra,
      })
      .expect(201);

  beforeAll(async () => {
    smtp = await new TestSmtpServer().start();
    receiver = await new WebhookReceiver().start();
    t = await createTestApp({
      env: {
        METRICS_PORT: '0',
        METRICS_HOST: '127.0.0.1',
        METRICS_TOKEN: TOKEN,
        // A login the server refuses: every message is retried (our configuration's fault).
        SMTP_URL: smtp.urlWithPassword('wrong-password'),
        LOCALNET_FINALITY_SLOTS: '0',
        WATCH_INTERVAL_MS: '3600000',
        CHARGE_RUN_INTERVAL_MS: '3600000',
      },
    });
    port = t.app.get(MetricsServer).port!;
    billing = billingHelpers(t);
    acme = await t.createMerchant('Acme');
    await t.http
      .put('/api/settings/webhook')
      .set(acme.auth)
      .send({ webhookUrl: receiver.url })
      .expect(200);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.stop();
    await smtp?.stop();
  });

  it('serves GET /metrics on its own port, with the token only; never on the API port', async () => {
    expect(port).toBeGreaterThan(0);
    await metricsPort().get('/metrics').expect(401);
    await metricsPort().get('/metrics').set('authorization', `Bearer ${TOKEN}-not`).expect(401);
    const res = await metricsPort()
      .get('/metrics')
      .set('authorization', `Bearer ${TOKEN}`)
      .expect(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.text).toMatch(/^# TYPE billing_http_requests_total counter$/m);
    await metricsPort().get('/').set('authorization', `Bearer ${TOKEN}`).expect(404);

    const api = await t.http.get('/metrics').expect(404);
    expect(api.body.error).toMatchObject({ code: 'NOT_FOUND' });
  });

  it("the service key's SOL balance is the chain's, and the pool's clients are counted", async () => {
    const service = new PublicKey(billing.chain.servicePublicKey);
    const before = await billing.connection.getBalance(service);
    const samples = await scrape();
    expect(sample(samples, 'billing_service_key_balance_lamports')).toBe(before);
    expect(before).toBeGreaterThan(0);

    expect(sample(samples, 'billing_db_pool_max_clients')).toBe(10); // DATABASE_POOL_SIZE
    const total = sample(samples, 'billing_db_pool_clients');
    expect(total).toBeGreaterThanOrEqual(1);
    expect(sample(samples, 'billing_db_pool_idle_clients')).toBeLessThanOrEqual(total);
    expect(sample(samples, 'billing_db_pool_waiting_requests')).toBe(0);
  });

  it('HTTP requests are counted and timed by method, route template and status', async () => {
    const invoice = (await createInvoice()).body.invoice as { id: string };
    const before = await scrape();
    await t.http.get(`/api/invoices/${invoice.id}`).set(acme.auth).expect(200);
    await t.http.get(`/api/invoices/${invoice.id}`).set(acme.auth).expect(200);
    await t.http.get(`/api/invoices/${randomUUID()}`).set(acme.auth).expect(404);
    await createInvoice();
    await t.http.get('/api/customers').set('authorization', 'Bearer sbk_not-a-key').expect(401);
    await t.http.get('/no/such/route').expect(404);
    const after = await scrape();

    const requests = (method: string, route: string, status: string) =>
      moved(before, after, 'billing_http_requests_total', { method, route, status });
    const timed = (method: string, route: string, status: string) =>
      moved(before, after, 'billing_http_request_duration_seconds_count', {
        method,
        route,
        status,
      });
    expect(requests('GET', '/api/invoices/:id', '200')).toBe(2);
    expect(requests('GET', '/api/invoices/:id', '404')).toBe(1);
    expect(requests('POST', '/api/invoices', '201')).toBe(1);
    expect(requests('GET', '/api/customers', '401')).toBe(1);
    expect(requests('GET', 'unmatched', '404')).toBe(1);
    expect(timed('GET', '/api/invoices/:id', '200')).toBe(2);
    expect(timed('POST', '/api/invoices', '201')).toBe(1);
    // Never the path a client sent: no id, no unknown path in a label.
    const routes = [...after.keys()].filter((k) => k.startsWith('billing_http_requests_total'));
    expect(routes.filter((k) => k.includes(invoice.id) || k.includes('/no/such'))).toEqual([]);
  });

  it('webhook deliveries: attempts by outcome, and the backlog with the age of its oldest', async () => {
    // What the earlier requests queued is delivered first.
    await waitFor(async () => sample(await scrape(), 'billing_delivery_backlog', WEBHOOK) === 0);
    const start = await scrape();
    receiver.received.length = 0;
    await createInvoice();
    // customer.created and invoice.created, delivered.
    await receiver.waitForCount(2);
    await waitFor(
      async () => moved(start, await scrape(), 'billing_delivery_attempts_total', DELIVERED) === 2,
    );
    const delivered = await scrape();
    expect(sample(delivered, 'billing_delivery_backlog', WEBHOOK)).toBe(0);
    expect(sample(delivered, 'billing_delivery_oldest_pending_age_seconds', WEBHOOK)).toBe(0);

    // The endpoint fails: each attempt is a retry, and the deliveries wait.
    receiver.behaviour = { status: 500 };
    await createInvoice();
    await receiver.waitForCount(4);
    await waitFor(
      async () => moved(delivered, await scrape(), 'billing_delivery_attempts_total', RETRY) === 2,
    );
    const failing = await scrape();
    expect(moved(delivered, failing, 'billing_delivery_attempts_total', DELIVERED)).toBe(0);
    expect(sample(failing, 'billing_delivery_backlog', WEBHOOK)).toBe(2);
    // Ten minutes of domain time later (their next attempts are due: they fail again).
    await billing.advance(600);
    const later = await scrape();
    expect(sample(later, 'billing_delivery_backlog', WEBHOOK)).toBe(2);
    const age = sample(later, 'billing_delivery_oldest_pending_age_seconds', WEBHOOK);
    expect(age).toBeGreaterThanOrEqual(600);
    expect(age).toBeLessThan(700);

    // The endpoint is back: the retries are delivered, the backlog is empty again.
    receiver.behaviour = { status: 200 };
    await billing.advance(3600);
    await waitFor(async () => sample(await scrape(), 'billing_delivery_backlog', WEBHOOK) === 0);
    const done = await scrape();
    expect(moved(failing, done, 'billing_delivery_attempts_total', DELIVERED)).toBe(2);
    expect(sample(done, 'billing_delivery_oldest_pending_age_seconds', WEBHOOK)).toBe(0);
  });

  it('e-mail: a refused SMTP login is a retry, and the message waits in the backlog', async () => {
    const before = await scrape();
    await createInvoice({ customerEmail: 'ada@example.com' });
    await waitFor(
      async () =>
        moved(before, await scrape(), 'billing_delivery_attempts_total', {
          channel: 'email',
          outcome: 'retry',
        }) === 1,
      10_000,
    );
    const after = await scrape();
    expect(sample(after, 'billing_delivery_backlog', { channel: 'email' })).toBe(
      sample(before, 'billing_delivery_backlog', { channel: 'email' }) + 1,
    );
    expect(
      moved(before, after, 'billing_delivery_attempts_total', {
        channel: 'email',
        outcome: 'delivered',
      }),
    ).toBe(0);
  });

  it('charge runs: charged, due and lagging, failed by class; the service key spend', async () => {
    const plan = await t.http
      .post('/api/plans')
      .set(acme.auth)
      .send({ label: 'Pro', mint: 'USDC', amount: '4', intervalSeconds: 30 * DAY })
      .expect(201);
    const customer = Keypair.generate();
    // One period's worth: the next charge finds nothing to pull.
    fund(t, customer.publicKey.toBase58(), { symbol: 'USDC', amount: 4n * USDC });

    const start = await scrape();
    await billing.subscribe(customer, plan.body.plan.id as string, acme.auth);
    const charged = await scrape();
    expect(moved(start, charged, 'billing_charges_claimed_total')).toBe(1);
    expect(moved(start, charged, 'billing_charges_total', { outcome: 'succeeded' })).toBe(1);
    expect(moved(start, charged, 'billing_service_key_spent_lamports_total')).toBe(5_000);
    expect(sample(charged, 'billing_subscriptions_due')).toBe(0);
    expect(sample(charged, 'billing_charge_lag_seconds')).toBe(0);

    // A period and 100 s later, no run yet: one subscription due for 100 s.
    await billing.advance(30 * DAY + 100);
    const due = await scrape();
    expect(sample(due, 'billing_subscriptions_due')).toBe(1);
    expect(sample(due, 'billing_charge_lag_seconds')).toBeGreaterThanOrEqual(100);
    expect(sample(due, 'billing_charge_lag_seconds')).toBeLessThan(200);

    // The run: insufficient funds (nothing was sent, so nothing spent).
    expect((await billing.run()).charges).toMatchObject({ attempts: 1, failed: 1 });
    const failed = await scrape();
    expect(moved(due, failed, 'billing_charges_claimed_total')).toBe(1);
    expect(moved(due, failed, 'billing_charges_total', { outcome: 'failed' })).toBe(1);
    expect(moved(due, failed, 'billing_charges_total', { outcome: 'succeeded' })).toBe(0);
    expect(
      moved(due, failed, 'billing_charge_failures_total', { reason: 'insufficient_funds' }),
    ).toBe(1);
    expect(moved(due, failed, 'billing_service_key_spent_lamports_total')).toBe(0);
    expect(sample(failed, 'billing_subscriptions_due')).toBe(0);
    expect(sample(failed, 'billing_charge_lag_seconds')).toBe(0);
  });

  it("the watchers' lag: seconds since the stalest cursor was walked, back to ~0 after a sweep", async () => {
    await billing.run(); // a sweep: every merchant with Open invoices has its cursors
    const swept = await scrape();
    expect(sample(swept, 'billing_watcher_cursors', MERCHANT_ACCOUNT)).toBe(3); // one per mint
    expect(sample(swept, 'billing_watcher_cursors', { kind: 'plan_subscribes' })).toBe(1);
    expect(sample(swept, 'billing_watcher_lag_seconds', MERCHANT_ACCOUNT)).toBeLessThan(60);

    // A watcher that stopped walking one account an hour ago (as a stalled sweep leaves it).
    await t.sql(
      `UPDATE chain_cursors SET updated_at = now() - interval '1 hour'
        WHERE address = (SELECT min(address) FROM chain_cursors WHERE kind = 'merchant_account')`,
    );
    const stalled = await scrape();
    expect(sample(stalled, 'billing_watcher_lag_seconds', MERCHANT_ACCOUNT)).toBeGreaterThanOrEqual(
      3600,
    );
    await billing.run();
    expect(sample(await scrape(), 'billing_watcher_lag_seconds', MERCHANT_ACCOUNT)).toBeLessThan(
      60,
    );
  });

  it('every request the RPC transport makes is counted, by method and outcome', async () => {
    const before = await scrape();
    // Readiness asks the chain for its slot: one getSlot through the transport.
    await t.http.get('/health').expect(200);
    const after = await scrape();
    expect(
      moved(before, after, 'solana_rpc_requests_total', { method: 'getSlot', outcome: 'ok' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      moved(before, after, 'solana_rpc_request_duration_seconds_count', { method: 'getSlot' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it("RPC requests recorded by the transport's callback are served", async () => {
    const record = t.app.get(Metrics).recordRpcRequest;
    const before = await scrape();
    record('getSignaturesForAddress', 'ok', 0.12);
    record('getSignaturesForAddress', 'rate_limited', 0.01);
    const after = await scrape();
    expect(
      moved(before, after, 'solana_rpc_requests_total', {
        method: 'getSignaturesForAddress',
        outcome: 'ok',
      }),
    ).toBe(1);
    expect(
      moved(before, after, 'solana_rpc_request_duration_seconds_count', {
        method: 'getSignaturesForAddress',
      }),
    ).toBe(2);
    expect(
      after.has(
        series('solana_rpc_requests_total', {
          method: 'getSignaturesForAddress',
          outcome: 'rate_limited',
        }),
      ),
    ).toBe(true);
  });
});

const WEBHOOK = { channel: 'webhook' };
const DELIVERED = { channel: 'webhook', outcome: 'delivered' };
const RETRY = { channel: 'webhook', outcome: 'retry' };
const MERCHANT_ACCOUNT = { kind: 'merchant_account' };
