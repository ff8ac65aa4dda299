import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { BackgroundWork } from '../common/background/background-work';
import { Clock } from '../common/clock';
import { AppConfig } from '../config/app-config';
import { PgListener } from '../database/pg-listener';
import { DeliveryOutcome, Metrics } from '../metrics/metrics';
import {
  HANDED_BACK_ERROR,
  OutboxResult,
  OutboxWorker,
  outboxLeaseMs,
  storableError,
} from '../outbox/outbox-worker';
import { ClaimedEmailRow, EMAIL_CHANNEL, EmailOutboxRepository } from './email-outbox.repository';
import { EmailSender, POOL_CONNECTIONS } from './email-sender';
import { EmailStatus } from './entities/email-message.entity';
import { nextAttemptAt } from './retry-schedule';

type ClaimedEmail = ClaimedEmailRow;

interface Outcome {
  status: EmailStatus;
  error: string | null;
  next: Date | null;
}

/** How each status of an attempt counts in `billing_delivery_attempts_total`. */
const METRIC_OUTCOME: Record<EmailStatus, DeliveryOutcome> = {
  sent: 'delivered',
  pending: 'retry',
  failed: 'failed',
  not_sent: 'skipped',
};

/** Sends in flight per instance: the pool's connections, and as many waiting for one. */
const MAX_IN_FLIGHT = 2 * POOL_CONNECTIONS;
/** At most this many results go in one UPDATE. */
const RESULT_BATCH = 100;
const NOT_CONFIGURED = 'E-mail sending is not configured on this service';

/**
 * Sends queued e-mail through the shared outbox loop (`OutboxWorker`: claim with `SKIP LOCKED`,
 * lease, wake on NOTIFY, batched results; a message whose instance died mid-send is taken again
 * when its lease ends: at least once, the `Message-ID` stays the same). It wakes when a message
 * is queued (any instance), when a send finishes while more may be due, and every
 * `EMAIL_POLL_INTERVAL_MS` for retries that come due. Without `SMTP_URL` it still takes messages
 * up, to mark them `not_sent` and log who they were for. Scheduling uses the domain clock; leases
 * and the send timeout real time.
 */
@Injectable()
export class EmailDeliveryWorker extends OutboxWorker<ClaimedEmail, Outcome> {
  protected readonly logger = new Logger(EmailDeliveryWorker.name);
  private readonly leaseMs: number;

  constructor(
    private readonly outbox: EmailOutboxRepository,
    clock: Clock,
    config: AppConfig,
    listener: PgListener,
    private readonly sender: EmailSender,
    background: BackgroundWork,
    private readonly metrics: Metrics,
  ) {
    super(
      {
        name: 'email-delivery',
        channel: EMAIL_CHANNEL,
        pollIntervalMs: config.EMAIL_POLL_INTERVAL_MS,
        concurrency: MAX_IN_FLIGHT,
        resultBatch: RESULT_BATCH,
      },
      clock,
      listener,
      background,
    );
    this.leaseMs = outboxLeaseMs(config.EMAIL_SEND_TIMEOUT_MS);
  }

  /**
   * Leases up to `limit` due messages, oldest due first, counting the attempt. Due is domain
   * time; the lease is the database's real time, so moving the domain clock never frees it.
   */
  protected claim(limit: number): Promise<ClaimedEmail[]> {
    return this.outbox.claimDue(this.clock.now(), limit, randomUUID(), this.leaseMs);
  }

  protected async send(email: ClaimedEmail): Promise<Outcome> {
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

  protected override attempted(_email: ClaimedEmail, outcome: Outcome): void {
    this.metrics.deliveryAttempt('email', METRIC_OUTCOME[outcome.status]);
  }

  /**
   * Makes abandoned sends due again now, leases ended, each only while its `lock_token` still
   * holds it. The attempt stays counted (the server may have accepted the message: the
   * `Message-ID` is the same on the next attempt).
   */
  protected handBack(emails: readonly ClaimedEmail[]): Promise<string[]> {
    return this.outbox.handBack(emails, this.clock.now(), HANDED_BACK_ERROR);
  }

  /**
   * Writes the results, each unless its lease was lost to another instance meanwhile, and logs
   * the messages that failed for good. A message not sent for want of SMTP made no attempt, so
   * its claim is not counted.
   */
  protected async write(batch: readonly OutboxResult<ClaimedEmail, Outcome>[]): Promise<void> {
    await this.outbox.writeResults(
      batch.map(({ job, outcome, at }) => ({
        id: job.id,
        lock_token: job.lock_token,
        status: outcome.status,
        error: storableError(outcome.error),
        next_attempt_at: outcome.next,
        at,
      })),
    );
    for (const { job, outcome } of batch) {
      if (outcome.status !== 'failed') continue;
      this.logger.warn(
        { emailId: job.id, merchantId: job.merchant_id, error: outcome.error },
        'E-mail failed: refused for good, or not accepted within its retry window',
      );
    }
  }
}
