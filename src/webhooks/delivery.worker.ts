import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { BackgroundWork } from '../common/background/background-work';
import { Clock } from '../common/clock';
import { AppConfig } from '../config/app-config';
import { PgListener } from '../database/pg-listener';
import { DeliveryStatus } from '../events/delivery-status';
import { DeliveryOutcome, Metrics } from '../metrics/metrics';
import {
  HANDED_BACK_ERROR,
  OutboxResult,
  OutboxWorker,
  outboxLeaseMs,
  storableError,
} from '../outbox/outbox-worker';
import { nextAttemptAt, parseRetryAfter } from './retry-schedule';
import { EVENT_ID_HEADER, EVENT_TYPE_HEADER, SIGNATURE_HEADER, signatureHeader } from './signature';
import {
  ClaimedDeliveryRow as ClaimedDelivery,
  DELIVERY_CHANNEL,
  WebhookDeliveriesRepository,
} from './webhook-deliveries.repository';
import { WebhookSender } from './webhook-sender';

/** At most this many results go in one UPDATE. */
const RESULT_BATCH = 500;
/**
 * Results are written at most once per this many ms: the attempts finishing meanwhile share the
 * write (one statement and one commit for a couple of dozen at a thousand deliveries a second).
 */
const RESULT_INTERVAL_MS = 25;

/**
 * A merchant's endpoint answers fast when its POSTs are answered 2xx within this: then, with a
 * backlog, it may use the slots no other merchant's share needs (`OutboxOptions.fairness`).
 */
const BURST_FAST_MS = 1_000;

interface Outcome {
  status: DeliveryStatus;
  httpStatus: number | null;
  error: string | null;
  next: Date | null;
}

const USER_AGENT = 'StablecoinBilling-Webhooks/1.0';

/** How each status of an attempt counts in `billing_delivery_attempts_total`. */
const METRIC_OUTCOME: Record<DeliveryStatus, DeliveryOutcome> = {
  delivered: 'delivered',
  pending: 'retry',
  failed: 'failed',
  skipped: 'skipped',
};

/**
 * Delivers queued webhook events through the shared outbox loop (`OutboxWorker`: claim with
 * `SKIP LOCKED`, lease, wake on NOTIFY, batched results). It wakes when a delivery is queued (any
 * instance), when an attempt finishes while more work is waiting, and every
 * `WEBHOOK_POLL_INTERVAL_MS` for retries that come due. It keeps up to `WEBHOOK_CONCURRENCY`
 * POSTs in flight; a merchant's share is a quarter of them, so one slow endpoint cannot hog it,
 * and a merchant whose endpoint answers fast may burst into the slots no share needs (up to
 * three quarters: `BURST_FAST_MS`). Scheduling uses the domain clock; leases, signature
 * timestamps and HTTP timeouts real time.
 */
@Injectable()
export class WebhookDeliveryWorker extends OutboxWorker<ClaimedDelivery, Outcome> {
  protected readonly logger = new Logger(WebhookDeliveryWorker.name);
  private readonly leaseMs: number;
  private readonly perMerchantCap: number;

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    clock: Clock,
    config: AppConfig,
    listener: PgListener,
    private readonly sender: WebhookSender,
    background: BackgroundWork,
    private readonly metrics: Metrics,
  ) {
    const perMerchantCap = Math.max(1, Math.floor(config.WEBHOOK_CONCURRENCY / 4));
    super(
      {
        name: 'webhook-delivery',
        channel: DELIVERY_CHANNEL,
        pollIntervalMs: config.WEBHOOK_POLL_INTERVAL_MS,
        concurrency: config.WEBHOOK_CONCURRENCY,
        minClaim: Math.max(1, Math.floor(config.WEBHOOK_CONCURRENCY / 4)),
        fairness: {
          key: (delivery) => delivery.merchant_id,
          cap: perMerchantCap,
          burst: { fastMs: BURST_FAST_MS, answered: (outcome) => outcome.status === 'delivered' },
        },
        resultBatch: RESULT_BATCH,
        resultIntervalMs: RESULT_INTERVAL_MS,
      },
      clock,
      listener,
      background,
    );
    this.leaseMs = outboxLeaseMs(config.WEBHOOK_TIMEOUT_MS);
    this.perMerchantCap = perMerchantCap;
  }

  /**
   * Leases up to `limit` due deliveries and returns them with their event and endpoint. Due is
   * domain time; the lease is the database's real time. A merchant already at its cap on this
   * instance is passed over, and no merchant gets more than its remaining room in one batch.
   */
  protected claim(
    limit: number,
    inFlight: ReadonlyMap<string, number>,
  ): Promise<ClaimedDelivery[]> {
    return this.deliveries.claim({
      now: this.clock.now(),
      limit,
      // Twice the slots to fill: rows past a merchant's room are passed over, and each candidate
      // costs a heap read (four times as many made the claim's scan half its cost).
      candidates: Math.min(limit * 2, 1000),
      inFlight,
      perMerchantCap: this.perMerchantCap,
      lockToken: randomUUID(),
      leaseMs: this.leaseMs,
    });
  }

  protected async send(delivery: ClaimedDelivery): Promise<Outcome> {
    if (!delivery.webhook_url) {
      return { status: 'skipped', httpStatus: null, error: 'No webhook endpoint', next: null };
    }
    const timestamp = Math.floor(Date.now() / 1000); // real time: receivers compare with theirs
    const result = await this.sender.post(delivery.webhook_url, delivery.payload, {
      'user-agent': USER_AGENT,
      [SIGNATURE_HEADER]: signatureHeader(this.secrets(delivery), timestamp, delivery.payload),
      [EVENT_ID_HEADER]: `evt_${delivery.event_id}`,
      [EVENT_TYPE_HEADER]: delivery.type,
    });
    const httpStatus = result.status ?? null;
    if (httpStatus !== null && httpStatus >= 200 && httpStatus < 300) {
      return { status: 'delivered', httpStatus, error: null, next: null };
    }
    const now = this.clock.now();
    const next = nextAttemptAt({
      attempt: delivery.attempts,
      createdAt: new Date(delivery.created_at),
      now,
      // An HTTP date in Retry-After is the receiver's real time.
      retryAfterMs: parseRetryAfter(result.retryAfter, Date.now()),
    });
    return {
      status: next ? 'pending' : 'failed',
      httpStatus,
      error: result.error ?? null,
      next,
    };
  }

  protected override attempted(_delivery: ClaimedDelivery, outcome: Outcome): void {
    this.metrics.deliveryAttempt('webhook', METRIC_OUTCOME[outcome.status]);
  }

  /**
   * Makes abandoned deliveries due again now, leases ended, each only while its `lock_token`
   * still holds it. Their POSTs stay counted, recorded as attempts without an answer.
   */
  protected handBack(deliveries: readonly ClaimedDelivery[]): Promise<string[]> {
    return this.deliveries.handBack(deliveries, this.clock.now(), HANDED_BACK_ERROR);
  }

  /** The current secret, and the rotated-out one during its grace period (DESIGN D13). */
  private secrets(delivery: ClaimedDelivery): string[] {
    const previous = delivery.previous_webhook_secret;
    const expires = delivery.previous_webhook_secret_expires_at;
    return previous && expires && new Date(expires) > this.clock.now()
      ? [delivery.webhook_secret, previous]
      : [delivery.webhook_secret];
  }

  /**
   * Writes each result, unless its lease was lost to another instance meanwhile. A skipped
   * delivery sent nothing: its attempt is not counted and the last real attempt's details stay.
   */
  protected async write(batch: readonly OutboxResult<ClaimedDelivery, Outcome>[]): Promise<void> {
    const rows = batch.map(({ job: delivery, outcome, at }) => ({
      id: delivery.id,
      lock_token: delivery.lock_token,
      status: outcome.status,
      error: storableError(outcome.error),
      http_status: outcome.httpStatus,
      next_attempt_at: outcome.next?.toISOString() ?? null,
      at: at.toISOString(),
    }));
    await this.deliveries.writeResults(rows);
    for (const { job: delivery, outcome } of batch) {
      if (outcome.status !== 'failed') continue;
      this.logger.warn(
        { deliveryId: delivery.id, eventId: `evt_${delivery.event_id}`, error: outcome.error },
        'Webhook delivery failed after its retry window',
      );
    }
  }
}
