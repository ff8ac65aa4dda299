import { Injectable } from '@nestjs/common';
import { sql } from '../../database/typed-sql';
import { Db } from '../../database/db';
import type { CursorKind } from '../entities/chain-cursor.entity';
import type {
  ICursorStatsQuery,
  ICursorStatsResult,
  IDueBacklogQuery,
  IDueBacklogResult,
} from './billing-metrics.repository.types';

/** Due subscriptions not yet charged: how many, and when the oldest fell due (text, or null). */
export type DueBacklogRow = IDueBacklogResult;

/** The cursors of one kind (the kind is the service's: a text column, typed `string`). */
export type CursorStatsRow = Omit<ICursorStatsResult, 'kind'> & { kind: CursorKind };

/**
 * Active subscriptions due by `now` (domain time): what `claimDue` takes up, attempts in flight
 * included (their period is not charged yet). One range of `subscriptions_due_idx` per scheme
 * (the index leads with it).
 */
const dueBacklog = sql<IDueBacklogQuery>`
  SELECT COALESCE(sum(d.due), 0)::int AS "due!", min(d.oldest) AS oldest
    FROM (SELECT count(*) AS due, min(current_period_end) AS oldest
            FROM subscriptions
           WHERE status = 'Active' AND scheme = 'token-delegate' AND current_period_end <= $now!
          UNION ALL
          SELECT count(*), min(current_period_end)
            FROM subscriptions
           WHERE status = 'Active' AND scheme = 'program' AND current_period_end <= $now!) d`;

/**
 * Per kind: the cursors, those with a window still being read (history left to read), and the
 * seconds since the least recently walked one was taken up by a sweep (`updated_at`, the
 * database's time, stamped by each claim). A table of a few rows per merchant and plan.
 */
const cursorStats = sql<ICursorStatsQuery>`
  SELECT kind, count(*)::int AS "cursors!",
         (count(*) FILTER (WHERE window_top IS NOT NULL))::int AS "behind!",
         greatest(0, extract(epoch FROM now() - min(updated_at)))::float8 AS "lag_seconds!"
    FROM chain_cursors GROUP BY kind`;

/**
 * What the metrics read of the billing engine's state when Prometheus scrapes (one statement
 * each, never on a request's path): the due subscriptions (`subscriptions`, the claim's own
 * read) and the watchers' cursors. Typed by pgtyped from the migrated schema
 * (`npm run db:types`).
 */
@Injectable()
export class BillingMetricsRepository {
  constructor(private readonly db: Db) {}

  async dueBacklog(now: Date): Promise<DueBacklogRow> {
    const [row] = await dueBacklog.run({ now }, this.db);
    return row;
  }

  cursorStats(): Promise<CursorStatsRow[]> {
    return cursorStats.run(undefined, this.db) as Promise<CursorStatsRow[]>;
  }
}
