/** Types generated for queries found in "src/billing/repositories/charge-attempt-leases.repository.ts" */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type NumberOrString = number | string;

export type stringArray = (string)[];

/** 'ClearExpiredTry' parameters type */
export interface IClearExpiredTryParams {
  id: string;
  now: Date | string;
  owner: string;
  signature: string;
}

/** 'ClearExpiredTry' return type */
export interface IClearExpiredTryResult {
  id: string;
}

/** 'ClearExpiredTry' query type */
export interface IClearExpiredTryQuery {
  params: IClearExpiredTryParams;
  result: IClearExpiredTryResult;
}

/** 'Defer' parameters type */
export interface IDeferParams {
  id: string;
  message: string;
  now: Date | string;
  owner: string;
  retrySeconds: number;
  signature?: string | null | void;
}

/** 'Defer' return type */
export interface IDeferResult {
  id: string;
}

/** 'Defer' query type */
export interface IDeferQuery {
  params: IDeferParams;
  result: IDeferResult;
}

/** 'DeferClearing' parameters type */
export interface IDeferClearingParams {
  id: string;
  message: string;
  now: Date | string;
  owner: string;
  retrySeconds: number;
  signature?: string | null | void;
}

/** 'DeferClearing' return type */
export interface IDeferClearingResult {
  id: string;
}

/** 'DeferClearing' query type */
export interface IDeferClearingQuery {
  params: IDeferClearingParams;
  result: IDeferClearingResult;
}

/** 'AddNetworkFee' parameters type */
export interface IAddNetworkFeeParams {
  fee: NumberOrString;
  id: string;
  now: Date | string;
  owner: string;
  signature: string;
}

/** 'AddNetworkFee' return type */
export type IAddNetworkFeeResult = void;

/** 'AddNetworkFee' query type */
export interface IAddNetworkFeeQuery {
  params: IAddNetworkFeeParams;
  result: IAddNetworkFeeResult;
}

/** 'RenewLease' parameters type */
export interface IRenewLeaseParams {
  id: string;
  owner: string;
  seconds: number;
  signature: string;
}

/** 'RenewLease' return type */
export interface IRenewLeaseResult {
  id: string;
}

/** 'RenewLease' query type */
export interface IRenewLeaseQuery {
  params: IRenewLeaseParams;
  result: IRenewLeaseResult;
}

/** 'HandBack' parameters type */
export interface IHandBackParams {
  ids: stringArray;
  now: Date | string;
  owner: string;
}

/** 'HandBack' return type */
export interface IHandBackResult {
  id: string;
}

/** 'HandBack' query type */
export interface IHandBackQuery {
  params: IHandBackParams;
  result: IHandBackResult;
}

/** 'Standing' parameters type */
export interface IStandingParams {
  id: string;
  owner: string;
  scheme: string;
  subscriptionId: string;
}

/** 'Standing' return type */
export interface IStandingResult {
  held: boolean;
  moved: boolean;
  open: boolean;
  revoked: boolean;
  status: string;
}

/** 'Standing' query type */
export interface IStandingQuery {
  params: IStandingParams;
  result: IStandingResult;
}

/** 'RecordTries' parameters type */
export interface IRecordTriesParams {
  tries: Json;
}

/** 'RecordTries' return type */
export interface IRecordTriesResult {
  id: string;
}

/** 'RecordTries' query type */
export interface IRecordTriesQuery {
  params: IRecordTriesParams;
  result: IRecordTriesResult;
}

/** 'TriesThatMayLand' parameters type */
export interface ITriesThatMayLandParams {
  ids: stringArray;
}

/** 'TriesThatMayLand' return type */
export interface ITriesThatMayLandResult {
  subscription_id: string;
}

/** 'TriesThatMayLand' query type */
export interface ITriesThatMayLandQuery {
  params: ITriesThatMayLandParams;
  result: ITriesThatMayLandResult;
}

