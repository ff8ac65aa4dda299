import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { orderedUuid } from './event-ids';
import { Clock } from '../common/clock';
import { NotFoundError, ValidationError } from '../common/errors/domain-error';
import { isoTimestamp } from '../database/sql';
import { ListEventsQueryDto } from './dto/event.dto';
import { EventResponse } from './dto/event.response';
import { DeliveryStatus } from './entities/webhook-delivery.entity';
import { EVENT_ID_PREFIX, EventType } from './event-types';
import type { SqlTx } from '../database/pg-transaction';

/** PostgreSQL channel that wakes every instance's delivery worker when a delivery is queued. */
export const DELIVERY_CHANNEL = 'webhook_delivery_queued';

const DEFAULT_PAGE = 100;

/** An event to record: the resource as the API returns it, and for a change what it was. */
export interface NewEvent {
  type: EventType;
  object: object;
  previousAttributes?: object;
}

interface EventRow {
  payload: Omit<EventResponse, 'delivery'>;
  status: DeliveryStatus | null;
  attempts: number | null;
  last_attempt_at: string | null;
  last_http_status: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
}

/** Every event with its latest delivery (a LATERAL join on the (event_id, created_at) index). */
const EVENT_SELECT = `SELECT e.payload, d.status, d.attempts, d.last_http_status, d.last_error,
    ${isoTimestamp('d.last_attempt_at', 'last_attempt_at')},
    ${isoTimestamp('d.next_attempt_at', 'next_attempt_at')},
    ${isoTimestamp('d.delivered_at', 'delivered_at')}
  FROM events e
  LEFT JOIN LATERAL (
    SELECT * FROM webhook_deliveries wd WHERE wd.event_id = e.id
    ORDER BY wd.created_at DESC, wd.id DESC LIMIT 1
  ) d ON true`;

/**
 * The transactional outbox and the events API. A change that emits an event calls `record` with
 * the EntityManager of its own transaction, so the change and its event commit or roll back
 * together; the delivery worker (any instance) takes it from there.
 */
@Injectable()
export class EventsService {
  constructor(
    private readonly em: EntityManager,
    private readonly clock: Clock,
  ) {}

  /**
   * Records an event inside the caller's transaction: the event row, a delivery due now when the
   * merchant has a webhook endpoint, and a NOTIFY that wakes the workers once the transaction
   * commits. One statement, one round trip.
   *
   * @param tx the transaction that makes the change.
   * @param object the resource exactly as the API returns it.
   * @param previousAttributes for a change, the changed fields' values before it (Stripe's
   *   `previous_attributes`), as `data.previousAttributes`.
   * @returns the event id (`evt_...`).
   */
  async record(
    tx: SqlTx,
    merchantId: string,
    type: EventType,
    object: object,
    previousAttributes?: object,
  ): Promise<string> {
    const [id] = await this.recordAll(tx, merchantId, [{ type, object, previousAttributes }]);
    return id;
  }

  /**
   * Records several events of one merchant, in order, as `record` does each, in one statement.
   * `after` is a write of the caller's (an `INSERT`, `UPDATE` or `DELETE` with `?` placeholders)
   * that runs first in the same statement, so a change and its events cost one round trip.
   *
   * @returns the event ids (`evt_...`), in the order given.
   */
  async recordAll(
    tx: SqlTx,
    merchantId: string,
    events: NewEvent[],
    after?: { sql: string; params: unknown[] },
  ): Promise<string[]> {
    if (!tx.isInTransaction()) throw new Error('EventsService.record needs a transaction');
    if (events.length === 0) throw new Error('EventsService.recordAll needs an event');
    const now = this.clock.now();
    const createdAt = now.toISOString();
    // One timestamp for the batch; ids that ascend across everything this process records
    // (`orderedUuid`), so the list's order (created_at, id) keeps events of one domain time in
    // the order they happened, within a batch and across batches of one transaction.
    const rowIds = events.map(() => orderedUuid());
    const ids: string[] = [];
    const eventParams: unknown[] = [];
    const deliveryParams: unknown[] = [];
    for (const [i, { type, object, previousAttributes }] of events.entries()) {
      const id = rowIds[i];
      const publicId = `${EVENT_ID_PREFIX}${id}`;
      const payload = JSON.stringify({
        id: publicId,
        type,
        createdAt,
        data: previousAttributes ? { object, previousAttributes } : { object },
      });
      ids.push(publicId);
      eventParams.push(id, merchantId, type, payload, now);
      deliveryParams.push(randomUUID(), id);
    }
    const rows = (n: number): string[] =>
      Array<string>(events.length).fill(`(${Array<string>(n).fill('?').join(', ')})`);
    await tx.execute(
      `WITH ${after ? `write AS (${after.sql}), ` : ''}event AS (
         INSERT INTO events (id, merchant_id, type, payload, created_at)
         VALUES ${rows(5).join(', ')}
       ), delivery AS (
         INSERT INTO webhook_deliveries
           (id, event_id, merchant_id, status, attempts, next_attempt_at, created_at, updated_at)
         SELECT d.id::uuid, d.event_id::uuid, m.id, 'pending', 0, ?, ?, ?
           FROM merchants m, (VALUES ${rows(2).join(', ')}) AS d (id, event_id)
          WHERE m.id = ? AND m.webhook_url IS NOT NULL
         RETURNING 1
       )
       SELECT pg_notify(?, '') FROM delivery`,
      [
        ...(after?.params ?? []),
        ...eventParams,
        now,
        now,
        now,
        ...deliveryParams,
        merchantId,
        DELIVERY_CHANNEL,
      ],
    );
    return ids;
  }

  /** Newest first, optionally of one type, paged by `limit` and `startingAfter`. */
  async list(merchantId: string, query: ListEventsQueryDto): Promise<EventResponse[]> {
    const params: unknown[] = [merchantId];
    let where = 'e.merchant_id = ?';
    if (query.type) {
      where += ' AND e.type = ?';
      params.push(query.type);
    }
    if (query.startingAfter) {
      const cursorId = query.startingAfter.slice(EVENT_ID_PREFIX.length).toLowerCase();
      const cursor = await this.em
        .getConnection()
        .execute<{ created_at: string }[]>(
          'SELECT created_at FROM events WHERE id = ? AND merchant_id = ?',
          [cursorId, merchantId],
        );
      if (!cursor[0]) {
        throw new ValidationError('startingAfter: no such event', [
          { field: 'startingAfter', message: 'no such event' },
        ]);
      }
      where += ' AND (e.created_at, e.id) < (?, ?)';
      params.push(cursor[0].created_at, cursorId);
    }
    params.push(query.limit ?? DEFAULT_PAGE);
    const rows = await this.em
      .getConnection()
      .execute<EventRow[]>(
        `${EVENT_SELECT} WHERE ${where} ORDER BY e.created_at DESC, e.id DESC LIMIT ?`,
        params,
      );
    return rows.map(toEventResponse);
  }

  /** One event with its latest delivery. @throws NotFoundError when absent or another merchant's. */
  async get(merchantId: string, eventId: string): Promise<EventResponse> {
    const rows = await this.em
      .getConnection()
      .execute<EventRow[]>(`${EVENT_SELECT} WHERE e.id = ? AND e.merchant_id = ?`, [
        eventId,
        merchantId,
      ]);
    if (!rows[0]) throw new NotFoundError('Event');
    return toEventResponse(rows[0]);
  }

  /**
   * Queues a new delivery of the event, due now, to the endpoint configured now. Earlier
   * deliveries are left as they are. Receivers dedupe by event id.
   * @throws NotFoundError when absent or another merchant's.
   * @throws ValidationError when the merchant has no webhook endpoint.
   */
  async redeliver(merchantId: string, eventId: string): Promise<EventResponse> {
    const now = this.clock.now();
    // The response shows the delivery as queued: a worker may claim it before a re-read could.
    const rows = await this.em.getConnection().execute<EventRow[]>(
      `WITH target AS (
         SELECT e.id, e.payload, m.webhook_url FROM events e
           JOIN merchants m ON m.id = e.merchant_id
          WHERE e.id = ? AND e.merchant_id = ?
       ), queued AS (
         INSERT INTO webhook_deliveries
           (id, event_id, merchant_id, status, attempts, next_attempt_at, created_at, updated_at)
         SELECT ?, target.id, ?, 'pending', 0, ?, stamp, stamp FROM target,
           -- Later than every earlier delivery of the event, even within one millisecond, so
           -- "latest delivery" (created_at DESC) is this one.
           LATERAL (SELECT GREATEST(?::timestamptz, max(created_at) + interval '1 millisecond')
                      AS stamp FROM webhook_deliveries WHERE event_id = target.id) s
          WHERE target.webhook_url IS NOT NULL
         RETURNING *, pg_notify(?, '')
       )
       SELECT t.payload, d.status, d.attempts, d.last_http_status, d.last_error,
              ${isoTimestamp('d.last_attempt_at', 'last_attempt_at')},
              ${isoTimestamp('d.next_attempt_at', 'next_attempt_at')},
              ${isoTimestamp('d.delivered_at', 'delivered_at')}
         FROM target t LEFT JOIN queued d ON true`,
      [eventId, merchantId, randomUUID(), merchantId, now, now, DELIVERY_CHANNEL],
    );
    if (!rows[0]) throw new NotFoundError('Event');
    if (rows[0].status === null) {
      const message = 'no webhook endpoint is configured; set one with PUT /api/settings/webhook';
      throw new ValidationError(`webhookUrl: ${message}`, [{ field: 'webhookUrl', message }]);
    }
    return toEventResponse(rows[0]);
  }
}

function toEventResponse(row: EventRow): EventResponse {
  return {
    ...row.payload,
    delivery:
      row.status === null
        ? null
        : {
            status: row.status,
            attempts: row.attempts ?? 0,
            lastAttemptAt: row.last_attempt_at,
            lastHttpStatus: row.last_http_status,
            lastError: row.last_error,
            nextAttemptAt: row.next_attempt_at,
            deliveredAt: row.delivered_at,
          },
  };
}
