import { sql } from '../database/typed-sql';
import type { ListPage } from '../common/pagination';
import type { Db } from '../database/db';
import { typedCursor } from '../database/row-batches';
import type { MintSymbol } from '../solana/mints';
import type { SubscriptionStatus } from './subscription-status';
import type {
  IListSubscriptionsByStatusQuery,
  IListSubscriptionsQuery,
  IListSubscriptionsResult,
  ISubscriptionCreatedAtQuery,
} from './subscription-list.repository.types';

/**
 * A subscription of the merchant's list: the columns its response needs (see the mapper). Its
 * status and the plan's mint are text columns (the generated type leaves them `string`) holding
 * a subscription status and one of the service's mints.
 */
export type SubscriptionListRow = Omit<IListSubscriptionsResult, 'status' | 'p_mint'> & {
  status: SubscriptionStatus;
  p_mint: MintSymbol;
};

/**
 * The merchant's subscriptions, newest first (the list, through a cursor): the columns of its
 * response only (`SubscriptionListRow`). One statement without and one with the status filter,
 * each planned for its own shape. Each takes a page (`ListPage`): read through a cursor, an
 * unnamed statement planned for its values each time, `$afterId IS NULL` folds before planning
 * (a page after a cursor starts at that row of the index) and `LIMIT NULL` is no limit.
 */
const listSubscriptions = sql<IListSubscriptionsQuery>`
  SELECT s.id, s.plan_id, s.customer_id, s.status,
         api_time(s.current_period_end) AS current_period_end,
         api_time(s.cancelled_at) AS cancelled_at, api_time(s.revoked_at) AS revoked_at,
         api_time(s.last_charge_at) AS last_charge_at, s.failure_reason, s.onchain_address,
         api_time(s.created_at) AS "created_at!", api_time(s.updated_at) AS "updated_at!",
         p.label AS p_label, (p.amount - COALESCE(p.meter_cap, 0))::text AS "p_amount!", p.mint AS p_mint,
         p.interval_seconds AS p_interval_seconds, c.wallet_address AS c_wallet_address,
         c.label AS c_label
    FROM subscriptions s JOIN plans p ON p.id = s.plan_id JOIN customers c ON c.id = s.customer_id
   WHERE s.merchant_id = $merchantId!
     AND ($afterId::uuid IS NULL OR (s.created_at, s.id) < ($afterCreatedAt::timestamptz, $afterId))
   ORDER BY s.created_at DESC, s.id DESC
   LIMIT $limit::int`;

/** The merchant's subscriptions of one status, newest first (see `listSubscriptions`). */
const listSubscriptionsByStatus = sql<IListSubscriptionsByStatusQuery>`
  SELECT s.id, s.plan_id, s.customer_id, s.status,
         api_time(s.current_period_end) AS current_period_end,
         api_time(s.cancelled_at) AS cancelled_at, api_time(s.revoked_at) AS revoked_at,
         api_time(s.last_charge_at) AS last_charge_at, s.failure_reason, s.onchain_address,
         api_time(s.created_at) AS "created_at!", api_time(s.updated_at) AS "updated_at!",
         p.label AS p_label, (p.amount - COALESCE(p.meter_cap, 0))::text AS "p_amount!", p.mint AS p_mint,
         p.interval_seconds AS p_interval_seconds, c.wallet_address AS c_wallet_address,
         c.label AS c_label
    FROM subscriptions s JOIN plans p ON p.id = s.plan_id JOIN customers c ON c.id = s.customer_id
   WHERE s.merchant_id = $merchantId! AND s.status = $status!
     AND ($afterId::uuid IS NULL OR (s.created_at, s.id) < ($afterCreatedAt::timestamptz, $afterId))
   ORDER BY s.created_at DESC, s.id DESC
   LIMIT $limit::int`;

/** When the merchant's subscription was created (the pool's text of the timestamp). */
const subscriptionCreatedAt = sql<ISubscriptionCreatedAtQuery>`
  SELECT created_at FROM subscriptions WHERE id = $id! AND merchant_id = $merchantId!`;

/** When the merchant's subscription was created, or undefined (absent or another merchant's). */
export async function findSubscriptionCreatedAt(
  db: Db,
  merchantId: string,
  id: string,
): Promise<string | undefined> {
  const [row] = await subscriptionCreatedAt.run({ id, merchantId }, db);
  return row?.created_at;
}

/**
 * The merchant's subscriptions (`status` filtering), newest first, one page of them
 * (`WHOLE_LIST` for all), handed to `onBatch` a batch of rows at a time through a cursor
 * (`Db.forEachBatch`). Part of `SubscriptionsRepository` (its `forEachListBatch`), in a file of
 * its own for its statements.
 */
export function streamSubscriptionList(
  db: Db,
  merchantId: string,
  status: SubscriptionStatus | undefined,
  page: ListPage,
  onBatch: (rows: SubscriptionListRow[]) => Promise<boolean>,
): Promise<void> {
  const paged = { merchantId, ...page };
  const statement =
    status === undefined
      ? typedCursor(listSubscriptions, paged)
      : typedCursor(listSubscriptionsByStatus, { ...paged, status });
  return db.forEachBatch(statement, (rows) => onBatch(rows as SubscriptionListRow[]));
}
