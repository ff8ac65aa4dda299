import { Injectable } from '@nestjs/common';
import { sql } from '../database/typed-sql';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import type { UsageBreakdown } from '../payments/entities/payment.entity';
import type {
  IBreakdownsQuery,
  IClosePeriodQuery,
  IEventsOfPeriodQuery,
  IExistingEventsQuery,
  IFreezePeriodQuery,
  IInsertEventsQuery,
  ILockPeriodsQuery,
  IMeteredSubscriptionsQuery,
  IMeteredSubscriptionsResult,
  IOpenPeriodsQuery,
  IPeriodTotalQuery,
} from './usage.repository.types';

/** A subscription as ingestion and the charge read it, with its plan's meter (null: none). */
export type MeteredSubscription = IMeteredSubscriptionsResult;

/** Events as they are written: one array per column, in the same order. */
export interface EventColumns {
  eventIds: string[];
  subscriptionIds: string[];
  meters: string[];
  quantities: string[];
  periods: number[];
  occurredAt: string[];
}

/*
 * Usage reads the subscriptions and plans it meters in the statements that need them (a join:
 * docs/architecture.md lists it); it writes only its own tables.
 */

/**
 * The merchant's subscriptions named, by id or as the metered subscriptions of the customers
 * named (live: Active or PastDue), with what ingestion decides a period by.
 */
const meteredSubscriptions = sql<IMeteredSubscriptionsQuery>`
  SELECT s.id, s.customer_id, s.status, s.periods_charged,
         api_time(s.current_period_end) AS "current_period_end!", p.interval_seconds,
         p.meter_name, p.usage_grace_seconds, p.meter_unit_price::text AS meter_unit_price,
         p.meter_unit_size::text AS meter_unit_size,
         p.meter_included_units::text AS meter_included_units, p.meter_cap::text AS meter_cap,
         p.amount::text AS "amount!"
    FROM subscriptions s JOIN plans p ON p.id = s.plan_id
   WHERE s.merchant_id = $merchantId!
     AND (s.id = ANY($ids!::uuid[])
          OR (s.customer_id = ANY($customerIds!::uuid[]) AND s.status IN ('Active', 'PastDue')
              AND p.meter_name IS NOT NULL))`;

/** Which of these ids the merchant has sent before. */
const existingEvents = sql<IExistingEventsQuery>`
  SELECT event_id FROM usage_events
   WHERE merchant_id = $merchantId! AND event_id = ANY($eventIds!::text[])`;

/** The periods the events count toward, created open where they are new. */
const openPeriods = sql<IOpenPeriodsQuery>`
  INSERT INTO usage_periods (subscription_id, period, merchant_id, created_at, updated_at)
  SELECT u.subscription_id, u.period, $merchantId!, $at!, $at!
    FROM unnest($subscriptionIds!::uuid[], $periods!::int[]) AS u(subscription_id, period)
   ORDER BY u.subscription_id, u.period
  ON CONFLICT (subscription_id, period) DO NOTHING`;

/**
 * Those periods, held `FOR SHARE` until the caller's transaction ends: a close (an update) waits
 * for the events written meanwhile, and these wait for a close under way.
 */
const lockPeriods = sql<ILockPeriodsQuery>`
  SELECT up.subscription_id, up.period, up.closed_at IS NOT NULL AS "closed!"
    FROM usage_periods up
    JOIN unnest($subscriptionIds!::uuid[], $periods!::int[]) AS u(subscription_id, period)
      ON up.subscription_id = u.subscription_id AND up.period = u.period
   ORDER BY up.subscription_id, up.period
     FOR SHARE OF up`;

/** The events, one statement for the batch; an id sent before is skipped. */
const insertEvents = sql<IInsertEventsQuery>`
  INSERT INTO usage_events (merchant_id, event_id, subscription_id, meter, quantity, period,
    occurred_at, created_at)
  SELECT $merchantId!, e.event_id, e.subscription_id, e.meter, e.quantity, e.period,
         e.occurred_at::timestamptz, $at!
    FROM unnest($eventIds!::text[], $subscriptionIds!::uuid[], $meters!::text[],
                $quantities!::bigint[], $periods!::int[], $occurredAt!::text[])
      AS e(event_id, subscription_id, meter, quantity, period, occurred_at)
  ON CONFLICT (merchant_id, event_id) DO NOTHING
  RETURNING event_id`;

/** Closes the period (or finds it closed): waits for ingestion holding it. */
const closePeriod = sql<IClosePeriodQuery>`
  INSERT INTO usage_periods AS up (subscription_id, period, merchant_id, closed_at, created_at,
    updated_at)
  VALUES ($subscriptionId!, $period!, $merchantId!, $at!, $at!, $at!)
  ON CONFLICT (subscription_id, period)
  DO UPDATE SET closed_at = COALESCE(up.closed_at, EXCLUDED.closed_at),
                updated_at = CASE WHEN up.closed_at IS NULL THEN EXCLUDED.updated_at
                                  ELSE up.updated_at END
  RETURNING up.charged_amount::text AS charged_amount`;

/** The period's usage (millionths of a unit) and its event count. */
const periodTotal = sql<IPeriodTotalQuery>`
  SELECT COALESCE(sum(quantity), 0)::text AS "units!", count(*)::int AS "events!"
    FROM usage_events WHERE subscription_id = $subscriptionId! AND period = $period!`;

/** Freezes what a closed period came to, once: @returns the row when this call froze it. */
const freezePeriod = sql<IFreezePeriodQuery>`
  UPDATE usage_periods SET units = $units!::bigint, usage_amount = $usageAmount!::bigint,
         charged_amount = $chargedAmount!::bigint, breakdown = $breakdown!::jsonb,
         updated_at = $at!
   WHERE subscription_id = $subscriptionId! AND period = $period! AND closed_at IS NOT NULL
     AND units IS NULL
  RETURNING subscription_id`;

/** The frozen breakdowns of these periods (the charges that billed them). */
const breakdowns = sql<IBreakdownsQuery>`
  SELECT up.subscription_id, up.period, up.breakdown
    FROM usage_periods up
    JOIN unnest($subscriptionIds!::uuid[], $periods!::int[]) AS u(subscription_id, period)
      ON up.subscription_id = u.subscription_id AND up.period = u.period
   WHERE up.breakdown IS NOT NULL`;

/** A period's events for the usage report: whether it is closed, and what it holds. */
const eventsOfPeriod = sql<IEventsOfPeriodQuery>`
  SELECT api_time(up.closed_at) AS closed_at, up.breakdown
    FROM usage_periods up WHERE up.subscription_id = $subscriptionId! AND up.period = $period!`;

/** `usage_events` and `usage_periods`: the usage module's tables. */
@Injectable()
export class UsageRepository {
  constructor(private readonly db: Db) {}

  subscriptions(
    tx: SqlTx | Db,
    merchantId: string,
    ids: string[],
    customerIds: string[],
  ): Promise<MeteredSubscription[]> {
    return meteredSubscriptions.run({ merchantId, ids, customerIds }, tx);
  }

  async existing(tx: SqlTx, merchantId: string, eventIds: string[]): Promise<Set<string>> {
    const rows = await existingEvents.run({ merchantId, eventIds }, tx);
    return new Set(rows.map((r) => r.event_id));
  }

  /** Opens what is new and holds every one of the periods: @returns the closed ones. */
  async holdPeriods(
    tx: SqlTx,
    merchantId: string,
    periods: { subscriptionId: string; period: number }[],
    at: Date,
  ): Promise<{ subscriptionId: string; period: number }[]> {
    // In one order (subscription, period): two batches opening the same new periods never
    // wait on each other crosswise (a deadlock).
    const sorted = [...periods].sort((a, b) =>
      a.subscriptionId === b.subscriptionId
        ? a.period - b.period
        : a.subscriptionId < b.subscriptionId
          ? -1
          : 1,
    );
    const subscriptionIds = sorted.map((p) => p.subscriptionId);
    const numbers = sorted.map((p) => p.period);
    await openPeriods.run({ merchantId, subscriptionIds, periods: numbers, at }, tx);
    const held = await lockPeriods.run({ subscriptionIds, periods: numbers }, tx);
    return held
      .filter((p) => p.closed)
      .map((p) => ({ subscriptionId: p.subscription_id, period: p.period }));
  }

  /** @returns the ids written (those not sent before). */
  async insert(tx: SqlTx, merchantId: string, events: EventColumns, at: Date): Promise<string[]> {
    const rows = await insertEvents.run({ merchantId, ...events, at }, tx);
    return rows.map((r) => r.event_id);
  }

  /** Closes the period: what was charged for it when it was frozen before (else null). */
  async close(
    tx: SqlTx,
    key: { merchantId: string; subscriptionId: string; period: number },
    at: Date,
  ): Promise<{ charged: string | null }> {
    const [row] = await closePeriod.run({ ...key, at }, tx);
    return { charged: row.charged_amount };
  }

  async total(
    tx: SqlTx | Db,
    subscriptionId: string,
    period: number,
  ): Promise<{ units: bigint; events: number }> {
    const [row] = await periodTotal.run({ subscriptionId, period }, tx);
    return { units: BigInt(row.units), events: row.events };
  }

  /** @returns whether this call froze it (false: it was frozen already). */
  async freeze(
    tx: SqlTx,
    key: { subscriptionId: string; period: number },
    figures: { units: bigint; usageAmount: bigint; chargedAmount: bigint },
    breakdown: UsageBreakdown,
    at: Date,
  ): Promise<boolean> {
    const rows = await freezePeriod.run(
      {
        ...key,
        units: figures.units.toString(),
        usageAmount: figures.usageAmount.toString(),
        chargedAmount: figures.chargedAmount.toString(),
        breakdown: JSON.stringify(breakdown),
        at,
      },
      tx,
    );
    return rows.length === 1;
  }

  /** The frozen breakdowns of these periods, by `subscriptionId:period`. */
  async breakdowns(
    tx: SqlTx,
    periods: { subscriptionId: string; period: number }[],
  ): Promise<Map<string, UsageBreakdown>> {
    const rows = await breakdowns.run(
      {
        subscriptionIds: periods.map((p) => p.subscriptionId),
        periods: periods.map((p) => p.period),
      },
      tx,
    );
    return new Map(
      rows.map((r) => [
        `${r.subscription_id}:${r.period}`,
        r.breakdown as unknown as UsageBreakdown,
      ]),
    );
  }

  async periodState(
    subscriptionId: string,
    period: number,
  ): Promise<{ closedAt: string | null; breakdown: UsageBreakdown | null } | null> {
    const [row] = await eventsOfPeriod.run({ subscriptionId, period }, this.db);
    if (!row) return null;
    return { closedAt: row.closed_at, breakdown: row.breakdown as UsageBreakdown | null };
  }
}
