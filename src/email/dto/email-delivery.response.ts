import { ApiProperty } from '@nestjs/swagger';
import { EMAIL_STATUSES, EmailStatus } from '../entities/email-message.entity';

/**
 * Where the latest e-mail about a resource (an invoice's notification) stands. Embedded by the
 * API of the resource it is about; `null` there when no e-mail was ever queued for it, or once
 * it was deleted (`EMAIL_RETENTION_DAYS` after its last attempt).
 */
export class EmailDeliveryResponse {
  /** The recipient. @example "ada@example.com" */
  to!: string;

  /**
   * `pending`: queued or waiting for a retry; `sent`: the SMTP server accepted it; `failed`: not
   * accepted within 3 days of retries, or refused for good (unknown recipient, rejected content);
   * `not_sent`: the service has no SMTP server configured, so nothing was sent.
   */
  @ApiProperty({ enum: EMAIL_STATUSES, example: 'sent' })
  status!: EmailStatus;

  /** SMTP attempts made so far. @example 1 */
  attempts!: number;

  /** Why the latest attempt failed (or why nothing was sent), or null. @example null */
  lastError!: string | null;

  /**
   * When the SMTP server accepted it (ISO 8601 UTC), or null.
   * @example "2026-11-22T10:15:30.456Z"
   */
  sentAt!: string | null;

  /**
   * When the next attempt is due (ISO 8601 UTC); null once sent, failed or not sent.
   * @example null
   */
  nextAttemptAt!: string | null;
}
