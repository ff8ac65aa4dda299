import { EntityManager } from '@mikro-orm/postgresql';
import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleInit,
} from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock } from '../common/clock';
import { AppConfig } from '../config/app-config';
import { PgListener } from '../database/pg-listener';
import { DeliveryStatus } from './entities/webhook-delivery.entity';
import { DELIVERY_CHANNEL } from './events.service';
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

interface Outcome {
  status: DeliveryStatus;
  httpStatus: number | null;
  error: string | null;
  next: Date | null;
}

const USER_AGENT = 'StablecoinBilling-Webhooks/1.0';

/**
 * Delivers queued webhook events. Any number of instances run it on one database: each claims due
 * deliveries with `FOR UPDATE SKIP LOCKED` and leases them (`leased_until`, real time, under a
 * fresh `lock_token`), so no two instances attempt one delivery at once, and an instance that dies
 * mid-attempt leaves a claim that can be taken again when its lease ends.
 *
 * It wakes on NOTIFY when a delivery is queued (any instance), when an attempt finishes while
 * more work is waiting, and every `WEBHOOK_POLL_INTERVAL_MS` for retries that come due. It keeps
 * up to `WEBHOOK_CONCURRENCY` POSTs in flight, at most a quarter of them for one merchant.
 * Scheduling uses the domain clock; leases, signature timestamps and HTTP timeouts real time.
 */
@Injectable()
export class WebhookDeliveryWorker
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new Logger(WebhookDeliveryWorker.name);
  private readonly leaseMs: number;
  private readonly inFlight = new Set<Promise<void>>();
  /** Attempts in flight per merchant on this instance, capped so one slow endpoint cannot hog it. */
  private readonly inFlightByMerchant = new Map<string, number>();
  private readonly perMerchantCap: number;
  private running = false;
  private pumping?: Promise<void>;
  private wakeAgain = false;
  /** The last claim came back full: more may be due, so finishing an attempt claims again. */
  private backlog = false;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly em: EntityManager,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly listener: PgListener,
    private readonly sender: WebhookSender,
  ) {
    this.leaseMs = Math.max(60_000, 3 * config.WEBHOOK_TIMEOUT_MS);
    this.perMerchantCap = Math.max(1, Math.floor(config.WEBHOOK_CONCURRENCY / 4));
  }

  onModuleInit(): void {
    if (!this.config.runsWorkers) return;
    this.listener.subscribe(DELIVERY_CHANNEL, {
      onMessage: () => this.wake(),
      onUp: () => this.wake(),
    });
  }

  onApplicationBootstrap(): void {
    if (!this.config.runsWorkers) return;
    this.running = true;
    this.timer = setInterval(() => this.wake(), this.config.WEBHOOK_POLL_INTERVAL_MS);
    this.timer.unref();
    this.wake();
  }

  /** Stops claiming, then lets the attempts under way finish and record their results. */
  async beforeApplicationShutdown(): Promise<void> {
    this.running = false;
    clearInterval(this.timer);
    await this.pumping;
    await Promise.allSettled([...this.inFlight]);
  }

  private wake(): void {
    if (!this.running) return;
    if (this.pumping) {
      this.wakeAgain = true;
      return;
    }
    this.pumping = this.pump().finally(() => {
      this.pumping = undefined;
    });
  }

  private async pump(): Promise<void> {
    do {
      this.wakeAgain = false;
      while (this.running) {
        const free = this.config.WEBHOOK_CONCURRENCY - this.inFlight.size;
        // Claim in batches rather than one row per finished attempt, unless idle.
        if (free <= 0 || (this.inFlight.size > 0 && free < this.minClaim())) {
          this.backlog = true; // finishing attempts wake the pump again
          break;
        }
        let claimed: ClaimedDelivery[];
        try {
          claimed = await this.claim(free);
        } catch (error) {
          this.logger.warn({ err: error }, 'Could not claim webhook deliveries; will retry');
          return;
        }
        this.backlog = claimed.length === free;
        for (const delivery of claimed) this.start(delivery);
        if (!this.backlog) break;
      }
    } while (this.wakeAgain && this.running);
  }

  private minClaim(): number {
    return Math.max(1, Math.floor(this.config.WEBHOOK_CONCURRENCY / 4));
  }

  private start(delivery: ClaimedDelivery): void {
    const merchant = delivery.merchant_id;
    this.inFlightByMerchant.set(merchant, (this.inFlightByMerchant.get(merchant) ?? 0) + 1);
    const task = this.attempt(delivery).finally(() => {
      this.inFlight.delete(task);
      const left = (this.inFlightByMerchant.get(merchant) ?? 1) - 1;
      if (left > 0) this.inFlightByMerchant.set(merchant, left);
      else this.inFlightByMerchant.delete(merchant);
      if (this.backlog) this.wake();
    });
    this.inFlight.add(task);
  }

  /**
   * Leases up to `limit` due deliveries and returns them with their event and endpoint. Due is
   * domain time; the lease is the database's real time. A merchant already at its cap on this
   * instance is passed over, and no merchant gets more than its remaining room in one batch.
   */
  private async claim(limit: number): Promise<ClaimedDelivery[]> {
    const now = this.clock.now();
    const busy = JSON.stringify(Object.fromEntries(this.inFlightByMerchant));
    const cap = this.perMerchantCap;
    return this.em.getConnection().execute<ClaimedDelivery[]>(
      `WITH candidates AS (
         SELECT id, merchant_id, next_attempt_at FROM webhook_deliveries
          WHERE status = 'pending' AND next_attempt_at <= ?
            AND (leased_until IS NULL OR leased_until < now())
            AND COALESCE((?::jsonb ->> merchant_id::text)::int, 0) < ?
          ORDER BY next_attempt_at
          LIMIT ?
          FOR UPDATE SKIP LOCKED
       ), due AS (
         SELECT id FROM (
           SELECT id, next_attempt_at,
                  row_number() OVER (PARTITION BY merchant_id ORDER BY next_attempt_at) AS rn,
                  ? - COALESCE((?::jsonb ->> merchant_id::text)::int, 0) AS room
             FROM candidates
         ) ranked
          WHERE rn <= room
          ORDER BY next_attempt_at
          LIMIT ?
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

  /** One POST, and its result recorded. Never throws. */
  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    try {
      const outcome = await this.send(delivery);
      await this.complete(delivery, outcome);
    } catch (error) {
      // The lease runs out and another attempt follows: at least once, never lost.
      this.logger.error({ err: error, deliveryId: delivery.id }, 'Webhook attempt not recorded');
    }
  }

  private async send(delivery: ClaimedDelivery): Promise<Outcome> {
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
   * Writes the result, unless the lease was lost to another instance meanwhile. A skipped
   * delivery sent nothing: its attempt is not counted and the last real attempt's details stay.
   */
  private async complete(delivery: ClaimedDelivery, outcome: Outcome): Promise<void> {
    const now = this.clock.now();
    const result =
      outcome.status === 'skipped'
        ? `attempts = attempts - 1, last_error = ?`
        : `last_error = ?, last_http_status = ?, last_attempt_at = ?`;
    const resultParams =
      outcome.status === 'skipped'
        ? [outcome.error]
        : [outcome.error?.slice(0, 500) ?? null, outcome.httpStatus, now];
    await this.em.getConnection().execute(
      `UPDATE webhook_deliveries
          SET status = ?, ${result}, next_attempt_at = ?, delivered_at = ?,
              lock_token = NULL, leased_until = NULL, updated_at = ?
        WHERE id = ? AND lock_token = ?`,
      [
        outcome.status,
        ...resultParams,
        outcome.next,
        outcome.status === 'delivered' ? now : null,
        now,
        delivery.id,
        delivery.lock_token,
      ],
    );
    if (outcome.status === 'failed') {
      this.logger.warn(
        { deliveryId: delivery.id, eventId: `evt_${delivery.event_id}`, error: outcome.error },
        'Webhook delivery failed after its retry window',
      );
    }
  }
}
