import { Entity, Enum, Index, ManyToOne, Property, type Ref } from '@mikro-orm/core';
import { BaseEntity } from '../../common/base.entity';
import { Merchant } from '../../merchants/entities/merchant.entity';

/**
 * `pending`: waiting for its first or next attempt (or being attempted); `sent`: the SMTP server
 * accepted it; `failed`: given up, after the retry window or a permanent rejection of the
 * recipient or the message; `not_sent`: no SMTP server was configured (`SMTP_URL`) on the
 * instance that took it up, so nothing was attempted and nothing will be. The last three are final.
 */
export const EMAIL_STATUSES = ['pending', 'sent', 'failed', 'not_sent'] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

/**
 * One e-mail in the outbox (`email_outbox`): written in the transaction of the change it tells
 * about, so it exists exactly when the change committed, then sent by the delivery worker.
 *
 * The worker claims due rows with `FOR UPDATE SKIP LOCKED` and leases them (`leasedUntil`, in the
 * database's real time, under a fresh `lockToken`), so no two instances send one message at
 * once and a crashed instance's claim is taken again once the lease ends.
 *
 * `invoiceId` is a loose reference, without a foreign key: the message outlives nothing it points
 * to (rows go with their merchant), and the invoices table is owned by another module. Lookups by
 * invoice always filter by merchant too.
 */
@Entity({ tableName: 'email_outbox' })
@Index({
  name: 'email_outbox_due_idx',
  expression:
    `create index "email_outbox_due_idx" on "email_outbox" ("next_attempt_at") ` +
    `where "status" = 'pending'`,
})
@Index({ name: 'email_outbox_invoice_idx', properties: ['merchant', 'invoiceId', 'createdAt'] })
/** The retention job deletes final messages by age: only they are indexed, by their last change. */
@Index({
  name: 'email_outbox_final_idx',
  expression:
    `create index "email_outbox_final_idx" on "email_outbox" ("updated_at") ` +
    `where "status" <> 'pending'`,
})
export class EmailMessage extends BaseEntity {
  @ManyToOne(() => Merchant, { ref: true, deleteRule: 'cascade' })
  merchant!: Ref<Merchant>;

  /** The invoice the message is about, if any (no foreign key: see above). */
  @Property({ type: 'uuid', nullable: true })
  invoiceId: string | null = null;

  /** One address (RFC 5321 allows 254 characters; 320 leaves room for odd but valid ones). */
  @Property({ type: 'string', length: 320 })
  recipient!: string;

  @Property({ type: 'string', length: 998 })
  subject!: string;

  @Property({ type: 'text' })
  textBody!: string;

  @Property({ type: 'text' })
  htmlBody!: string;

  @Enum({ items: () => [...EMAIL_STATUSES], type: 'string', length: 16 })
  status!: EmailStatus;

  /** SMTP attempts made so far (a `not_sent` message made none). */
  @Property({ type: 'integer' })
  attempts: number = 0;

  /** When it is due (domain time); null once final. */
  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  nextAttemptAt: Date | null = null;

  /** Until when an instance holds the current attempt (PostgreSQL's real `now()`). */
  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  leasedUntil: Date | null = null;

  /** Who holds the current attempt; a result is written only by the holder. */
  @Property({ type: 'uuid', nullable: true })
  lockToken: string | null = null;

  /** Why the latest attempt failed (or why nothing was sent), or null. */
  @Property({ type: 'string', length: 500, nullable: true })
  lastError: string | null = null;

  /** When the SMTP server accepted it. */
  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  sentAt: Date | null = null;
}
