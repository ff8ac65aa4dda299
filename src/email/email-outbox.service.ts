import { Injectable, OnModuleInit } from '@nestjs/common';
import { isEmail, isUUID } from 'class-validator';
import { randomUUID } from 'node:crypto';
import { Retention } from '../common/background/retention';
import { Clock } from '../common/clock';
import { FieldError, ValidationError } from '../common/errors/domain-error';
import { AppConfig } from '../config/app-config';
import type { SqlTx } from '../database/pg-transaction';
import { secondsSince } from '../metrics/age';
import { EmailDeliveryResponse } from './dto/email-delivery.response';
import { EmailOutboxRepository, EmailStateRow } from './email-outbox.repository';

/** A message to queue: one recipient, a subject, a plain-text body and its HTML alternative. */
export interface OutgoingEmail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The invoice the message is about, so `stateForInvoices` can report on it. */
  invoiceId?: string | null;
}

/** The latest e-mail about an invoice, as the invoice API embeds it. */
export type EmailDeliveryState = EmailDeliveryResponse;

/** The subject is one header line: RFC 5322 caps a line at 998 characters. */
const MAX_SUBJECT = 998;
const CONTROL = /\p{Cc}/u;

/**
 * The e-mail outbox. A change that tells someone about itself (an invoice created) queues the
 * message with the EntityManager of its own transaction, so the message exists exactly when the
 * change commits; the delivery worker (any instance with background work) sends it afterwards.
 * Queuing never waits on, or fails because of, the SMTP server. A final message (sent, failed,
 * not sent) is deleted `EMAIL_RETENTION_DAYS` after its last change, by the retention job.
 */
@Injectable()
export class EmailOutboxService implements OnModuleInit {
  private readonly retentionMs: number;

  constructor(
    private readonly outbox: EmailOutboxRepository,
    private readonly clock: Clock,
    private readonly retention: Retention,
    config: AppConfig,
  ) {
    this.retentionMs = config.EMAIL_RETENTION_DAYS * 86_400_000;
  }

  onModuleInit(): void {
    this.retention.register({
      table: 'email_outbox',
      pruneBatch: (limit) => this.pruneFinished(limit),
    });
  }

  /**
   * Queues a message inside the caller's transaction: the row, due now, and a NOTIFY that wakes
   * the workers once the transaction commits (nothing is sent if it rolls back). One statement.
   *
   * @param em the EntityManager of the transaction that makes the change.
   * @returns the message id (its `Message-ID` is `<id@sender's domain>`).
   * @throws Error when `em` is not in a transaction (a message must commit with its change).
   * @throws ValidationError when the recipient is not one e-mail address, the subject is empty,
   *   too long or not one line, a body is empty, or `invoiceId` is not a UUID.
   */
  async enqueue(em: SqlTx, merchantId: string, message: OutgoingEmail): Promise<string> {
    if (!em.isInTransaction()) throw new Error('EmailOutboxService.enqueue needs a transaction');
    const problems = messageProblems(message);
    if (problems.length > 0) {
      throw new ValidationError(`${problems[0].field}: ${problems[0].message}`, problems);
    }
    const id = randomUUID();
    await this.outbox.insert(em, {
      id,
      merchantId,
      invoiceId: message.invoiceId ?? null,
      recipient: message.to,
      subject: message.subject,
      textBody: message.text,
      htmlBody: message.html,
      at: this.clock.now(),
    });
    return id;
  }

  /**
   * The messages not sent yet (any merchant's), and the age in seconds of the oldest, by the
   * domain clock (0 when none): the e-mail backlog the metrics show.
   */
  async backlog(): Promise<{ pending: number; oldestAgeSeconds: number }> {
    const { pending, oldest } = await this.outbox.backlog();
    return { pending, oldestAgeSeconds: secondsSince(oldest, this.clock.now()) };
  }

  /**
   * Deletes up to `limit` final messages (sent, failed, not sent) whose last change is older
   * than `EMAIL_RETENTION_DAYS` (one batch of the retention job); a pending one never. An invoice
   * whose message was deleted then shows `email: null`, as one about which none was sent.
   * @returns how many were deleted.
   */
  pruneFinished(limit: number): Promise<number> {
    const before = new Date(this.clock.now().getTime() - this.retentionMs);
    return this.outbox.pruneFinished(before, limit);
  }

  /**
   * The latest message (by creation) about each of the merchant's invoices, keyed by invoice id
   * (lowercase, as PostgreSQL writes UUIDs), for the invoice API to embed in one query per page.
   * Invoices without a message (and ids that are not UUIDs, or are another merchant's) are absent
   * from the map.
   */
  async stateForInvoices(
    merchantId: string,
    invoiceIds: string[],
  ): Promise<Map<string, EmailDeliveryState>> {
    const ids = [...new Set(invoiceIds.filter((id) => isUUID(id)).map((id) => id.toLowerCase()))];
    if (ids.length === 0) return new Map();
    const rows = await this.outbox.latestForInvoices(merchantId, ids);
    return new Map(rows.map((row) => [row.invoice_id, toEmailDeliveryResponse(row)]));
  }
}

function toEmailDeliveryResponse(row: EmailStateRow): EmailDeliveryResponse {
  return {
    to: row.recipient,
    status: row.status,
    attempts: row.attempts,
    lastError: row.last_error,
    sentAt: row.sent_at,
    nextAttemptAt: row.next_attempt_at,
  };
}

/** What makes a message unsendable, checked before it is queued rather than at every retry. */
function messageProblems(message: OutgoingEmail): FieldError[] {
  const problems: FieldError[] = [];
  if (typeof message.to !== 'string' || !isEmail(message.to, { require_tld: false })) {
    problems.push({ field: 'to', message: 'must be one e-mail address' });
  }
  const subject = message.subject;
  if (typeof subject !== 'string' || subject.trim() === '') {
    problems.push({ field: 'subject', message: 'must not be empty' });
  } else if (subject.length > MAX_SUBJECT || CONTROL.test(subject)) {
    problems.push({
      field: 'subject',
      message: `must be one line of at most ${MAX_SUBJECT} characters`,
    });
  }
  for (const field of ['text', 'html'] as const) {
    if (typeof message[field] !== 'string' || message[field].trim() === '') {
      problems.push({ field, message: 'must not be empty' });
    }
  }
  const invoiceId = message.invoiceId;
  if (invoiceId !== undefined && invoiceId !== null && !isUUID(invoiceId)) {
    problems.push({ field: 'invoiceId', message: 'must be a UUID' });
  }
  return problems;
}
