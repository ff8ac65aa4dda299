import { Logger } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { withTimeout } from '../common/with-timeout';

/** Where a delivery goes: the webhook outbox or the e-mail outbox. */
export type DeliveryChannel = 'webhook' | 'email';

/**
 * What one delivery attempt came to: `delivered` (a 2xx, an SMTP server's acceptance), `retry`
 * (it failed and another attempt follows), `failed` (it failed for good: refused, or the retry
 * window is over) or `skipped` (nothing was sent: no endpoint, no SMTP server configured).
 */
export type DeliveryOutcome = 'delivered' | 'retry' | 'failed' | 'skipped';

/** What a charge attempt came to in a run (`ChargeRunResult`'s counts). */
export const CHARGE_OUTCOMES = [
  'succeeded',
  'failed',
  'completed',
  'deferred',
  'abandoned',
] as const;
export type ChargeOutcome = (typeof CHARGE_OUTCOMES)[number];

/**
 * The transport's report of one JSON-RPC request: its method, how it ended (`ok`, or the
 * error's class: `timeout`, `rate_limited`, an error code) and how long it took.
 */
export type RpcRequestRecorder = (method: string, outcome: string, seconds: number) => void;

/** A read made when Prometheus scrapes: it sets its gauges (see `Metrics.addSource`). */
export interface ScrapeSourceOptions {
  /** A read slower than this is given up (its gauges keep their last values). Default 2 s. */
  timeoutMs?: number;
  /** A successful read younger than this is not made again. Default 0: at every scrape. */
  maxAgeMs?: number;
}

interface ScrapeSource extends Required<ScrapeSourceOptions> {
  name: string;
  read: () => Promise<void>;
  /** When the last read succeeded (ms since the epoch). */
  readAt?: number;
}

/** The prefix of every metric of the service (Node.js and process metrics keep their names). */
const PREFIX = 'billing_';

/** From a millisecond to 10 s: most API requests take a few milliseconds. */
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const RPC_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The `route` of a request no route matched (an unknown path, a body refused before routing). */
export const UNMATCHED_ROUTE = 'unmatched';

/** Label values that are not known in advance are bounded: beyond these, `other`. */
const MAX_LABEL_VALUES = 64;
const LABEL_VALUE = /^[\w.:-]{1,64}$/;

/**
 * The service's metrics, in Prometheus' text format (docs/operations.md#metrics lists them).
 * One per app: its own prom-client `Registry` (never the global one, so that several apps in one
 * process keep theirs apart), with Node.js' and the process' default metrics.
 *
 * Counters and histograms are recorded where things happen, in memory (no I/O on the request
 * path). Gauges of state kept in the database or on the chain (backlogs, lags, balances) are read
 * only when Prometheus scrapes, by the sources the owning modules add (`addSource`): each read
 * is bounded in time, and one that fails or times out leaves its gauges at their last values and
 * counts an error, so a scrape never hangs on a slow dependency.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly logger = new Logger(Metrics.name);
  private readonly sources: ScrapeSource[] = [];
  private refreshing?: Promise<void>;
  private readonly rpcMethods = new BoundedLabel();
  private readonly rpcOutcomes = new BoundedLabel();

  private readonly httpRequests = this.counter('http_requests_total', {
    help: 'HTTP requests served, by method, route template and status',
    labelNames: ['method', 'route', 'status'],
  });
  private readonly httpDuration = new Histogram({
    name: `${PREFIX}http_request_duration_seconds`,
    help: 'Time from the first byte of a request to the end of its response',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: HTTP_BUCKETS,
    registers: [this.registry],
  });

  private readonly chargesClaimed = this.counter('charges_claimed_total', {
    help: 'Charge attempts taken up by charge runs: due periods claimed and stale attempts resumed',
  });
  private readonly charges = this.counter('charges_total', {
    help: 'Charge attempts settled by charge runs, by outcome',
    labelNames: ['outcome'],
  });
  private readonly chargeFailures = this.counter('charge_failures_total', {
    help: 'Charges that ended a subscription period unpaid, by failure class',
    labelNames: ['reason'],
  });
  private readonly subscriptionsDue = this.gauge('subscriptions_due', {
    help: 'Active subscriptions whose period is due and not yet charged',
  });
  private readonly chargeLag = this.gauge('charge_lag_seconds', {
    help: 'How long the oldest due subscription not yet charged has been due (0: none)',
  });

  private readonly cursors = this.gauge('watcher_cursors', {
    help: "The watchers' scan cursors, by kind",
    labelNames: ['kind'],
  });
  private readonly cursorsBehind = this.gauge('watcher_cursors_behind', {
    help: 'Cursors with a window of history still being read, by kind',
    labelNames: ['kind'],
  });
  private readonly cursorLag = this.gauge('watcher_lag_seconds', {
    help: 'Seconds since the least recently walked cursor of a kind was last taken up by a sweep',
    labelNames: ['kind'],
  });

  private readonly deliveryAttempts = this.counter('delivery_attempts_total', {
    help: 'Webhook and e-mail delivery attempts, by channel and outcome',
    labelNames: ['channel', 'outcome'],
  });
  private readonly deliveryBacklog = this.gauge('delivery_backlog', {
    help: 'Webhook deliveries and e-mails not delivered yet (pending), by channel',
    labelNames: ['channel'],
  });
  private readonly deliveryOldest = this.gauge('delivery_oldest_pending_age_seconds', {
    help: 'Age of the oldest pending delivery, by channel (0: none pending)',
    labelNames: ['channel'],
  });

  private readonly poolTotal = this.gauge('db_pool_clients', {
    help: 'Clients open in the database pool (in use and idle)',
  });
  private readonly poolIdle = this.gauge('db_pool_idle_clients', {
    help: 'Idle clients in the database pool',
  });
  private readonly poolWaiting = this.gauge('db_pool_waiting_requests', {
    help: 'Requests waiting for a client of the database pool',
  });
  private readonly poolMax = this.gauge('db_pool_max_clients', {
    help: 'The most clients the database pool opens (DATABASE_POOL_SIZE)',
  });

  private readonly serviceKeyBalance = this.gauge('service_key_balance_lamports', {
    help: "The service key's SOL balance, in lamports (read at most every few seconds)",
  });
  private readonly serviceKeySpent = this.counter('service_key_spent_lamports_total', {
    help: 'Network fees the service key paid for the charges it sent, in lamports',
  });

  private readonly sourceErrors = this.counter('metrics_source_errors_total', {
    help: 'Scrape-time reads that failed or timed out (their gauges kept their last values)',
    labelNames: ['source'],
  });

  private readonly rpcRequests = new Counter({
    name: 'solana_rpc_requests_total',
    help: 'Solana JSON-RPC requests, by method and outcome',
    labelNames: ['method', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly rpcDuration = new Histogram({
    name: 'solana_rpc_request_duration_seconds',
    help: 'Time of Solana JSON-RPC requests, by method',
    labelNames: ['method'] as const,
    buckets: RPC_BUCKETS,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    // Series known in advance start at 0, so a rate over them exists before the first event.
    for (const outcome of CHARGE_OUTCOMES) this.charges.inc({ outcome }, 0);
    for (const channel of ['webhook', 'email'] as const) {
      for (const outcome of ['delivered', 'retry', 'failed', 'skipped'] as const) {
        this.deliveryAttempts.inc({ channel, outcome }, 0);
      }
    }
  }

  /** The content type of `scrape`'s text (Prometheus' text format, version 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * Every metric in Prometheus' text format, the scrape-time sources read first (all at once,
   * each within its time; concurrent scrapes share one round of reads).
   */
  async scrape(): Promise<string> {
    this.refreshing ??= this.refresh().finally(() => (this.refreshing = undefined));
    await this.refreshing;
    return this.registry.metrics();
  }

  /**
   * Adds a read made at each scrape: `read` sets its gauges (through this class's setters). A
   * read that throws or takes longer than `timeoutMs` leaves them as they were and counts in
   * `billing_metrics_source_errors_total{source=name}`.
   */
  addSource(name: string, read: () => Promise<void>, options: ScrapeSourceOptions = {}): void {
    this.sources.push({
      name,
      read,
      timeoutMs: options.timeoutMs ?? 2_000,
      maxAgeMs: options.maxAgeMs ?? 0,
    });
  }

  /** One HTTP request, when its response is done (`status`: `aborted` if the client left). */
  observeHttpRequest(method: string, route: string, status: string, seconds: number): void {
    const labels = { method, route, status };
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, seconds);
  }

  /** Charge attempts a run took up. */
  chargesTakenUp(count: number): void {
    if (count > 0) this.chargesClaimed.inc(count);
  }

  /** What charge attempts came to (a run's counts, or one attempt's). */
  chargesSettled(counts: Readonly<Record<ChargeOutcome, number>>): void {
    for (const outcome of CHARGE_OUTCOMES) {
      if (counts[outcome] > 0) this.charges.inc({ outcome }, counts[outcome]);
    }
  }

  /**
   * A charge that ended its period unpaid: the subscription PastDue (insufficient funds, a
   * frozen account) or Completed (authorisation gone, term ended).
   */
  chargeFailed(reason: string): void {
    this.chargeFailures.inc({ reason });
  }

  /** Due subscriptions not yet charged, and how long the oldest has been due. */
  setChargeBacklog(due: number, lagSeconds: number): void {
    this.subscriptionsDue.set(due);
    this.chargeLag.set(lagSeconds);
  }

  /** The watchers' cursors of one kind: how many, how many still reading a window, and lag. */
  setWatcherCursors(kind: string, cursors: number, behind: number, lagSeconds: number): void {
    this.cursors.set({ kind }, cursors);
    this.cursorsBehind.set({ kind }, behind);
    this.cursorLag.set({ kind }, lagSeconds);
  }

  /** One delivery attempt of an outbox. */
  deliveryAttempt(channel: DeliveryChannel, outcome: DeliveryOutcome): void {
    this.deliveryAttempts.inc({ channel, outcome });
  }

  /** An outbox's pending rows and the age of its oldest one. */
  setDeliveryBacklog(channel: DeliveryChannel, pending: number, oldestAgeSeconds: number): void {
    this.deliveryBacklog.set({ channel }, pending);
    this.deliveryOldest.set({ channel }, oldestAgeSeconds);
  }

  /** The database pool's clients. */
  setPoolUsage(usage: { total: number; idle: number; waiting: number; max: number }): void {
    this.poolTotal.set(usage.total);
    this.poolIdle.set(usage.idle);
    this.poolWaiting.set(usage.waiting);
    this.poolMax.set(usage.max);
  }

  setServiceKeyBalance(lamports: bigint): void {
    this.serviceKeyBalance.set(Number(lamports));
  }

  /** Network fees the service key paid. */
  serviceKeyPaid(lamports: bigint): void {
    if (lamports > 0n) this.serviceKeySpent.inc(Number(lamports));
  }

  /**
   * One Solana JSON-RPC request, as the transport reports it (wired to its callback). Method
   * and outcome are bounded: a value that is not a short name, or one beyond the first 64
   * distinct values, is counted as `other`.
   */
  readonly recordRpcRequest: RpcRequestRecorder = (method, outcome, seconds) => {
    const m = this.rpcMethods.value(method);
    this.rpcRequests.inc({ method: m, outcome: this.rpcOutcomes.value(outcome) });
    if (Number.isFinite(seconds) && seconds >= 0) this.rpcDuration.observe({ method: m }, seconds);
  };

  private async refresh(): Promise<void> {
    await Promise.all(this.sources.map((source) => this.read(source)));
  }

  private async read(source: ScrapeSource): Promise<void> {
    const now = Date.now();
    if (source.readAt !== undefined && now - source.readAt < source.maxAgeMs) return;
    try {
      await withTimeout(
        source.read(),
        source.timeoutMs,
        `the ${source.name} metrics were not read within ${source.timeoutMs} ms`,
      );
      source.readAt = now;
    } catch (error) {
      this.sourceErrors.inc({ source: source.name });
      this.logger.warn({ err: error, source: source.name }, 'A metrics source could not be read');
    }
  }

  private counter<L extends string = never>(
    name: string,
    options: { help: string; labelNames?: readonly L[] },
  ): Counter<L> {
    return new Counter({ name: PREFIX + name, ...options, registers: [this.registry] });
  }

  private gauge<L extends string = never>(
    name: string,
    options: { help: string; labelNames?: readonly L[] },
  ): Gauge<L> {
    return new Gauge({ name: PREFIX + name, ...options, registers: [this.registry] });
  }
}

/** A label whose values come from elsewhere: short names only, and at most `MAX_LABEL_VALUES`. */
class BoundedLabel {
  private readonly seen = new Set<string>();

  value(raw: string): string {
    if (this.seen.has(raw)) return raw;
    if (!LABEL_VALUE.test(raw) || this.seen.size >= MAX_LABEL_VALUES) return 'other';
    this.seen.add(raw);
    return raw;
  }
}
