import { Injectable } from '@nestjs/common';
import { Db } from '../database/db';
import { isoTimestamp } from '../database/sql';
import type { SqlTx } from '../database/pg-transaction';
import { EmailStatus } from './entities/email-message.entity';

/** PostgreSQL channel that wakes every instance's e-mail worker when a message is queued. */
export const EMAIL_CHANNEL = 'email_queued';

/** A message as it is queued. */
export interface QueuedEmailRow {
  id: string;
  merchantId: string;
  invoiceId: string | null;
  recipient: string;
  subject: string;
  textBody: string;
  htmlBody: string;
  /** Domain time: the row is due at once. */
  at: Date;
}

/** The latest message about an invoice (timestamps ISO 8601 UTC, formatted by PostgreSQL). */
export interface EmailStateRow {
  invoice_id: string;
  recipient: string;
  status: EmailStatus;
  attempts: number;
  last_error: string | null;
  sent_at: string | null;
  next_attempt_at: string | null;
}

/** A claimed message with everything needed to send it. */
export interface ClaimedEmailRow {
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

/** The result of one attempt, written under the claim's `lock_token`. */
export interface EmailResultRow {
  id: string;
  lock_token: string;
  status: EmailStatus;
  /** Storable as it is (`storableError`: bounded, well-formed, no NUL). */
  error: string | null;
  next_attempt_at: Date | null;
  /** Domain time the attempt finished. */
  at: Date;
}

/** Every statement on `email_outbox`: the table's one owner (issue 22). */
@Injectable()
export class EmailOutboxRepository {
  constructor(private readonly db: Db) {}

  /**
   * The row, due now, and a NOTIFY that wakes the workers once the caller's transaction commits
   * (nothing is sent if it rolls back). One statement.
   */
  async insert(tx: SqlTx, row: QueuedEmailRow): Promise<void> {
    await tx.execute(
      `WITH queued AS (
         INSERT INTO email_outbox (id, merchant_id, invoice_id, recipient, subject, text_body,
           html_body, status, attempts, next_attempt_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)
         RETURNING 1
       )
       SELECT pg_notify(?, '') FROM queued`,
      [
        row.id,
        row.merchantId,
        row.invoiceId,
        row.recipient,
        row.subject,
        row.textBody,
        row.htmlBody,
        row.at,
        row.at,
        row.at,
        EMAIL_CHANNEL,
      ],
    );
  }

  /**
   * The latest message (by creation) about each of these invoices of the merchant.
   * @param invoiceIds UUIDs (bound as one PostgreSQL array).
   */
  latestForInvoices(merchantId: string, invoiceIds: string[]): Promise<EmailStateRow[]> {
    return this.db.execute<EmailStateRow[]>(
      `SELECT DISTINCT ON (invoice_id) invoice_id, recipient, status, attempts, last_error,
              ${isoTimestamp('sent_at')}, ${isoTimestamp('next_attempt_at')}
         FROM email_outbox
        WHERE merchant_id = ? AND invoice_id = ANY(?::uuid[])
        ORDER BY invoice_id, created_at DESC, id DESC`,
      [merchantId, invoiceIds],
    );
  }

  /**
   * Leases up to `limit` messages due at `now` (domain time), oldest due first, counting the
   * attempt. The lease is the database's real time, so moving the domain clock never frees it.
   */
  claimDue(
    now: Date,
    limit: number,
    lockToken: string,
    leaseMs: number,
  ): Promise<ClaimedEmailRow[]> {
    return this.db.execute<ClaimedEmailRow[]>(
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
      [now, limit, lockToken, now, leaseMs],
    );
  }

  /**
   * Writes the results, each unless its lease was lost to another instance meanwhile. A message
   * not sent for want of SMTP made no attempt, so its claim is not counted.
   */
  async writeResults(results: readonly EmailResultRow[]): Promise<void> {
    const rows = results.map((r) => ({
      id: r.id,
      lock_token: r.lock_token,
      status: r.status,
      error: r.error,
      next_attempt_at: r.next_attempt_at?.toISOString() ?? null,
      at: r.at.toISOString(),
    }));
    await this.db.execute(
      `UPDATE email_outbox e
          SET status = r.status,
              attempts = CASE WHEN r.status = 'not_sent' THEN e.attempts - 1 ELSE e.attempts END,
              last_error = r.error, next_attempt_at = r.next_attempt_at,
              sent_at = CASE WHEN r.status = 'sent' THEN r.at END,
              lock_token = NULL, leased_until = NULL, updated_at = r.at
         FROM jsonb_to_recordset(?::jsonb) AS r(id uuid, lock_token uuid, status text,
              error text, next_attempt_at timestamptz, at timestamptz)
        WHERE e.id = r.id AND e.lock_token = r.lock_token`,
      [JSON.stringify(rows)],
    );
  }
}
