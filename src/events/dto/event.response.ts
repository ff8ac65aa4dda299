import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { DELIVERY_STATUSES, DeliveryStatus } from '../delivery-status';
import { EVENT_TYPES, EventType } from '../event-types';

export class EventDeliveryResponse {
  /**
   * `pending`: queued or waiting for a retry; `delivered`: the endpoint answered 2xx; `failed`: no
   * 2xx within 3 days of retries; `skipped`: no endpoint was configured when it came due.
   */
  @ApiProperty({ enum: DELIVERY_STATUSES, example: 'delivered' })
  status!: DeliveryStatus;

  /** POSTs made so far. @example 1 */
  attempts!: number;

  /** ISO 8601 UTC, or null before the first attempt. @example "2026-11-22T10:15:30.456Z" */
  lastAttemptAt!: string | null;

  /** Status code of the latest response, or null when none arrived. @example 200 */
  lastHttpStatus!: number | null;

  /** Why the latest attempt failed (timeout, refused, HTTP status), or null. @example null */
  lastError!: string | null;

  /** When the next attempt is due (ISO 8601 UTC); null once delivered, failed or skipped. @example null */
  nextAttemptAt!: string | null;

  /** When a 2xx came back, or null. @example "2026-11-22T10:15:30.456Z" */
  deliveredAt!: string | null;
}

export class EventDataResponse {
  /** The resource as the API returns it (a customer, an invoice, a subscription, ...). */
  @ApiProperty({ type: 'object', additionalProperties: true })
  object!: Record<string, unknown>;

  /**
   * For an event that records a change of state (a subscription paused, resumed, cancelled...),
   * the changed fields' values before it.
   */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { status: 'Active' },
  })
  previousAttributes?: Record<string, unknown>;
}

/** An event as delivered (`id`, `type`, `createdAt`, `data`), plus its latest delivery. */
export class EventResponse {
  /** @example "evt_5b3f1c2e-8a4d-4e6f-9b1a-2c3d4e5f6a7b" */
  id!: string;

  @ApiProperty({ enum: EVENT_TYPES, example: 'customer.created' })
  type!: EventType;

  /** ISO 8601 UTC. @example "2026-11-22T10:15:30.123Z" */
  createdAt!: string;

  data!: EventDataResponse;

  /**
   * The latest delivery to the webhook endpoint (a redelivery replaces the original here), or
   * null when the merchant had no endpoint when the event happened, or once its deliveries were
   * deleted (`WEBHOOK_RETENTION_DAYS` after their last attempt; the event is kept).
   */
  delivery!: EventDeliveryResponse | null;
}
