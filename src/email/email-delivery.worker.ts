import { EntityManager } from '@mikro-orm/postgresql';
import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleInit,
} from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { BackgroundWork } from '../common/background/background-work';
import { Clock } from '../common/clock';
import { AppConfig } from '../config/app-config';
import { PgListener } from '../database/pg-listener';
import { isoTimestamp } from '../database/sql';
import { EMAIL_CHANNEL } from './email-outbox.service';
import { EmailSender, POOL_CONNECTIONS } from './email-sender';
import { EmailStatus } from './entities/email-message.entity';
import { nextAttemptAt } from './retry-schedule';

/** A claimed message with everything needed to send it. */
interface ClaimedEmail {
  id: string;
  merchant_id: string;
  invoice_id: string | null;
  lock_token: string;
  attempts: number;
  /** ISO 8601 UTC, formatted by PostgreSQL. */
  created_at: string;
  recipient: string;
  subject: string;
  text_body: string;
  html_body: string;
}

interface Outcome {
  status: EmailStatus;
  error: string | null;
  next: Date | null;
}

/** Sends in flight per instance: the pool's connections, and as many waiting for one. */
const MAX_IN_FLIGHT = 2 * POOL_CONNECTIONS;
const NOT_CONFIGURED = 'E-mail sending is not configured on this service';

/**
 * Sends queued e-mail. Any number of instances run it on one database: each claims due messages
 * with `FOR UPDATE SKIP LOCKED` and leases them (`leased_until`, real time, under a fresh
 * `lock_token`), so no two instances send one message at once, and a message whose instance died
 * mid-send is taken again when its lease ends (at least once; the `Message-ID` stays the same).
 *
 * It wakes on NOTIFY when a message is queued (any instance), when a send finishes while more
 * may be due, and every `EMAIL_POLL_INTERVAL_MS` for retries that come due. Without `SMTP_URL`
 * it still takes messages up, to mark them `not_sent` and log who they were for.
 * Scheduling uses the domain clock; leases and the send timeout real time.
 */
@Injectable()
export class EmailDeliveryWorker
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new Logger(EmailDeliveryWorker.name);
  private readonly leaseMs: number;
  private readonly inFlight = new Set<Promise<void>>();
  private running = false;
  private pumping?: Promise<void>;
  private wakeAgain = false;
  /** The last claim came back full: more may be due, so finishing a send claims again. */
  private backlog = false;

  constructor(
    private readonly em: EntityManager,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly listener: PgListener,
    private readonly sender: EmailSender,
    private readonly background: BackgroundWork,
  ) {
    this.leaseMs = Math.max(60_000, 3 * config.EMAIL_SEND_TIMEOUT_MS);
  }

  onModuleInit(): void {
    if (!this.background.enabled) return;
    this.listener.subscribe(EMAIL_CHANNEL, {
      onMessage: () => this.wake(),
      onUp: () => this.wake(),
    });
  }

  onApplicationBootstrap(): void {
    if (!this.background.enabled) return;
    this.running = true;
    this.background.every('email-delivery', this.config.EMAIL_POLL_INTERVAL_MS, () => this.wake());
    this.wake();
  }

  /** Stops claiming, then lets the sends under way finish and record their results. */
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
        const free = MAX_IN_FLIGHT - this.inFlight.size;
        if (free <= 0) {
          this.backlog = true; // finishing sends wake the pump again
          break;
        }
        let claimed: ClaimedEmail[];
        try {
          claimed = await this.claim(free);
        } catch (error) {
          this.logger.warn({ err: error }, 'Could not claim e-mail; will retry');
          return;
        }
        this.backlog = claimed.length === free;
        for (const email of claimed) this.start(email);
        if (!this.backlog) break;
      }
    } while (this.wakeAgain && this.running);
  }

  private start(email: ClaimedEmail): void {
    const task = this.attempt(email).finally(() => {
      this.inFlight.delete(task);
      if (this.backlog) this.wake();
    });
    this.inFlight.add(task);
  }

  /**
   * Leases up to `limit` due messages, oldest due first, counting the attempt. Due is domain
   * time; the lease is the database's real time, so moving the domain clock never frees it.
   */
  private claim(limit: number): Promise<ClaimedEmail[]> {
    const now = this.clock.now();
    return this.em.getConnection().execute<ClaimedEmail[]>(
      `WITH due AS (
         SELECT id FROM email_outbox
          WHERE status = 'pending' AND next_attempt_at <= ?
            AND (leased_until IS NULL OR leased_until < now())
          ORDER BY next_attempt_at
          LIMIT ?
            FOR UPDATE SKIP LOCKED
       )
       UPDATE email_outbox e
          SET attempts = e.attempts + 1, lock_token = ?, updated_at = ?,
              leased_until = now() + ? * interval '1 millisecond'
         FROM due WHERE e.id = due.id
       RETURNING e.id, e.merchant_id, e.invoice_id, e.lock_token, e.attempts,
                 ${isoTimestamp('e.created_at', 'created_at')}, e.recipient, e.subject,
                 e.text_body, e.html_body`,
      [now, limit, randomUUID(), now, this.leaseMs],
    );
  }

  /** One send, and its result recorded. Never throws. */
  private async attempt(email: ClaimedEmail): Promise<void> {
    try {
      const outcome = await this.send(email);
      await this.record(email, outcome);
    } catch (error) {
      // The lease runs out and another attempt follows: at least once, never lost.
      this.logger.error({ err: error, emailId: email.id }, 'E-mail attempt not recorded');
    }
  }

  private async send(email: ClaimedEmail): Promise<Outcome> {
    if (!this.sender.configured) {
      // Who and what, never the body: it may hold more than an operator needs to see.
      this.logger.log(
        {
          emailId: email.id,
          merchantId: email.merchant_id,
          invoiceId: email.invoice_id,
          to: email.recipient,
          subject: email.subject,
        },
        'E-mail not sent: no SMTP server is configured (SMTP_URL)',
      );
      return { status: 'not_sent', error: NOT_CONFIGURED, next: null };
    }
    const result = await this.sender.send({
      id: email.id,
      to: email.recipient,
      subject: email.subject,
      text: email.text_body,
      html: email.html_body,
    });
    if (result.ok) return { status: 'sent', error: null, next: null };
    if (result.permanent) return { status: 'failed', error: result.error, next: null };
    const next = nextAttemptAt({
      attempt: email.attempts,
      createdAt: new Date(email.created_at),
      now: this.clock.now(),
    });
    return { status: next ? 'pending' : 'failed', error: result.error, next };
  }

  /**
   * Writes the result, unless the lease was lost to another instance meanwhile. A message not
   * sent for want of SMTP made no attempt, so its claim is not counted.
   */
  private async record(email: ClaimedEmail, outcome: Outcome): Promise<void> {
    const at = this.clock.now();
    await this.em.getConnection().execute(
      `UPDATE email_outbox
          SET status = ?,
              attempts = CASE WHEN ? = 'not_sent' THEN attempts - 1 ELSE attempts END,
              last_error = ?, next_attempt_at = ?,
              sent_at = CASE WHEN ? = 'sent' THEN ?::timestamptz END,
              lock_token = NULL, leased_until = NULL, updated_at = ?
        WHERE id = ? AND lock_token = ?`,
      [
        outcome.status,
        outcome.status,
        outcome.error?.slice(0, 500) ?? null,
        outcome.next,
        outcome.status,
        at,
        at,
        email.id,
        email.lock_token,
      ],
    );
    if (outcome.status === 'failed') {
      this.logger.warn(
        { emailId: email.id, merchantId: email.merchant_id, error: outcome.error },
        'E-mail failed: refused for good, or not accepted within its retry window',
      );
    }
  }
}
