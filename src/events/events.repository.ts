import { Injectable } from '@nestjs/common';
import { sql } from '../database/typed-sql';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { type EventWithDeliveryRow, eventsWithDelivery, type SqlPart } from './event-fan-out';
import type {
  IEventCreatedAtQuery,
  IGetEventQuery,
  IListEventsAfterQuery,
  IListEventsOfTypeAfterQuery,
  IListEventsOfTypeQuery,
  IListEventsQuery,
} from './events.repository.types';

/** An event as it is recorded. */
export interface NewEventRow {
  /** The row's UUID (`orderedUuid`). */
  id: string;
  type: string;
  /** The JSON body delivered and signed, as text (kept byte for byte). */
  payload: string;
}

/** A page of one merchant's events, newest first. */
export interface EventPage {
  type?: string;
  /** The page starts after this event (created_at as the database gave it, and its id). */
  after?: { createdAt: string; id: string };
  limit: number;
}

/*
 * The reads of events below return each event with its latest delivery (a LATERAL join on the
 * (event_id, created_at) index; none: the delivery columns are null). pgtyped types `status`
 * and `attempts` by their NOT NULL columns through the outer join, so they are forced nullable
 * (`?`); the other delivery columns are nullable already. They read `webhook_deliveries`
 * (the webhooks module's) in the same statement. pgtyped reads each statement's text whole, so
 * the select list and the join are written out in each.
 */

/** The merchant's events, newest first (a page of at most `limit`). */
const listEvents = sql<IListEventsQuery>`
  SELECT e.payload, d.status AS "status?", d.attempts AS "attempts?",
         d.last_http_status, d.last_error,
         api_time(d.last_attempt_at) AS last_attempt_at,
         api_time(d.next_attempt_at) AS next_attempt_at, api_time(d.delivered_at) AS delivered_at
    FROM events e
    LEFT JOIN LATERAL (
      SELECT * FROM webhook_deliveries wd WHERE wd.event_id = e.id
       ORDER BY wd.created_at DESC, wd.id DESC LIMIT 1
    ) d ON true
   WHERE e.merchant_id = $merchantId!
   ORDER BY e.created_at DESC, e.id DESC LIMIT $limit!`;

/** `listEvents` of one type only. */
const listEventsOfType = sql<IListEventsOfTypeQuery>`
  SELECT e.payload, d.status AS "status?", d.attempts AS "attempts?",
         d.last_http_status, d.last_error,
         api_time(d.last_attempt_at) AS last_attempt_at,
         api_time(d.next_attempt_at) AS next_attempt_at, api_time(d.delivered_at) AS delivered_at
    FROM events e
    LEFT JOIN LATERAL (
      SELECT * FROM webhook_deliveries wd WHERE wd.event_id = e.id
       ORDER BY wd.created_at DESC, wd.id DESC LIMIT 1
    ) d ON true
   WHERE e.merchant_id = $merchantId! AND e.type = $type!
   ORDER BY e.created_at DESC, e.id DESC LIMIT $limit!`;

/** `listEvents` after a cursor: the event (`afterCreatedAt`, `afterId`) the previous page ended on. */
const listEventsAfter = sql<IListEventsAfterQuery>`
  SELECT e.payload, d.status AS "status?", d.attempts AS "attempts?",
         d.last_http_status, d.last_error,
         api_time(d.last_attempt_at) AS last_attempt_at,
         api_time(d.next_attempt_at) AS next_attempt_at, api_time(d.delivered_at) AS delivered_at
    FROM events e
    LEFT JOIN LATERAL (
      SELECT * FROM webhook_deliveries wd WHERE wd.event_id = e.id
       ORDER BY wd.created_at DESC, wd.id DESC LIMIT 1
    ) d ON true
   WHERE e.merchant_id = $merchantId! AND (e.created_at, e.id) < ($afterCreatedAt!, $afterId!)
   ORDER BY e.created_at DESC, e.id DESC LIMIT $limit!`;

/** `listEvents` of one type only, after a cursor. */
const listEventsOfTypeAfter = sql<IListEventsOfTypeAfterQuery>`
  SELECT e.payload, d.status AS "status?", d.attempts AS "attempts?",
         d.last_http_status, d.last_error,
         api_time(d.last_attempt_at) AS last_attempt_at,
         api_time(d.next_attempt_at) AS next_attempt_at, api_time(d.delivered_at) AS delivered_at
    FROM events e
    LEFT JOIN LATERAL (
      SELECT * FROM webhook_deliveries wd WHERE wd.event_id = e.id
       ORDER BY wd.created_at DESC, wd.id DESC LIMIT 1
    ) d ON true
   WHERE e.merchant_id = $merchantId! AND e.type = $type!
     AND (e.created_at, e.id) < ($afterCreatedAt!, $afterId!)
   ORDER BY e.created_at DESC, e.id DESC LIMIT $limit!`;

/** The merchant's event. */
const getEvent = sql<IGetEventQuery>`
  SELECT e.payload, d.status AS "status?", d.attempts AS "attempts?",
         d.last_http_status, d.last_error,
         api_time(d.last_attempt_at) AS last_attempt_at,
         api_time(d.next_attempt_at) AS next_attempt_at, api_time(d.delivered_at) AS delivered_at
    FROM events e
    LEFT JOIN LATERAL (
      SELECT * FROM webhook_deliveries wd WHERE wd.event_id = e.id
       ORDER BY wd.created_at DESC, wd.id DESC LIMIT 1
    ) d ON true
   WHERE e.id = $id! AND e.merchant_id = $merchantId!`;

/** When the merchant's event was recorded (the pool's text of the timestamp). */
const eventCreatedAt = sql<IEventCreatedAtQuery>`
  SELECT created_at FROM events WHERE id = $id! AND merchant_id = $merchantId!`;

/**
 * Every statement on `events`: the table's one owner (issue 22). Its reads are typed by pgtyped
 * from the migrated schema (`npm run db:types`); its insert is composed with the caller's write
 * and the fan-out's (`SqlPart`s, `?` placeholders) into one statement, so it stays untyped text.
 */
@Injectable()
export class EventsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Inserts one merchant's events, at `at`, in one statement: first `before` (a write of the
   * caller's, with `?` placeholders), then the events, then `fanOut` (what the fan-out writes
   * with them, `EventFanOut.afterEvents`).
   */
  async insert(
    tx: SqlTx,
    merchantId: string,
    events: readonly NewEventRow[],
    at: Date,
    fanOut: SqlPart,
    before?: SqlPart,
  ): Promise<void> {
    const params: unknown[] = [...(before?.params ?? [])];
    for (const event of events) params.push(event.id, merchantId, event.type, event.payload, at);
    params.push(...fanOut.params);
    await tx.execute(
      `WITH ${before ? `write AS (${before.sql}), ` : ''}event AS (
         INSERT INTO events (id, merchant_id, type, payload, created_at)
         VALUES ${events.map(() => '(?, ?, ?, ?, ?)').join(', ')}
       )${fanOut.sql}`,
      params,
    );
  }

  /** When the merchant's event was recorded (as the database gave it), or undefined. */
  async createdAt(merchantId: string, id: string): Promise<string | undefined> {
    const [row] = await eventCreatedAt.run({ id, merchantId }, this.db);
    return row?.created_at;
  }

  /**
   * The merchant's events, newest first, optionally of one type, after a cursor: one static
   * statement per combination (a hot list: no `IS NULL OR` conditions in a generic plan).
   */
  async list(merchantId: string, page: EventPage): Promise<EventWithDeliveryRow[]> {
    const { type, after, limit } = page;
    const rows = type
      ? after
        ? await listEventsOfTypeAfter.run(
            { merchantId, type, afterCreatedAt: after.createdAt, afterId: after.id, limit },
            this.db,
          )
        : await listEventsOfType.run({ merchantId, type, limit }, this.db)
      : after
        ? await listEventsAfter.run(
            { merchantId, afterCreatedAt: after.createdAt, afterId: after.id, limit },
            this.db,
          )
        : await listEvents.run({ merchantId, limit }, this.db);
    return eventsWithDelivery(rows);
  }

  async get(merchantId: string, id: string): Promise<EventWithDeliveryRow | undefined> {
    const [row] = eventsWithDelivery(await getEvent.run({ id, merchantId }, this.db));
    return row;
  }
}
