import { Injectable } from '@nestjs/common';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { isoTimestamp } from '../database/sql';
import type { EventWithDeliveryRow, SqlPart } from './event-fan-out';

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

/**
 * Every event with its latest delivery (a LATERAL join on the (event_id, created_at) index).
 * Reads `webhook_deliveries` (the webhooks module's) in the same statement.
 */
const EVENT_SELECT = `SELECT e.payload, d.status, d.attempts, d.last_http_status, d.last_error,
    ${isoTimestamp('d.last_attempt_at', 'last_attempt_at')},
    ${isoTimestamp('d.next_attempt_at', 'next_attempt_at')},
    ${isoTimestamp('d.delivered_at', 'delivered_at')}
  FROM events e
  LEFT JOIN LATERAL (
    SELECT * FROM webhook_deliveries wd WHERE wd.event_id = e.id
    ORDER BY wd.created_at DESC, wd.id DESC LIMIT 1
  ) d ON true`;

/** Every statement on `events`: the table's one owner (issue 22). */
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
    const rows = await this.db.execute<{ created_at: string }[]>(
      'SELECT created_at FROM events WHERE id = ? AND merchant_id = ?',
      [id, merchantId],
    );
    return rows[0]?.created_at;
  }

  /** The merchant's events, newest first, optionally of one type, after a cursor. */
  async list(merchantId: string, page: EventPage): Promise<EventWithDeliveryRow[]> {
    const params: unknown[] = [merchantId];
    let where = 'e.merchant_id = ?';
    if (page.type) {
      where += ' AND e.type = ?';
      params.push(page.type);
    }
    if (page.after) {
      where += ' AND (e.created_at, e.id) < (?, ?)';
      params.push(page.after.createdAt, page.after.id);
    }
    params.push(page.limit);
    return this.db.execute<EventWithDeliveryRow[]>(
      `${EVENT_SELECT} WHERE ${where} ORDER BY e.created_at DESC, e.id DESC LIMIT ?`,
      params,
    );
  }

  async get(merchantId: string, id: string): Promise<EventWithDeliveryRow | undefined> {
    const rows = await this.db.execute<EventWithDeliveryRow[]>(
      `${EVENT_SELECT} WHERE e.id = ? AND e.merchant_id = ?`,
      [id, merchantId],
    );
    return rows[0];
  }
}
