/** Types generated for queries found in "src/billing/repositories/charge-attempts.repository.ts" */
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

/** 'ClearExpiredTry' parameters type */
export interface IClearExpiredTryParams {
  id: string;
  now: Date | string;
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

/** 'RecordTry' parameters type */
export interface IRecordTryParams {
  amount: NumberOrString;
  id: string;
  lastValidBlockHeight: NumberOrString;
  leaseSeconds: number;
  now: Date | string;
  owner: string;
  signature: string;
  subscriptionId: string;
  transaction: string;
}

/** 'RecordTry' return type */
export interface IRecordTryResult {
  id: string;
}

/** 'RecordTry' query type */
export interface IRecordTryQuery {
  params: IRecordTryParams;
  result: IRecordTryResult;
}

/** 'RecordTryUnchanged' parameters type */
export interface IRecordTryUnchangedParams {
  amount: NumberOrString;
  fingerprint: string;
  id: string;
  lastValidBlockHeight: NumberOrString;
  leaseSeconds: number;
  mint: string;
  now: Date | string;
  owner: string;
  selfCreatedAt: Date | string;
  selfId: string;
  signature: string;
  subscriptionId: string;
  transaction: string;
  wallet: string;
}

/** 'RecordTryUnchanged' return type */
export interface IRecordTryUnchangedResult {
  id: string;
}

/** 'RecordTryUnchanged' query type */
export interface IRecordTryUnchangedQuery {
  params: IRecordTryUnchangedParams;
  result: IRecordTryUnchangedResult;
}

/** 'Standing' parameters type */
export interface IStandingParams {
  id: string;
  subscriptionId: string;
}

/** 'Standing' return type */
export interface IStandingResult {
  open: boolean;
  revoked: boolean;
  status: string;
}

/** 'Standing' query type */
export interface IStandingQuery {
  params: IStandingParams;
  result: IStandingResult;
}

/** 'MarkSucceeded' parameters type */
export interface IMarkSucceededParams {
  id: string;
  networkFee: NumberOrString;
  now: Date | string;
  signature: string;
}

/** 'MarkSucceeded' return type */
export interface IMarkSucceededResult {
  id: string;
}

/** 'MarkSucceeded' query type */
export interface IMarkSucceededQuery {
  params: IMarkSucceededParams;
  result: IMarkSucceededResult;
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
}

/** 'Abandon' return type */
export type IAbandonResult = void;

/** 'Abandon' query type */
export interface IAbandonQuery {
  params: IAbandonParams;
  result: IAbandonResult;
}

/** 'Defer' parameters type */
export interface IDeferParams {
  id: string;
  message: string;
  now: Date | string;
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

