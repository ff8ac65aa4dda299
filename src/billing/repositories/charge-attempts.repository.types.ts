/** Types generated for queries found in "src/billing/repositories/charge-attempts.repository.ts" */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type NumberOrString = number | string;

export type stringArray = (string)[];

/** 'NetworkFees' parameters type */
export type INetworkFeesParams = void;

/** 'NetworkFees' return type */
export interface INetworkFeesResult {
  lamports: string;
  landed: string;
  merchant_id: string;
  name: string;
}

/** 'NetworkFees' query type */
export interface INetworkFeesQuery {
  params: INetworkFeesParams;
  result: INetworkFeesResult;
}

/** 'MarkSucceededMany' parameters type */
export interface IMarkSucceededManyParams {
  now: Date | string;
  owner: string;
  tries: Json;
}

/** 'MarkSucceededMany' return type */
export interface IMarkSucceededManyResult {
  id: string;
}

/** 'MarkSucceededMany' query type */
export interface IMarkSucceededManyQuery {
  params: IMarkSucceededManyParams;
  result: IMarkSucceededManyResult;
}

/** 'MarkSucceededFromFailed' parameters type */
export interface IMarkSucceededFromFailedParams {
  id: string;
  networkFee: NumberOrString;
  now: Date | string;
  signature: string;
}

/** 'MarkSucceededFromFailed' return type */
export interface IMarkSucceededFromFailedResult {
  id: string;
}

/** 'MarkSucceededFromFailed' query type */
export interface IMarkSucceededFromFailedQuery {
  params: IMarkSucceededFromFailedParams;
  result: IMarkSucceededFromFailedResult;
}

/** 'MarkFailed' parameters type */
export interface IMarkFailedParams {
  id: string;
  message: string;
  networkFee: NumberOrString;
  now: Date | string;
  owner: string;
  reason: string;
  tried?: string | null | void;
}

/** 'MarkFailed' return type */
export interface IMarkFailedResult {
  id: string;
}

/** 'MarkFailed' query type */
export interface IMarkFailedQuery {
  params: IMarkFailedParams;
  result: IMarkFailedResult;
}

/** 'MarkFailedLanded' parameters type */
export interface IMarkFailedLandedParams {
  id: string;
  message: string;
  networkFee: NumberOrString;
  now: Date | string;
  owner: string;
  reason: string;
  tried?: string | null | void;
}

/** 'MarkFailedLanded' return type */
export interface IMarkFailedLandedResult {
  id: string;
}

/** 'MarkFailedLanded' query type */
export interface IMarkFailedLandedQuery {
  params: IMarkFailedLandedParams;
  result: IMarkFailedLandedResult;
}

/** 'MarkCompleted' parameters type */
export interface IMarkCompletedParams {
  id: string;
  now: Date | string;
  owner: string;
  reason: string;
}

/** 'MarkCompleted' return type */
export interface IMarkCompletedResult {
  id: string;
}

/** 'MarkCompleted' query type */
export interface IMarkCompletedQuery {
  params: IMarkCompletedParams;
  result: IMarkCompletedResult;
}

/** 'Abandon' parameters type */
export interface IAbandonParams {
  id: string;
  now: Date | string;
  owner: string;
}

/** 'Abandon' return type */
export interface IAbandonResult {
  id: string;
}

/** 'Abandon' query type */
export interface IAbandonQuery {
  params: IAbandonParams;
  result: IAbandonResult;
}

/** 'ForgetFailedTry' parameters type */
export interface IForgetFailedTryParams {
  id: string;
  now: Date | string;
  signature: string;
}

/** 'ForgetFailedTry' return type */
export type IForgetFailedTryResult = void;

/** 'ForgetFailedTry' query type */
export interface IForgetFailedTryQuery {
  params: IForgetFailedTryParams;
  result: IForgetFailedTryResult;
}

/** 'ChargeSignatures' parameters type */
export interface IChargeSignaturesParams {
  signatures: stringArray;
}

/** 'ChargeSignatures' return type */
export interface IChargeSignaturesResult {
  signature: string;
}

/** 'ChargeSignatures' query type */
export interface IChargeSignaturesQuery {
  params: IChargeSignaturesParams;
  result: IChargeSignaturesResult;
}

