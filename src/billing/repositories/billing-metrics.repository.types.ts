/** Types generated for queries found in "src/billing/repositories/billing-metrics.repository.ts" */

/** 'DueBacklog' parameters type */
export interface IDueBacklogParams {
  now: Date | string;
}

/** 'DueBacklog' return type */
export interface IDueBacklogResult {
  due: number;
  oldest: string | null;
}

/** 'DueBacklog' query type */
export interface IDueBacklogQuery {
  params: IDueBacklogParams;
  result: IDueBacklogResult;
}

/** 'CursorStats' parameters type */
export type ICursorStatsParams = void;

/** 'CursorStats' return type */
export interface ICursorStatsResult {
  behind: number;
  cursors: number;
  kind: string;
  lag_seconds: number;
}

/** 'CursorStats' query type */
export interface ICursorStatsQuery {
  params: ICursorStatsParams;
  result: ICursorStatsResult;
}

