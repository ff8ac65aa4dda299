import { Injectable } from '@nestjs/common';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { isoTimestamp } from '../database/sql';
import type { MintSymbol } from '../solana/mints';

/** A `plans` row as PostgreSQL returns it (`amount` as text: bigint never passes through a float). */
export interface PlanRow {
  id: string;
  merchant_id: string;
  label: string;
  description: string | null;
  mint: MintSymbol;
  amount: string;
  interval_seconds: number;
  active: boolean;
  onchain_plan_id: string;
  onchain_address: string | null;
  created_at: string;
  updated_at: string;
}

/** A plan of the list, with the number of its subscriptions. */
export interface PlanListRow extends PlanRow {
  subscriptions: number;
}

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
  /** Domain time of the write. */
  at: Date;
}

/** The fields an update may change (`description` null clears it). */
export interface PlanChanges {
  label?: string;
  description?: string | null;
  active?: boolean;
}

/** The columns of a `PlanRow`, for a table aliased `p`. */
const PLAN_COLUMNS = `p.id, p.merchant_id, p.label, p.description, p.mint, p.amount::text AS amount,
  p.interval_seconds, p.active, p.onchain_plan_id, p.onchain_address,
  ${isoTimestamp('p.created_at', 'created_at')}, ${isoTimestamp('p.updated_at', 'updated_at')}`;

/** Every statement on `plans`: the table's one owner (issue 22). */
@Injectable()
export class PlansRepository {
  constructor(private readonly db: Db) {}

  /** The new plan, in the caller's transaction. */
  async insert(tx: SqlTx, row: PlanInsertRow): Promise<PlanRow> {
    const [inserted] = await tx.execute<PlanRow[]>(
      `INSERT INTO plans AS p (id, merchant_id, label, description, mint, amount, interval_seconds,
         active, onchain_plan_id, onchain_address, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, true, ?, ?, ?, ?)
       RETURNING ${PLAN_COLUMNS}`,
      [
        row.id,
        row.merchant_id,
        row.label,
        row.description,
        row.mint,
        row.amount,
        row.interval_seconds,
        row.onchain_plan_id,
        row.onchain_address,
        row.at,
        row.at,
      ],
    );
    return inserted;
  }

  /**
   * The merchant's plans, newest first, each with the number of its subscriptions (a count on
   * `subscriptions`, the subscriptions module's table, in the same statement).
   */
  list(merchantId: string): Promise<PlanListRow[]> {
    return this.db.execute<PlanListRow[]>(
      `SELECT ${PLAN_COLUMNS},
         (SELECT count(*)::int FROM subscriptions s WHERE s.plan_id = p.id) AS subscriptions
         FROM plans p WHERE p.merchant_id = ?
        ORDER BY p.created_at DESC, p.id DESC`,
      [merchantId],
    );
  }

  /** The merchant's plan; undefined when absent or another merchant's. */
  async find(merchantId: string, id: string): Promise<PlanRow | undefined> {
    const [row] = await this.db.execute<PlanRow[]>(
      `SELECT ${PLAN_COLUMNS} FROM plans p WHERE p.id = ? AND p.merchant_id = ?`,
      [id, merchantId],
    );
    return row;
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
    const sets: string[] = [];
    const values: unknown[] = [];
    const differs: string[] = [];
    for (const field of ['label', 'description', 'active'] as const) {
      if (changes[field] === undefined) continue;
      sets.push(`${field} = ?`);
      values.push(changes[field]);
      differs.push(`p.${field} IS DISTINCT FROM ?`);
    }
    const [row] = await this.db.execute<PlanRow[]>(
      `UPDATE plans AS p SET ${sets.join(', ')},
         updated_at = CASE WHEN ${differs.join(' OR ')} THEN ? ELSE p.updated_at END
        WHERE p.id = ? AND p.merchant_id = ?
        RETURNING ${PLAN_COLUMNS}`,
      [...values, ...values, at, id, merchantId],
    );
    return row;
  }

  /** A plan's description by id alone (the public checkout): null when none, or no such plan. */
  async description(id: string): Promise<string | null> {
    const [row] = await this.db.execute<{ description: string | null }[]>(
      `SELECT description FROM plans WHERE id = ?`,
      [id],
    );
    return row?.description ?? null;
  }
}
