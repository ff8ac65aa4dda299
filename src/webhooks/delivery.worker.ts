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
import { DeliveryStatus } from '../events/entities/webhook-delivery.entity';
import { BackgroundWork } from '../common/background/background-work';
import { DELIVERY_CHANNEL } from '../events/events.service';
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

/** A finished attempt waiting for its result to be written. */
interface PendingResult {
  delivery: ClaimedDelivery;
  outcome: Outcome;
  at: Date;
  resolve: () => void;
  reject: (error: unknown) => void;
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
 * Delivers queued webhook events. Any number of instances run it on one database: each claims due
 * deliveries with `FOR UPDATE SKIP LOCKED` and leases them (`leased_until`, real time, under a
 * fresh `lock_token`), so no two instances attempt one delivery at once, and an instance that dies
 * mid-attempt leaves a claim that can be taken again when its lease ends.
 *
 * It wakes on NOTIFY when a delivery is queued (any instance), when an attempt finishes while
 * more work is waiting (the last claim was full, or a merchant that filled its share is back to
 * half of it), and every `WEBHOOK_POLL_INTERVAL_MS` for retries that come due. It keeps up to
 * `WEBHOOK_CONCURRENCY` POSTs in flight, at most a quarter of them for one merchant.
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
  /**
   * Merchants whose last claim filled their room (more of theirs may be due): the attempt that
   * brings one back to half its cap claims again.
   */
  private readonly atCap = new Set<string>();
  private running = false;
  private pumping?: Promise<void>;
  private wakeAgain = false;
  /** The last claim came back full: more may be due, so finishing an attempt claims again. */
  private backlog = false;
  /** Finished attempts whose results are not written yet, and whether a write is under way. */
  private readonly results: PendingResult[] = [];
  private writing = false;

  constructor(
    private readonly em: EntityManager,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly listener: PgListener,
    private readonly sender: WebhookSender,
    private readonly background: BackgroundWork,
  ) {
    this.leaseMs = Math.max(60_000, 3 * config.WEBHOOK_TIMEOUT_MS);
    this.perMerchantCap = Math.max(1, Math.floor(config.WEBHOOK_CONCURRENCY / 4));
  }

  onModuleInit(): void {
    if (!this.background.enabled) return;
    this.listener.subscribe(DELIVERY_CHANNEL, {
      onMessage: () => this.wake(),
      onUp: () => this.wake(),
    });
  }

  onApplicationBootstrap(): void {
    if (!this.background.enabled) return;
    this.running = true;
    this.background.every('webhook-delivery', this.config.WEBHOOK_POLL_INTERVAL_MS, () =>
      this.wake(),
    );
    this.wake();
  }

  /** Stops claiming, then lets the attempts under way finish and record their results. */
  async beforeApplicationShutdown(): Promise<void> {
    this.running = false;
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
        const busy = new Map(this.inFlightByMerchant);
        let claimed: ClaimedDelivery[];
        try {
          claimed = await this.claim(free, busy);
        } catch (error) {
          this.logger.warn({ err: error }, 'Could not claim webhook deliveries; will retry');
          return;
        }
        this.backlog = claimed.length === free;
        for (const delivery of claimed) {
          this.start(delivery);
          const merchant = delivery.merchant_id;
          const count = (busy.get(merchant) ?? 0) + 1;
          busy.set(merchant, count);
          if (count >= this.perMerchantCap) this.atCap.add(merchant);
        }
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
      // More may be due: the last claim was full, or this merchant reached its cap and now has
      // half of it free again (claiming per finished attempt would cost a query each).
      const released = this.atCap.has(merchant) && left <= Math.floor(this.perMerchantCap / 2);
      if (released) this.atCap.delete(merchant);
      if (this.backlog || released) this.wake();
    });
    this.inFlight.add(task);
  }

  /**
   * Leases up to `limit` due deliveries and returns them with their event and endpoint. Due is
   * domain time; the lease is the database's real time. A merchant already at its cap on this
   * instance is passed over, and no merchant gets more than its remaining room in one batch.
   */
  private async claim(limit: number, inFlight: Map<string, number>): Promise<ClaimedDelivery[]> {
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
   * Queues the result for the next batched write and resolves once it is written. Results that
   * finish while a write is under way go together in the next one: one commit for many attempts.
   */
  private complete(delivery: ClaimedDelivery, outcome: Outcome): Promise<void> {
    return new Promise((resolve, reject) => {
      this.results.push({ delivery, outcome, at: this.clock.now(), resolve, reject });
      if (!this.writing) {
        this.writing = true;
        setImmediate(() => void this.writeResults());
      }
    });
  }

  private async writeResults(): Promise<void> {
    while (this.results.length > 0) {
      const batch = this.results.splice(0, RESULT_BATCH);
      try {
        await this.writeBatch(batch);
        for (const result of batch) result.resolve();
      } catch (error) {
        for (const result of batch) result.reject(error);
      }
    }
    this.writing = false;
  }

  /**
   * Writes each result, unless its lease was lost to another instance meanwhile. A skipped
   * delivery sent nothing: its attempt is not counted and the last real attempt's details stay.
   */
  private async writeBatch(batch: PendingResult[]): Promise<void> {
    const rows = batch.map(({ delivery, outcome, at }) => ({
      id: delivery.id,
      lock_token: delivery.lock_token,
      status: outcome.status,
      error: outcome.error?.slice(0, 500) ?? null,
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
    for (const { delivery, outcome } of batch) {
      if (outcome.status !== 'failed') continue;
      this.logger.warn(
        { deliveryId: delivery.id, eventId: `evt_${delivery.event_id}`, error: outcome.error },
        'Webhook delivery failed after its retry window',
      );
    }
  }
}
