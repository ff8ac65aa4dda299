import { Inject, Injectable } from '@nestjs/common';
import { orderedUuid } from './event-ids';
import { Clock } from '../common/clock';
import { NotFoundError, ValidationError } from '../common/errors/domain-error';
import { ListEventsQueryDto } from './dto/event.dto';
import { EventResponse } from './dto/event.response';
import { EVENT_FAN_OUT, EventFanOut, EventWithDeliveryRow } from './event-fan-out';
import { EVENT_ID_PREFIX, EventType } from './event-types';
import { EventsRepository } from './events.repository';
import type { SqlTx } from '../database/pg-transaction';

const DEFAULT_PAGE = 100;

/** An event to record: the resource as the API returns it, and for a change what it was. */
export interface NewEvent {
  type: EventType;
  object: object;
  previousAttributes?: object;
}

/**
 * The transactional outbox and the events API. A change that emits an event calls `record` with
 * the handle of its own transaction, so the change and its event commit or roll back together;
 * the event's deliveries are written with it (the `EventFanOut` the webhooks module provides),
 * and the delivery worker (any instance) takes it from there.
 */
@Injectable()
export class EventsService {
  constructor(
    private readonly events: EventsRepository,
    @Inject(EVENT_FAN_OUT) private readonly fanOut: EventFanOut,
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
    const rows = events.map(({ type, object, previousAttributes }, i) => {
      const publicId = `${EVENT_ID_PREFIX}${rowIds[i]}`;
      ids.push(publicId);
      const payload = JSON.stringify({
        id: publicId,
        type,
        createdAt,
        data: previousAttributes ? { object, previousAttributes } : { object },
      });
      return { id: rowIds[i], type, payload };
    });
    // The deliveries (the fan-out's) are written in the same statement: one round trip.
    const fanOut = this.fanOut.afterEvents(merchantId, rowIds, now);
    await this.events.insert(tx, merchantId, rows, now, fanOut, after);
    return ids;
  }

  /** Newest first, optionally of one type, paged by `limit` and `startingAfter`. */
  async list(merchantId: string, query: ListEventsQueryDto): Promise<EventResponse[]> {
    let after: { createdAt: string; id: string } | undefined;
    if (query.startingAfter) {
      const cursorId = query.startingAfter.slice(EVENT_ID_PREFIX.length).toLowerCase();
      const createdAt = await this.events.createdAt(merchantId, cursorId);
      if (createdAt === undefined) {
        throw new ValidationError('startingAfter: no such event', [
          { field: 'startingAfter', message: 'no such event' },
        ]);
      }
      after = { createdAt, id: cursorId };
    }
    const rows = await this.events.list(merchantId, {
      type: query.type,
      after,
      limit: query.limit ?? DEFAULT_PAGE,
    });
    return rows.map(toEventResponse);
  }

  /** One event with its latest delivery. @throws NotFoundError when absent or another merchant's. */
  async get(merchantId: string, eventId: string): Promise<EventResponse> {
    const row = await this.events.get(merchantId, eventId);
    if (!row) throw new NotFoundError('Event');
    return toEventResponse(row);
  }

  /**
   * Queues a new delivery of the event, due now, to the endpoint configured now. Earlier
   * deliveries are left as they are. Receivers dedupe by event id.
   * @throws NotFoundError when absent or another merchant's.
   * @throws ValidationError when the merchant has no webhook endpoint.
   */
  async redeliver(merchantId: string, eventId: string): Promise<EventResponse> {
    // The response shows the delivery as queued: a worker may claim it before a re-read could.
    const row = await this.fanOut.redeliver(merchantId, eventId, this.clock.now());
    if (!row) throw new NotFoundError('Event');
    if (row.status === null) {
      const message = 'no webhook endpoint is configured; set one with PUT /api/settings/webhook';
      throw new ValidationError(`webhookUrl: ${message}`, [{ field: 'webhookUrl', message }]);
    }
    return toEventResponse(row);
  }
}

function toEventResponse(row: EventWithDeliveryRow): EventResponse {
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
