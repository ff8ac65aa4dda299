import type { EventResponse } from './dto/event.response';
import type { DeliveryStatus } from './delivery-status';

/** Part of a statement: SQL with `?` placeholders and its parameters, in their order. */
export interface SqlPart {
  sql: string;
  params: unknown[];
}

/** An event with its latest delivery (none: the delivery columns are null). */
export interface EventWithDeliveryRow {
  payload: Omit<EventResponse, 'delivery'>;
  status: DeliveryStatus | null;
  attempts: number | null;
  last_attempt_at: string | null;
  last_http_status: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
}

/**
 * An event with its latest delivery as a statement's generated type gives it (pgtyped): the
 * payload a jsonb column (`Json`), the status a text column (`string`).
 */
export type EventWithDeliveryColumns = Omit<EventWithDeliveryRow, 'payload' | 'status'> & {
  payload: unknown;
  status: string | null;
};

/**
 * The rows as `EventWithDeliveryRow`s: each payload is an event's body as it was recorded (an
 * `EventResponse` without its delivery), each status one of `DeliveryStatus`. The other columns
 * are checked against the generated types; these two are narrowed here, once.
 */
export function eventsWithDelivery(rows: EventWithDeliveryColumns[]): EventWithDeliveryRow[] {
  return rows as unknown as EventWithDeliveryRow[];
}

/**
 * What recording an event sets off in the same transaction: the webhook deliveries. Events
 * declares it and webhooks provides it (`EVENT_FAN_OUT`, exported by the global webhooks
 * module), so the events module imports nothing of delivery and webhooks keeps the SQL of its
 * table, while an event and its deliveries still commit together in one statement.
 */
export interface EventFanOut {
  /**
   * The end of the statement that records `eventIds` (one merchant's, at `at`): more CTEs after
   * the events' own (`WITH …, event AS (INSERT INTO events …)`, so it starts with `, name AS`)
   * and the statement's final query.
   */
  afterEvents(merchantId: string, eventIds: readonly string[], at: Date): SqlPart;

  /**
   * Queues a new delivery of a recorded event, due at `at`, to the endpoint configured now.
   * @returns the event with the new delivery (its columns null when the merchant has no
   *   endpoint: nothing was queued), or undefined when the merchant has no such event.
   */
  redeliver(
    merchantId: string,
    eventId: string,
    at: Date,
  ): Promise<EventWithDeliveryRow | undefined>;
}

/** The injection token of the `EventFanOut`. */
export const EVENT_FAN_OUT = Symbol('EventFanOut');
