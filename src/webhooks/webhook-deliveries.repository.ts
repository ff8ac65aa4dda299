import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { sql } from '../database/typed-sql';
import { Db } from '../database/db';
import type { DeliveryStatus } from '../events/delivery-status';
import {
  type EventFanOut,
  type EventWithDeliveryRow,
  eventsWithDelivery,
  type SqlPart,
} from '../events/event-fan-out';
import type {
  IBacklogQuery,
  IBacklogResult,
  IClaimDeliveriesQuery,
  IClaimDeliveriesResult,
  IHandBackDeliveriesQuery,
  IPruneFinishedDeliveriesQuery,
  IRedeliverQuery,
  IWriteDeliveryResultsQuery,
} from './webhook-deliveries.repository.types';

/** PostgreSQL channel that wakes every instance's delivery worker when a delivery is queued. */
export const DELIVERY_CHANNEL = 'webhook_delivery_queued';

/**
 * A claimed delivery with everything needed to attempt it. Timestamps arrive as strings from
 * the pool's connections (MikroORM's type parsers), as PostgreSQL writes them.
 */
export type ClaimedDeliveryRow = IClaimDeliveriesResult;

/** Deliveries not made yet, and when the oldest was queued (domain time, as text; null: none). */
export type DeliveryBacklogRow = IBacklogResult;

/** What a claim asks for. */
export interface DeliveryClaim {
  /** Domain time: deliveries due by then. */
  now: Date;
  limit: number;
  /** Candidates looked at (before each merchant's room is applied). */
  candidates: number;
  /** This instance's deliveries in flight, per merchant id. */
  inFlight: ReadonlyMap<string, number>;
  /** Deliveries one merchant may have in flight. */
  perMerchantCap: number;
  lockToken: string;
  leaseMs: number;
}

/** The result of one attempt, written under the claim's `lock_token`. */
export interface DeliveryResultRow {
  id: string;
  lock_token: string;
  status: DeliveryStatus;
  /** Storable as it is (`storableError`). */
  error: string | null;
  http_status: number | null;
  /** ISO 8601, or null when no attempt follows. */
  next_attempt_at: string | null;
  /** ISO 8601: domain time the attempt finished. */
  at: string;
}

/**
 * A new delivery of the merchant's event, due at `at`, to the endpoint configured now (none
 * when the merchant has no endpoint), with a NOTIFY that wakes the workers once it commits; and
 * the event with that delivery (its columns null when none was queued), in one statement (a
 * worker may claim the delivery before a re-read could). Its `created_at` is later than every
 * earlier delivery of the event, even within one millisecond, so "latest delivery"
 * (created_at DESC) is this one. The delivery's `status` and `attempts` are forced nullable
 * (`?`): pgtyped takes the inserted table's NOT NULL through the outer join.
 */
const redeliver = sql<IRedeliverQuery>`
  WITH target AS (
    SELECT e.id, e.payload, m.webhook_url FROM events e
      JOIN merchants m ON m.id = e.merchant_id
     WHERE e.id = $eventId! AND e.merchant_id = $merchantId!
  ), queued AS (
    INSERT INTO webhook_deliveries
      (id, event_id, merchant_id, status, attempts, next_attempt_at, created_at, updated_at)
    SELECT $id!, target.id, $merchantId!, 'pending', 0, $at!, stamp, stamp FROM target,
      LATERAL (SELECT GREATEST($at!::timestamptz, max(created_at) + interval '1 millisecond')
                 AS stamp FROM webhook_deliveries WHERE event_id = target.id) s
     WHERE target.webhook_url IS NOT NULL
    RETURNING *, pg_notify($channel!, '')
  )
  SELECT t.payload, d.status AS "status?", d.attempts AS "attempts?",
         d.last_http_status, d.last_error,
         api_time(d.last_attempt_at) AS last_attempt_at,
         api_time(d.next_attempt_at) AS next_attempt_at,
         api_time(d.delivered_at) AS delivered_at
    FROM target t LEFT JOIN queued d ON true`;

/**
 * Leases up to `limit` due deliveries (due: domain time `now`; the lease: the database's real
 * time) and returns them with their event and endpoint. `busy` is this instance's deliveries in
 * flight per merchant (a JSON object), `cap` one merchant's most.
 *
 * Chooses without locking: the oldest candidates, each merchant's within its room, oldest first
 * up to `limit`, which gives each merchant its quota. Then locks, per merchant, that many of its
 * candidates in the same order (`FOR UPDATE SKIP LOCKED` under `LIMIT`: only the rows taken are
 * locked; locking candidates that end up unclaimed would cost a write each), reaching past the
 * rows another instance's claim holds to the merchant's next ones, up to twice its room. (Locking
 * only the rows chosen, two instances claiming at once chose the same rows and the second came
 * back with few or none: its merchant then waited for the next poll.) `lock_token` (set here) and
 * the payload's text are forced non-null (`!`): pgtyped sees a nullable column and an
 * expression. (Each hint costs a renamed property per row, so the columns it types right have
 * none.) The lease changes no indexed column (`updated_at`, which the finished deliveries'
 * index holds, is the result's to set), so with the table's free space per page (fillfactor 80)
 * it is written as a heap-only tuple: no new entry in any index.
 */
const claimDeliveries = sql<IClaimDeliveriesQuery>`
  WITH candidates AS (
    SELECT id, merchant_id, next_attempt_at FROM webhook_deliveries
     WHERE status = 'pending' AND next_attempt_at <= $now!
       AND (leased_until IS NULL OR leased_until < now())
       AND COALESCE(($busy!::jsonb ->> merchant_id::text)::int, 0) < $cap!
     ORDER BY next_attempt_at
     LIMIT $candidates!
  ), ranked AS (
    SELECT id, merchant_id, next_attempt_at,
           row_number() OVER (PARTITION BY merchant_id ORDER BY next_attempt_at, id) AS rn,
           $cap! - COALESCE(($busy!::jsonb ->> merchant_id::text)::int, 0) AS room
      FROM candidates
  ), quota AS (
    SELECT merchant_id, count(*) AS n FROM (
      SELECT merchant_id FROM ranked WHERE rn <= room ORDER BY next_attempt_at LIMIT $limit!
    ) chosen GROUP BY merchant_id
  ), due AS (
    SELECT locked.id FROM quota CROSS JOIN LATERAL (
      SELECT d.id FROM webhook_deliveries d
        JOIN ranked r ON r.id = d.id
       WHERE r.merchant_id = quota.merchant_id AND r.rn <= 2 * r.room
         AND d.status = 'pending' AND (d.leased_until IS NULL OR d.leased_until < now())
       ORDER BY r.rn
       LIMIT quota.n
         FOR UPDATE OF d SKIP LOCKED
    ) locked
  ), claimed AS (
    UPDATE webhook_deliveries d
       SET attempts = d.attempts + 1, lock_token = $lockToken!,
           leased_until = now() + $leaseMs! * interval '1 millisecond'
      FROM due WHERE d.id = due.id
    RETURNING d.id, d.merchant_id, d.lock_token, d.attempts, d.created_at, d.event_id
  )
  SELECT c.id, c.merchant_id, c.lock_token AS "lock_token!", c.attempts, c.created_at,
         c.event_id, e.type, e.payload::text AS "payload!", m.webhook_url, m.webhook_secret,
         m.previous_webhook_secret, m.previous_webhook_secret_expires_at
    FROM claimed c
    JOIN events e ON e.id = c.event_id
    JOIN merchants m ON m.id = c.merchant_id`;

/**
 * Writes each result (`results`: a JSON array of `DeliveryResultRow`; `ids`: their ids), unless
 * its lease was lost to another instance meanwhile. A skipped delivery sent nothing: its attempt
 * is not counted and the last real attempt's details stay. The rows are found by `ids` on the
 * primary key: the planner takes `jsonb_to_recordset` for 100 rows whatever it holds, and on a
 * table of a few tens of thousands of rows it hash-joined them against a sequential scan of the
 * whole table (3 ms for a batch of 8, measured by `EXPLAIN ANALYZE`; 0.3 ms by the index).
 */
const writeDeliveryResults = sql<IWriteDeliveryResultsQuery>`
  UPDATE webhook_deliveries d
     SET status = r.status,
         attempts = CASE WHEN r.status = 'skipped' THEN d.attempts - 1 ELSE d.attempts END,
         last_error = r.error,
         last_http_status =
           CASE WHEN r.status = 'skipped' THEN d.last_http_status ELSE r.http_status END,
         last_attempt_at = CASE WHEN r.status = 'skipped' THEN d.last_attempt_at ELSE r.at END,
         next_attempt_at = r.next_attempt_at,
         delivered_at = CASE WHEN r.status = 'delivered' THEN r.at END,
         lock_token = NULL, leased_until = NULL, updated_at = r.at
    FROM jsonb_to_recordset($results!::jsonb) AS r(id uuid, lock_token uuid, status text,
         error text, http_status smallint, next_attempt_at timestamptz, at timestamptz)
   WHERE d.id = ANY($ids!::uuid[]) AND d.id = r.id AND d.lock_token = r.lock_token`;

/** The pending deliveries (the rows of `webhook_deliveries_due_idx`): how many, the oldest's queuing. */
const backlog = sql<IBacklogQuery>`
  SELECT count(*)::int AS "pending!", min(created_at) AS oldest
    FROM webhook_deliveries WHERE status = 'pending'`;

/**
 * Hands back leased deliveries whose attempt was abandoned (the instance is shutting down):
 * each, only while its `lock_token` still holds it, is due again at `now` (domain time) with its
 * lease ended, and a NOTIFY wakes the other instances' workers, which take it up at once. The
 * POST stays counted and is recorded as an attempt without an answer (the receiver may have got
 * it: receivers dedupe by event id); a late result under the old token is refused
 * (`writeDeliveryResults`' fence).
 */
const handBackDeliveries = sql<IHandBackDeliveriesQuery>`
  UPDATE webhook_deliveries d
     SET lock_token = NULL, leased_until = NULL, next_attempt_at = $now!, updated_at = $now!,
         last_attempt_at = $now!, last_http_status = NULL, last_error = $error!
    FROM jsonb_to_recordset($jobs!::jsonb) AS j(id uuid, lock_token uuid)
   WHERE d.id = j.id AND d.lock_token = j.lock_token
  RETURNING d.id, pg_notify($channel!, '')`;

/**
 * Deletes up to `limit` final deliveries (delivered, failed, skipped: never a pending one) whose
 * last change is older than `before`, on the partial index of final deliveries by age
 * (`webhook_deliveries_final_idx`), skipping rows another instance is deleting.
 */
const pruneFinishedDeliveries = sql<IPruneFinishedDeliveriesQuery>`
  DELETE FROM webhook_deliveries WHERE id IN (
    SELECT id FROM webhook_deliveries
     WHERE status <> 'pending' AND updated_at < $before!
     LIMIT $limit!
       FOR UPDATE SKIP LOCKED)
  RETURNING id`;

/**
 * Every statement on `webhook_deliveries`: the table's one owner (issue 22). It is also the
 * events outbox's fan-out (`EventFanOut`): the deliveries written with each event. Its
 * statements read `events` (the payload) and `merchants` (the endpoint and secrets).
 */
@Injectable()
export class WebhookDeliveriesRepository implements EventFanOut {
  constructor(private readonly db: Db) {}

  /**
   * A delivery of each event, due at `at`, when the merchant has a webhook endpoint, and a
   * NOTIFY that wakes the workers once the transaction commits.
   */
  afterEvents(merchantId: string, eventIds: readonly string[], at: Date): SqlPart {
    return {
      sql: `, delivery AS (
         INSERT INTO webhook_deliveries
           (id, event_id, merchant_id, status, attempts, next_attempt_at, created_at, updated_at)
         SELECT d.id::uuid, d.event_id::uuid, m.id, 'pending', 0, ?, ?, ?
           FROM merchants m, (VALUES ${eventIds.map(() => '(?, ?)').join(', ')}) AS d (id, event_id)
          WHERE m.id = ? AND m.webhook_url IS NOT NULL
         RETURNING 1
       )
       SELECT pg_notify(?, '') FROM delivery`,
      params: [
        at,
        at,
        at,
        ...eventIds.flatMap((id) => [randomUUID(), id]),
        merchantId,
        DELIVERY_CHANNEL,
      ],
    };
  }

  /**
   * A new delivery of the event, due at `at`, to the endpoint configured now, in one statement
   * that also reads the event back with it (a worker may claim it before a re-read could).
   * Its `created_at` is later than every earlier delivery of the event, even within one
   * millisecond, so "latest delivery" (created_at DESC) is this one.
   */
  async redeliver(
    merchantId: string,
    eventId: string,
    at: Date,
  ): Promise<EventWithDeliveryRow | undefined> {
    const rows = await redeliver.run(
      { eventId, merchantId, id: randomUUID(), at, channel: DELIVERY_CHANNEL },
      this.db,
    );
    return eventsWithDelivery(rows)[0];
  }

  /**
   * Leases up to `limit` due deliveries and returns them with their event and endpoint. Due is
   * domain time; the lease is the database's real time. A merchant already at its cap on this
   * instance is passed over, and no merchant gets more than its remaining room in one batch.
   */
  claim(claim: DeliveryClaim): Promise<ClaimedDeliveryRow[]> {
    return claimDeliveries.run(
      {
        now: claim.now,
        busy: JSON.stringify(Object.fromEntries(claim.inFlight)),
        cap: claim.perMerchantCap,
        candidates: claim.candidates,
        limit: claim.limit,
        lockToken: claim.lockToken,
        leaseMs: claim.leaseMs,
      },
      this.db,
    );
  }

  /** Deliveries not made yet (see `backlog`), for the metrics. */
  async backlog(): Promise<DeliveryBacklogRow> {
    const [row] = await backlog.run(undefined, this.db);
    return row;
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
    const handed = await handBackDeliveries.run(
      { jobs: JSON.stringify(rows), now, error, channel: DELIVERY_CHANNEL },
      this.db,
    );
    return handed.map((row) => row.id);
  }

  /** Deletes up to `limit` final deliveries last changed before `before`. @returns how many. */
  async pruneFinished(before: Date, limit: number): Promise<number> {
    const deleted = await pruneFinishedDeliveries.run({ before, limit }, this.db);
    return deleted.length;
  }

  /**
   * Writes each result, unless its lease was lost to another instance meanwhile. A skipped
   * delivery sent nothing: its attempt is not counted and the last real attempt's details stay.
   */
  async writeResults(results: readonly DeliveryResultRow[]): Promise<void> {
    await writeDeliveryResults.run(
      { results: JSON.stringify(results), ids: results.map((result) => result.id) },
      this.db,
    );
  }
}
