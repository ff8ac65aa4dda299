import { Logger } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Metrics } from './metrics';

/** The value of one series (a counter, a gauge, or a histogram's `_count`/`_sum`), or undefined. */
async function value(
  metrics: Metrics,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const base = name.replace(/_(count|sum)$/, '');
  const metric = metrics.registry.getSingleMetric(
    metrics.registry.getSingleMetric(name) ? name : base,
  );
  if (!metric) return undefined;
  const { values } = await metric.get();
  const wanted = Object.entries(labels);
  const found = (values as ((typeof values)[number] & { metricName?: string })[]).find(
    (v) =>
      (v.metricName ?? name) === name &&
      wanted.every(([k, x]) => v.labels[k] === x) &&
      Object.keys(v.labels).length === wanted.length,
  );
  return found?.value;
}

describe('Metrics', () => {
  beforeAll(() => Logger.overrideLogger(false));

  it('recordRpcRequest counts a request by method and outcome and times it by method', async () => {
    const metrics = new Metrics();
    const record = metrics.recordRpcRequest; // a callback, as the transport is handed it
    record('getBalance', 'ok', 0.02);
    record('getBalance', 'ok', 0.2);
    record('getBalance', 'timeout', 5);
    record('sendTransaction', 'rate_limited', 0.05);

    expect(
      await value(metrics, 'solana_rpc_requests_total', { method: 'getBalance', outcome: 'ok' }),
    ).toBe(2);
    expect(
      await value(metrics, 'solana_rpc_requests_total', {
        method: 'getBalance',
        outcome: 'timeout',
      }),
    ).toBe(1);
    expect(
      await value(metrics, 'solana_rpc_requests_total', {
        method: 'sendTransaction',
        outcome: 'rate_limited',
      }),
    ).toBe(1);
    expect(
      await value(metrics, 'solana_rpc_request_duration_seconds_count', { method: 'getBalance' }),
    ).toBe(3);
    expect(
      await value(metrics, 'solana_rpc_request_duration_seconds_sum', { method: 'getBalance' }),
    ).toBeCloseTo(5.22);
  });

  it('recordRpcRequest keeps its labels bounded: odd values and values past the 64th are "other"', async () => {
    const metrics = new Metrics();
    metrics.recordRpcRequest('get balance; drop', 'ok', 0.01);
    metrics.recordRpcRequest('x'.repeat(65), 'ok', 0.01);
    for (let i = 0; i < 70; i++) metrics.recordRpcRequest(`method${i}`, 'ok', 0.01);
    metrics.recordRpcRequest('method0', 'ok', Number.NaN); // counted, not timed

    expect(
      await value(metrics, 'solana_rpc_requests_total', { method: 'other', outcome: 'ok' }),
    ).toBe(2 + 6);
    expect(
      await value(metrics, 'solana_rpc_requests_total', { method: 'method0', outcome: 'ok' }),
    ).toBe(2);
    expect(
      await value(metrics, 'solana_rpc_request_duration_seconds_count', { method: 'method0' }),
    ).toBe(1);
    expect(
      await value(metrics, 'solana_rpc_requests_total', { method: 'method64', outcome: 'ok' }),
    ).toBeUndefined();
  });

  it('a scrape reads every source first; one that fails or hangs keeps its last value and counts an error', async () => {
    const metrics = new Metrics();
    let pending = 3;
    let fail = false;
    let hang = false;
    metrics.addSource(
      'webhook_backlog',
      async () => {
        if (fail) throw new Error('the database is away');
        if (hang) await new Promise(() => undefined);
        metrics.setDeliveryBacklog('webhook', pending, 12);
      },
      { timeoutMs: 50 },
    );
    const backlog = () => value(metrics, 'billing_delivery_backlog', { channel: 'webhook' });
    const errors = () =>
      value(metrics, 'billing_metrics_source_errors_total', { source: 'webhook_backlog' });

    expect(await metrics.scrape()).toMatch(/^billing_delivery_backlog\{channel="webhook"\} 3$/m);
    pending = 5;
    fail = true;
    await metrics.scrape();
    expect(await backlog()).toBe(3);
    expect(await errors()).toBe(1);
    fail = false;
    hang = true;
    const started = Date.now();
    await metrics.scrape();
    expect(Date.now() - started).toBeLessThan(2_000); // given up after 50 ms, not waited for
    expect(await backlog()).toBe(3);
    expect(await errors()).toBe(2);
    hang = false;
    await metrics.scrape();
    expect(await backlog()).toBe(5);
  });

  it('a source with maxAgeMs is read again only once its last read is that old; concurrent scrapes share one read', async () => {
    const metrics = new Metrics();
    let now = Date.now();
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
    try {
      let reads = 0;
      metrics.addSource(
        'service_key_balance',
        async () => {
          reads++;
          await new Promise((r) => setTimeout(r, 20));
          metrics.setServiceKeyBalance(1_000_000_000n + BigInt(reads));
        },
        { maxAgeMs: 5_000 },
      );
      await Promise.all([metrics.scrape(), metrics.scrape(), metrics.scrape()]);
      expect(reads).toBe(1);
      now += 4_999;
      await metrics.scrape();
      expect(reads).toBe(1);
      expect(await value(metrics, 'billing_service_key_balance_lamports')).toBe(1_000_000_001);
      now += 1;
      await metrics.scrape();
      expect(reads).toBe(2);
      expect(await value(metrics, 'billing_service_key_balance_lamports')).toBe(1_000_000_002);
    } finally {
      clock.mockRestore();
    }
  });

  it('two apps in one process keep their metrics apart', async () => {
    const a = new Metrics();
    const b = new Metrics();
    a.deliveryAttempt('webhook', 'delivered');
    expect(
      await value(a, 'billing_delivery_attempts_total', {
        channel: 'webhook',
        outcome: 'delivered',
      }),
    ).toBe(1);
    expect(
      await value(b, 'billing_delivery_attempts_total', {
        channel: 'webhook',
        outcome: 'delivered',
      }),
    ).toBe(0);
  });

  it("serves Node.js' and the process' default metrics too", async () => {
    const text = await new Metrics().scrape();
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes /m);
  });

  it('every metric of the service is documented in docs/operations.md (name and type)', async () => {
    const docs = readFileSync(join(__dirname, '..', '..', 'docs', 'operations.md'), 'utf8');
    const ours = (await new Metrics().registry.getMetricsAsJSON()).filter((m) =>
      /^(billing|solana)_/.test(m.name),
    );
    expect(ours.length).toBeGreaterThan(15);
    const undocumented = ours.filter(
      (m) => !new RegExp(`\\| \`${m.name}\` \\| ${m.type} \\|`).test(docs),
    );
    expect(undocumented.map((m) => m.name)).toEqual([]);
  });

  it('the sample alerts of docs/operations.md name only metrics the service serves', async () => {
    const docs = readFileSync(join(__dirname, '..', '..', 'docs', 'operations.md'), 'utf8');
    const rules = /### Sample alerts[\s\S]*?```yaml\n([\s\S]*?)```/.exec(docs)![1];
    const served = new Set(
      (await new Metrics().registry.getMetricsAsJSON()).flatMap((m) =>
        String(m.type) === 'histogram'
          ? ['_bucket', '_count', '_sum'].map((suffix) => m.name + suffix)
          : [m.name],
      ),
    );
    const named = [...rules.matchAll(/\b(?:billing|solana)_[a-z_]+\b/g)].map((m) => m[0]);
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((name) => !served.has(name))).toEqual([]);
    expect(rules.match(/- alert: /g)!.length).toBe(rules.match(/\n {8}expr: /g)!.length);
  });
});
