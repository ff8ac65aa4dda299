import { Injectable } from '@nestjs/common';
import { sql } from '../database/typed-sql';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { EmailStatus } from './entities/email-message.entity';
import type {
  IBacklogQuery,
  IBacklogResult,
  IClaimDueQuery,
  IClaimDueResult,
  IHandBackQuery,
  IInsertEmailQuery,
  ILatestForInvoicesQuery,
  ILatestForInvoicesResult,
  IPruneFinishedQuery,
  IWriteResultsQuery,
} from './email-outbox.repository.types';

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

/**
 * The latest message about an invoice (timestamps ISO 8601 UTC, formatted by PostgreSQL). Its
 * status is one of the entity's (a text column, which the generated type leaves `string`).
 */
export type EmailStateRow = Omit<ILatestForInvoicesResult, 'status'> & { status: EmailStatus };

/** Messages not sent yet, and when the oldest was queued (domain time, as text; null: none). */
export type EmailBacklogRow = IBacklogResult;

/** A claimed message with everything needed to send it (`created_at` ISO 8601 UTC). */
export type ClaimedEmailRow = IClaimDueResult;

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

/**
 * The row, due now, and a NOTIFY that wakes the workers once the caller's transaction commits
 * (nothing is sent if it rolls back). One statement.
 */
const insertEmail = sql<IInsertEmailQuery>`
  WITH queued AS (
    INSERT INTO email_outbox (id, merchant_id, invoice_id, recipient, subject, text_body,
      html_body, status, attempts, next_attempt_at, created_at, updated_at)
    VALUES ($id!, $merchantId!, $invoiceId, $recipient!, $subject!, $textBody!, $htmlBody!,
      'pending', 0, $at!, $at!, $at!)
    RETURNING 1
  )
  SELECT pg_notify($channel!, '') FROM queued`;

/** The latest message (by creation) about each of these invoices of the merchant. */
const latestForInvoices = sql<ILatestForInvoicesQuery>`
  SELECT DISTINCT ON (invoice_id) invoice_id AS "invoice_id!", recipient, status, attempts,
         last_error, api_time(sent_at) AS sent_at, api_time(next_attempt_at) AS next_attempt_at
    FROM email_outbox
   WHERE merchant_id = $merchantId! AND invoice_id = ANY($invoiceIds!::uuid[])
   ORDER BY invoice_id, created_at DESC, id DESC`;

/**
 * Leases up to `limit` messages due at `now` (domain time), oldest due first, counting the
 * attempt. The lease is the database's real time, so moving the domain clock never frees it.
 * It changes no indexed column (`updated_at` is the result's to set): a heap-only tuple, as a
 * webhook delivery's lease (`claimDeliveries`).
 */
const claimDue = sql<IClaimDueQuery>`
  WITH due AS (
    SELECT id FROM email_outbox
     WHERE status = 'pending' AND next_attempt_at <= $now!
       AND (leased_until IS NULL OR leased_until < now())
     ORDER BY next_attempt_at
     LIMIT $limit!
       FOR UPDATE SKIP LOCKED
  )
  UPDATE email_outbox e
     SET attempts = e.attempts + 1, lock_token = $lockToken!,
         leased_until = now() + $leaseMs!::int * interval '1 millisecond'
    FROM due WHERE e.id = due.id
  RETURNING e.id, e.merchant_id, e.invoice_id, e.lock_token AS "lock_token!", e.attempts,
            api_time(e.created_at) AS "created_at!", e.recipient, e.subject, e.text_body,
            e.html_body`;

/**
 * Writes the results, each unless its lease was lost to another instance meanwhile. A message
 * not sent for want of SMTP made no attempt, so its claim is not counted.
 */
const writeResults = sql<IWriteResultsQuery>`
  UPDATE email_outbox e
     SET status = r.status,
         attempts = CASE WHEN r.status = 'not_sent' THEN e.attempts - 1 ELSE e.attempts END,
         last_error = r.error, next_attempt_at = r.next_attempt_at,
         sent_at = CASE WHEN r.status = 'sent' THEN r.at END,
         lock_token = NULL, leased_until = NULL, updated_at = r.at
    FROM jsonb_to_recordset($results!::jsonb) AS r(id uuid, lock_token uuid, status text,
         error text, next_attempt_at timestamptz, at timestamptz)
   WHERE e.id = r.id AND e.lock_token = r.lock_token`;

/** The pending messages (the rows of `email_outbox_due_idx`): how many, the oldest's queuing. */
const backlog = sql<IBacklogQuery>`
  SELECT count(*)::int AS "pending!", min(created_at) AS oldest
    FROM email_outbox WHERE status = 'pending'`;

/**
 * Hands back leased messages whose attempt was abandoned (the instance is shutting down): each,
 * only while its `lock_token` still holds it, is due again at `now` (domain time) with its lease
 * ended, and a NOTIFY wakes the other instances' workers, which take it up at once. The attempt
 * stays counted (it may have reached the server); a late result under the old token is refused
 * (`writeResults`' fence).
 */
const handBack = sql<IHandBackQuery>`
  UPDATE email_outbox e
     SET lock_token = NULL, leased_until = NULL, next_attempt_at = $now!, updated_at = $now!,
         last_error = $error!
    FROM jsonb_to_recordset($jobs!::jsonb) AS j(id uuid, lock_token uuid)
   WHERE e.id = j.id AND e.lock_token = j.lock_token
  RETURNING e.id, pg_notify($channel!, '')`;

/**
 * Deletes up to `limit` final messages (sent, failed, not sent: never a pending one) whose last
 * change is older than `before`, on the partial index of final messages by age
 * (`email_outbox_final_idx`), skipping rows another instance is deleting.
 */
const pruneFinished = sql<IPruneFinishedQuery>`
  DELETE FROM email_outbox WHERE id IN (
    SELECT id FROM email_outbox
     WHERE status <> 'pending' AND updated_at < $before!
     LIMIT $limit!
       FOR UPDATE SKIP LOCKED)
  RETURNING id`;

/**
 * Every statement on `email_outbox`: the table's one owner (issue 22). Its statements are typed
 * by pgtyped from the migrated schema (`email-outbox.repository.types.ts`, `npm run db:types`).
 */
@Injectable()
export class EmailOutboxRepository {
  constructor(private readonly db: Db) {}

  async insert(tx: SqlTx, row: QueuedEmailRow): Promise<void> {
    await insertEmail.run(
      {
        id: row.id,
        merchantId: row.merchantId,
        invoiceId: row.invoiceId,
        recipient: row.recipient,
        subject: row.subject,
        textBody: row.textBody,
        htmlBody: row.htmlBody,
        at: row.at,
        channel: EMAIL_CHANNEL,
      },
      tx,
    );
  }

  latestForInvoices(merchantId: string, invoiceIds: string[]): Promise<EmailStateRow[]> {
    return latestForInvoices.run({ merchantId, invoiceIds }, this.db) as Promise<EmailStateRow[]>;
  }

  /** Messages not sent yet (see `backlog`), for the metrics. */
  async backlog(): Promise<EmailBacklogRow> {
    const [row] = await backlog.run(undefined, this.db);
    return row;
  }

  claimDue(
    now: Date,
    limit: number,
    lockToken: string,
    leaseMs: number,
  ): Promise<ClaimedEmailRow[]> {
    return claimDue.run({ now, limit, lockToken, leaseMs }, this.db);
  }

  /**
   * Hands back abandoned attempts (`jobs`: id and `lock_token`), each due again at `now` unless
   * its lease was lost meanwhile. @returns the ids handed back.
   */
  async handBack(
    jobs: readonly { id: string; lock_token: string }[],
    now: Date,
    error: string,
  ): Promise<string[]> {
    const rows = jobs.map(({ id, lock_token }) => ({ id, lock_token }));
    const handed = await handBack.run(
      { jobs: JSON.stringify(rows), now, error, channel: EMAIL_CHANNEL },
      this.db,
    );
    return handed.map((row) => row.id);
  }

  /** Deletes up to `limit` final messages last changed before `before`. @returns how many. */
  async pruneFinished(before: Date, limit: number): Promise<number> {
    const deleted = await pruneFinished.run({ before, limit }, this.db);
    return deleted.length;
  }

  async writeResults(results: readonly EmailResultRow[]): Promise<void> {
    const rows = results.map((r) => ({
      id: r.id,
      lock_token: r.lock_token,
      status: r.status,
      error: r.error,
      next_attempt_at: r.next_attempt_at?.toISOString() ?? null,
      at: r.at.toISOString(),
    }));
    await writeResults.run({ results: JSON.stringify(rows) }, this.db);
  }
}
