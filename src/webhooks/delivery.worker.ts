import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { BackgroundWork } from '../common/background/background-work';
import { Clock } from '../common/clock';
import { AppConfig } from '../config/app-config';
import { PgListener } from '../database/pg-listener';
import { DeliveryStatus } from '../events/entities/webhook-delivery.entity';
import { DELIVERY_CHANNEL } from '../events/events.service';
import { OutboxResult, OutboxWorker, outboxLeaseMs, storableError } from '../outbox/outbox-worker';
import { nextAttemptAt, parseRetryAfter } from './retry-schedule';
import { EVENT_ID_HEADER, EVENT_TYPE_HEADER, SIGNATURE_HEADER, signatureHeader } from './signature';
import { WebhookSender } from './webhook-sender';

/** A claimed delivery with everything needed to attempt it. */
interface ClaimedDelivery {
  id: string;
  merchant_id: string;
  lock_token: string;
  attempts: number;
  /** Timestamps arrive as strings from MikroORM's connection. */
  created_at: string;
  event_id: string;
  type: string;
  payload: string;
  webhook_url: string | null;
  webhook_secret: string;
  previous_webhook_secret: string | null;
  previous_webhook_secret_expires_at: string | null;
}

/** At most this many results go in one UPDATE. */
const RESULT_BATCH = 500;

interface Outcome {
  status: DeliveryStatus;
  httpStatus: number | null;
  error: string | null;
  next: Date | null;
}

const USER_AGENT = 'StablecoinBilling-Webhooks/1.0';

/**
 * Delivers queued webhook events through the shared outbox loop (`OutboxWorker`: claim with
 * `SKIP LOCKED`, lease, wake on NOTIFY, batched results). It wakes when a delivery is queued (any
 * instance), when an attempt finishes while more work is waiting, and every
 * `WEBHOOK_POLL_INTERVAL_MS` for retries that come due. It keeps up to `WEBHOOK_CONCURRENCY`
 * POSTs in flight, at most a quarter of them for one merchant, so one slow endpoint cannot hog
 * it. Scheduling uses the domain clock; leases, signature timestamps and HTTP timeouts real time.
 */
@Injectable()
export class WebhookDeliveryWorker extends OutboxWorker<ClaimedDelivery, Outcome> {
  protected readonly logger = new Logger(WebhookDeliveryWorker.name);
  private readonly leaseMs: number;
  private readonly perMerchantCap: number;

  constructor(
    private readonly em: EntityManager,
    clock: Clock,
    config: AppConfig,
    listener: PgListener,
    private readonly sender: WebhookSender,
    background: BackgroundWork,
  ) {
    const perMerchantCap = Math.max(1, Math.floor(config.WEBHOOK_CONCURRENCY / 4));
    super(
      {
        name: 'webhook-delivery',
        channel: DELIVERY_CHANNEL,
        pollIntervalMs: config.WEBHOOK_POLL_INTERVAL_MS,
        concurrency: config.WEBHOOK_CONCURRENCY,
        minClaim: Math.max(1, Math.floor(config.WEBHOOK_CONCURRENCY / 4)),
        fairness: { key: (delivery) => delivery.merchant_id, cap: perMerchantCap },
        resultBatch: RESULT_BATCH,
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
  protected async claim(
    limit: number,
    inFlight: ReadonlyMap<string, number>,
  ): Promise<ClaimedDelivery[]> {
    const now = this.clock.now();
    const busy = JSON.stringify(Object.fromEntries(inFlight));
    const cap = this.perMerchantCap;
    // Choose without locking (a merchant's room bounds its share), then lock only the chosen
    // rows: locking candidates that end up unclaimed would cost a write each.
    return this.em.getConnection().execute<ClaimedDelivery[]>(
      `WITH candidates AS (
         SELECT id, merchant_id, next_attempt_at FROM webhook_deliveries
          WHERE status = 'pending' AND next_attempt_at <= ?
            AND (leased_until IS NULL OR leased_until < now())
            AND COALESCE((?::jsonb ->> merchant_id::text)::int, 0) < ?
          ORDER BY next_attempt_at
          LIMIT ?
       ), chosen AS (
         SELECT id FROM (
           SELECT id, next_attempt_at,
                  row_number() OVER (PARTITION BY merchant_id ORDER BY next_attempt_at) AS rn,
                  ? - COALESCE((?::jsonb ->> merchant_id::text)::int, 0) AS room
             FROM candidates
         ) ranked
          WHERE rn <= room
          ORDER BY next_attempt_at
          LIMIT ?
       ), due AS (
         SELECT d.id FROM webhook_deliveries d
           JOIN chosen ON chosen.id = d.id
          WHERE d.status = 'pending' AND (d.leased_until IS NULL OR d.leased_until < now())
            FOR UPDATE OF d SKIP LOCKED
       ), claimed AS (
         UPDATE webhook_deliveries d
            SET attempts = d.attempts + 1, lock_token = ?, updated_at = ?,
                leased_until = now() + ? * interval '1 millisecond'
           FROM due WHERE d.id = due.id
         RETURNING d.id, d.merchant_id, d.lock_token, d.attempts, d.created_at, d.event_id
       )
       SELECT c.id, c.merchant_id, c.lock_token, c.attempts, c.created_at, c.event_id, e.type,
              e.payload::text AS payload, m.webhook_url, m.webhook_secret,
              m.previous_webhook_secret, m.previous_webhook_secret_expires_at
         FROM claimed c
         JOIN events e ON e.id = c.event_id
         JOIN merchants m ON m.id = c.merchant_id`,
      [
        now,
        busy,
        cap,
        Math.min(limit * 4, 1000),
        cap,
        busy,
        limit,
        randomUUID(),
        now,
        this.leaseMs,
      ],
    );
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
    await this.em.getConnection().execute(
      `UPDATE webhook_deliveries d
          SET status = r.status,
              attempts = CASE WHEN r.status = 'skipped' THEN d.attempts - 1 ELSE d.attempts END,
              last_error = r.error,
              last_http_status =
                CASE WHEN r.status = 'skipped' THEN d.last_http_status ELSE r.http_status END,
              last_attempt_at = CASE WHEN r.status = 'skipped' THEN d.last_attempt_at ELSE r.at END,
              next_attempt_at = r.next_attempt_at,
              delivered_at = CASE WHEN r.status = 'delivered' THEN r.at END,
              lock_token = NULL, leased_until = NULL, updated_at = r.at
         FROM jsonb_to_recordset(?::jsonb) AS r(id uuid, lock_token uuid, status text,
              error text, http_status smallint, next_attempt_at timestamptz, at timestamptz)
        WHERE d.id = r.id AND d.lock_token = r.lock_token`,
      [JSON.stringify(rows)],
    );
    for (const { job: delivery, outcome } of batch) {
      if (outcome.status !== 'failed') continue;
      this.logger.warn(
        { deliveryId: delivery.id, eventId: `evt_${delivery.event_id}`, error: outcome.error },
        'Webhook delivery failed after its retry window',
      );
    }
  }
}
