import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsUrl, Max, Min } from 'class-validator';
import { IsMailbox } from '../common/validators/mailbox';
import { emptyToUndefined, toInt } from './transforms';

/**
 * The part of `AppConfig` that says how this instance works and stops (docs/deployment.md): the
 * shutdown's bounds, webhook and e-mail delivery, charge runs, the watchers, portal links and
 * invoice expiry. Kept apart only to keep each file readable; `AppConfig` extends it and the
 * environment fills both alike.
 */
export abstract class BackgroundConfig {
  /**
   * A stop (SIGTERM) is given this long, in milliseconds: background work hands back what it still
   * holds by then (charges, deliveries, e-mails: another instance resumes them at once), and HTTP
   * connections still open are closed. Keep it under the orchestrator's kill timeout (Kubernetes:
   * `terminationGracePeriodSeconds`, 30 s by default).
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(600_000)
  SHUTDOWN_GRACE_MS: number = 10_000;

  /**
   * On SIGTERM, how long the instance keeps serving while its readiness answers 503 `draining`,
   * before it closes: time for a load balancer to take it out. 0 (the default) when the
   * orchestrator has already stopped sending traffic (a Kubernetes `preStop` hook), or when the
   * balancer retries a refused connection on another instance (nginx does).
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(120_000)
  SHUTDOWN_DELAY_MS: number = 0;

  /** Time allowed for one webhook POST (connect, headers and body), in milliseconds. */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(60_000)
  WEBHOOK_TIMEOUT_MS: number = 10_000;

  /** Webhook POSTs one instance keeps in flight at once. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  WEBHOOK_CONCURRENCY: number = 64;

  /** How often the delivery worker looks for due retries (new events wake it at once). */
  @Transform(toInt)
  @IsInt()
  @Min(20)
  @Max(60_000)
  WEBHOOK_POLL_INTERVAL_MS: number = 1000;

  /**
   * Days a finished webhook delivery (delivered, failed after its retries, or skipped) is kept
   * after its last attempt; then the retention job deletes it. Pending deliveries and the events
   * themselves are never deleted (docs/operations.md#retention).
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(3650)
  WEBHOOK_RETENTION_DAYS: number = 30;

  /**
   * SMTP server for outgoing e-mail (invoice notifications), in nodemailer's URL form:
   * `smtp://user:pass@host:587` (STARTTLS when the server offers it; `?requireTLS=true` insists)
   * or `smtps://user:pass@host:465` (TLS from the start). Unset: nothing is sent, each message is
   * recorded and marked `not_sent`. It holds a password: it is never logged, and a bad value is
   * reported with its credentials masked.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsUrl(
    { protocols: ['smtp', 'smtps'], require_tld: false, require_protocol: true },
    { message: 'must be an smtp:// or smtps:// URL, e.g. smtp://user:pass@mail.example.com:587' },
  )
  SMTP_URL?: string;

  /** Sender of outgoing e-mail: an address, optionally with a display name. */
  @IsMailbox()
  EMAIL_FROM: string = 'Stablecoin Billing <billing@localhost>';

  /** How often the e-mail worker looks for due retries (a new message wakes it at once). */
  @Transform(toInt)
  @IsInt()
  @Min(20)
  @Max(60_000)
  EMAIL_POLL_INTERVAL_MS: number = 5000;

  /**
   * Time allowed for one message: connecting (at most 10 s of it), TLS, authentication and the
   * transfer, including any wait for a free pooled connection.
   */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(300_000)
  EMAIL_SEND_TIMEOUT_MS: number = 30_000;

  /**
   * Days a finished e-mail (sent, failed for good, or not sent for want of SMTP) is kept after
   * its last attempt, recipient and body included; then the retention job deletes it. Pending
   * messages are never deleted (docs/operations.md#retention).
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(3650)
  EMAIL_RETENTION_DAYS: number = 30;

  /** How often a charge run starts on instances that run background work (ms). */
  @Transform(toInt)
  @IsInt()
  @Min(1000)
  @Max(3_600_000)
  CHARGE_RUN_INTERVAL_MS: number = 60_000;

  /** Due subscriptions a charge run claims per batch (`FOR UPDATE SKIP LOCKED`). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(5000)
  CHARGE_BATCH_SIZE: number = 200;

  /** Charges one instance keeps in flight at once. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  CHARGE_CONCURRENCY: number = 64;

  /**
   * How long an instance holds a charge attempt before another may resume it (seconds). Short
   * is safe: a resumed attempt is settled by its recorded signature (or its very bytes re-sent),
   * never by a second transaction.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(3600)
  CHARGE_LEASE_SECONDS: number = 30;

  /**
   * How long a customer portal link from `POST /api/customers/:id/portal-session` works
   * (seconds, real time). The links in customer notices last 7 days.
   */
  @Transform(toInt)
  @IsInt()
  @Min(60)
  @Max(86_400)
  PORTAL_SESSION_TTL_SECONDS: number = 3600;

  /**
   * How often the watchers run (ms): invoice payments, finality of seen payments, subscribes
   * whose page was closed, overdue and expired invoices.
   */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  WATCH_INTERVAL_MS: number = 5_000;

  /** An Open invoice expires this many days after its `dueDate`. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(3650)
  INVOICE_EXPIRY_DAYS: number = 30;
}
