/** Types generated for queries found in "src/billing/repositories/chain-cursors.repository.ts" */
export type NumberOrString = number | string;

/** 'Add' parameters type */
export interface IAddParams {
  address: string;
  kind: string;
  merchantId: string;
  mint: string;
  planId?: string | null | void;
  startSlot?: NumberOrString | null | void;
}

/** 'Add' return type */
export type IAddResult = void;

/** 'Add' query type */
export interface IAddQuery {
  params: IAddParams;
  result: IAddResult;
}

/** 'SweepMark' parameters type */
export interface ISweepMarkParams {
  kind: string;
}

/** 'SweepMark' return type */
export interface ISweepMarkResult {
  mark: string;
}

/** 'SweepMark' query type */
export interface ISweepMarkQuery {
  params: ISweepMarkParams;
  result: ISweepMarkResult;
}

/** 'Claim' parameters type */
export interface IClaimParams {
  kind: string;
  leaseSeconds: number;
  limit: NumberOrString;
  mark: Date | string;
}

/** 'Claim' return type */
export interface IClaimResult {
  address: string;
  cursor: string | null;
  kind: string;
  merchant_id: string;
  mint: string;
  plan_id: string | null;
  start_slot: string | null;
  unread: boolean;
  window_before: string | null;
  window_top: string | null;
}

/** 'Claim' query type */
export interface IClaimQuery {
  params: IClaimParams;
  result: IClaimResult;
}

/** 'Release' parameters type */
export interface IReleaseParams {
  address: string;
}

/** 'Release' return type */
export type IReleaseResult = void;

/** 'Release' query type */
export interface IReleaseQuery {
  params: IReleaseParams;
  result: IReleaseResult;
}

/** 'Move' parameters type */
export interface IMoveParams {
  address: string;
  fromCursor?: string | null | void;
  fromWindowBefore?: string | null | void;
  fromWindowTop?: string | null | void;
  toCursor?: string | null | void;
  toWindowBefore?: string | null | void;
  toWindowTop?: string | null | void;
}

/** 'Move' return type */
export interface IMoveResult {
  address: string;
}

/** 'Move' query type */
export interface IMoveQuery {
  params: IMoveParams;
  result: IMoveResult;
}

/** 'MerchantsWithoutCursors' parameters type */
export interface IMerchantsWithoutCursorsParams {
  perMerchant: NumberOrString;
}

/** 'MerchantsWithoutCursors' return type */
export interface IMerchantsWithoutCursorsResult {
  merchant_id: string;
  start_slot: string | null;
  unknown: boolean;
  wallet: string;
}

/** 'MerchantsWithoutCursors' query type */
export interface IMerchantsWithoutCursorsQuery {
  params: IMerchantsWithoutCursorsParams;
  result: IMerchantsWithoutCursorsResult;
}

