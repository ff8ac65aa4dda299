import { Injectable } from '@nestjs/common';
import { sql } from '../database/typed-sql';
import type { ListPage } from '../common/pagination';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { typedCursor } from '../database/row-batches';
import type { MintSymbol } from '../solana/mints';
import type {
  IFindPlanQuery,
  IFindPlanResult,
  IInsertPlanQuery,
  IListPlansPageQuery,
  IListPlansQuery,
  IListPlansResult,
  IPlanCreatedAtQuery,
  IPlanDescriptionQuery,
  IUpdatePlanQuery,
} from './plans.repository.types';

/**
 * A `plans` row as PostgreSQL returns it (`amount` as text: bigint never passes through a float;
 * timestamps as the API writes them). Its mint is one of the service's symbols (a text column,
 * which the generated type leaves `string`).
 */
export type PlanRow = Omit<IFindPlanResult, 'mint'> & { mint: MintSymbol };

/** A plan of the list, with the number of its subscriptions (`mint` narrowed as in `PlanRow`). */
export type PlanListRow = Omit<IListPlansResult, 'mint'> & { mint: MintSymbol };

/** A plan to create (active). */
export interface PlanInsertRow {
  id: string;
  merchant_id: string;
  label: string;
  description: string | null;
  mint: MintSymbol;
  /** Base units, as text. */
  amount: string;
  interval_seconds: number;
  onchain_plan_id: string;
  onchain_address: string | null;
  /** The meter (all null without one); quantities in millionths of a unit, as text. */
  meter_name: string | null;
  meter_unit_price: string | null;
  meter_unit_size: string | null;
  meter_included_units: string | null;
  meter_cap: string | null;
  usage_grace_seconds: number;
  /** Domain time of the write. */
  at: Date;
}

/** The fields an update may change (`description` null clears it). */
export interface PlanChanges {
  label?: string;
  description?: string | null;
  active?: boolean;
}

/*
 * Every statement below returns a plan's columns (table aliased `p`), the same ones in the same
 * order: `PlanRow`. pgtyped reads each statement's text whole, so the list is written out in each.
 */

/** The new plan, active. */
const insertPlan = sql<IInsertPlanQuery>`
  INSERT INTO plans AS p (id, merchant_id, label, description, mint, amount, interval_seconds,
    active, onchain_plan_id, onchain_address, meter_name, meter_unit_price, meter_unit_size,
    meter_included_units, meter_cap, usage_grace_seconds, created_at, updated_at)
  VALUES ($id!, $merchant_id!, $label!, $description, $mint!, $amount!, $interval_seconds!, true,
    $onchain_plan_id!, $onchain_address, $meter_name, $meter_unit_price::bigint,
    $meter_unit_size::bigint, $meter_included_units::bigint, $meter_cap::bigint,
    $usage_grace_seconds!, $at!, $at!)
  RETURNING p.id, p.merchant_id, p.label, p.description, p.mint, p.amount::text AS "amount!",
    p.interval_seconds, p.active, p.onchain_plan_id, p.onchain_address, p.meter_name,
         p.meter_unit_price::text AS meter_unit_price, p.meter_unit_size::text AS meter_unit_size,
         p.meter_included_units::text AS meter_included_units, p.meter_cap::text AS meter_cap,
         p.usage_grace_seconds,
    api_time(p.created_at) AS "created_at!", api_time(p.updated_at) AS "updated_at!"`;

/**
 * The merchant's plans, newest first, each with the number of its subscriptions (a count on
 * `subscriptions`, the subscriptions module's table, in the same statement).
 */
const listPlans = sql<IListPlansQuery>`
  SELECT p.id, p.merchant_id, p.label, p.description, p.mint, p.amount::text AS "amount!",
         p.interval_seconds, p.active, p.onchain_plan_id, p.onchain_address, p.meter_name,
         p.meter_unit_price::text AS meter_unit_price, p.meter_unit_size::text AS meter_unit_size,
         p.meter_included_units::text AS meter_included_units, p.meter_cap::text AS meter_cap,
         p.usage_grace_seconds,
         api_time(p.created_at) AS "created_at!", api_time(p.updated_at) AS "updated_at!",
         (SELECT count(*)::int FROM subscriptions s WHERE s.plan_id = p.id) AS "subscriptions!"
    FROM plans p WHERE p.merchant_id = $merchantId!
   ORDER BY p.created_at DESC, p.id DESC`;

/**
 * A page of the merchant's plans (`ListPage`), as `listPlans`. Read through a cursor, an unnamed
 * statement planned for its values: `$afterId IS NULL` folds before planning, `LIMIT NULL` is no
 * limit.
 */
const listPlansPage = sql<IListPlansPageQuery>`
  SELECT p.id, p.merchant_id, p.label, p.description, p.mint, p.amount::text AS "amount!",
         p.interval_seconds, p.active, p.onchain_plan_id, p.onchain_address, p.meter_name,
         p.meter_unit_price::text AS meter_unit_price, p.meter_unit_size::text AS meter_unit_size,
         p.meter_included_units::text AS meter_included_units, p.meter_cap::text AS meter_cap,
         p.usage_grace_seconds,
         api_time(p.created_at) AS "created_at!", api_time(p.updated_at) AS "updated_at!",
         (SELECT count(*)::int FROM subscriptions s WHERE s.plan_id = p.id) AS "subscriptions!"
    FROM plans p WHERE p.merchant_id = $merchantId!
     AND ($afterId::uuid IS NULL OR (p.created_at, p.id) < ($afterCreatedAt::timestamptz, $afterId))
   ORDER BY p.created_at DESC, p.id DESC
   LIMIT $limit::int`;

/** When the merchant's plan was created (the pool's text of the timestamp). */
const planCreatedAt = sql<IPlanCreatedAtQuery>`
  SELECT created_at FROM plans WHERE id = $id! AND merchant_id = $merchantId!`;

/** The merchant's plan. */
const findPlan = sql<IFindPlanQuery>`
  SELECT p.id, p.merchant_id, p.label, p.description, p.mint, p.amount::text AS "amount!",
         p.interval_seconds, p.active, p.onchain_plan_id, p.onchain_address, p.meter_name,
         p.meter_unit_price::text AS meter_unit_price, p.meter_unit_size::text AS meter_unit_size,
         p.meter_included_units::text AS meter_included_units, p.meter_cap::text AS meter_cap,
         p.usage_grace_seconds,
         api_time(p.created_at) AS "created_at!", api_time(p.updated_at) AS "updated_at!"
    FROM plans p WHERE p.id = $id! AND p.merchant_id = $merchantId!`;

/**
 * Sets the given fields of the merchant's plan: a null `label` or `active` is not given (neither
 * column takes a null), `setDescription` says whether `description` is (null clears it).
 * `updated_at` moves to `at` only when a given value really differs. One static statement for
 * every combination of fields: a rare write by primary key, whose plan is the same whatever
 * fields are given.
 */
const updatePlan = sql<IUpdatePlanQuery>`
  UPDATE plans AS p
     SET label = COALESCE($label, p.label),
         description = CASE WHEN $setDescription! THEN $description ELSE p.description END,
         active = COALESCE($active, p.active),
         updated_at = CASE
           WHEN ($label IS NOT NULL AND p.label IS DISTINCT FROM $label)
             OR ($setDescription! AND p.description IS DISTINCT FROM $description)
             OR ($active IS NOT NULL AND p.active IS DISTINCT FROM $active)
           THEN $at! ELSE p.updated_at END
   WHERE p.id = $id! AND p.merchant_id = $merchantId!
  RETURNING p.id, p.merchant_id, p.label, p.description, p.mint, p.amount::text AS "amount!",
    p.interval_seconds, p.active, p.onchain_plan_id, p.onchain_address, p.meter_name,
         p.meter_unit_price::text AS meter_unit_price, p.meter_unit_size::text AS meter_unit_size,
         p.meter_included_units::text AS meter_included_units, p.meter_cap::text AS meter_cap,
         p.usage_grace_seconds,
    api_time(p.created_at) AS "created_at!", api_time(p.updated_at) AS "updated_at!"`;

/** A plan's description by id alone (the public checkout). */
const planDescription = sql<IPlanDescriptionQuery>`
  SELECT description FROM plans WHERE id = $id!`;

/**
 * Every statement on `plans`: the table's one owner (issue 22), typed by pgtyped from the
 * migrated schema (`npm run db:types`).
 */
@Injectable()
export class PlansRepository {
  constructor(private readonly db: Db) {}

  /** The new plan, in the caller's transaction. */
  async insert(tx: SqlTx, row: PlanInsertRow): Promise<PlanRow> {
    const [inserted] = await insertPlan.run(row, tx);
    return inserted as PlanRow;
  }

  /**
   * The merchant's plans, newest first, each with the number of its subscriptions (a count on
   * `subscriptions`, the subscriptions module's table, in the same statement).
   */
  list(merchantId: string): Promise<PlanListRow[]> {
    return listPlans.run({ merchantId }, this.db) as Promise<PlanListRow[]>;
  }

  /** A `page` of the merchant's plans, newest first, as `list` (through a cursor). */
  async listPage(merchantId: string, page: ListPage): Promise<PlanListRow[]> {
    const { limit, afterCreatedAt, afterId } = page;
    const statement = typedCursor(listPlansPage, { merchantId, limit, afterCreatedAt, afterId });
    return (await this.db.readAll(statement)) as PlanListRow[];
  }

  /** When the merchant's plan was created (a page's cursor); undefined when there is none. */
  async createdAt(merchantId: string, id: string): Promise<string | undefined> {
    const [row] = await planCreatedAt.run({ id, merchantId }, this.db);
    return row?.created_at;
  }

  /** The merchant's plan; undefined when absent or another merchant's. */
  async find(merchantId: string, id: string): Promise<PlanRow | undefined> {
    const [row] = await findPlan.run({ merchantId, id }, this.db);
    return row as PlanRow | undefined;
  }

  /**
   * Sets the given fields (at least one) of the merchant's plan; `updated_at` moves to `at` only
   * when a value really changes. @returns undefined when absent or another merchant's.
   */
  async update(
    merchantId: string,
    id: string,
    changes: PlanChanges,
    at: Date,
  ): Promise<PlanRow | undefined> {
    const [row] = await updatePlan.run(
      {
        merchantId,
        id,
        label: changes.label ?? null,
        setDescription: changes.description !== undefined,
        description: changes.description ?? null,
        active: changes.active ?? null,
        at,
      },
      this.db,
    );
    return row as PlanRow | undefined;
  }

  /** A plan's description by id alone (the public checkout): null when none, or no such plan. */
  async description(id: string): Promise<string | null> {
    const [row] = await planDescription.run({ id }, this.db);
    return row?.description ?? null;
  }
}
