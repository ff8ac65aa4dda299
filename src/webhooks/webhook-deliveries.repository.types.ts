/** Types generated for queries found in "src/webhooks/webhook-deliveries.repository.ts" */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type NumberOrString = number | string;

export type stringArray = (string)[];

/** 'Redeliver' parameters type */
export interface IRedeliverParams {
  at: Date | string;
  channel: string;
  eventId: string;
  id: string;
  merchantId: string;
}

/** 'Redeliver' return type */
export interface IRedeliverResult {
  attempts: number | null;
  delivered_at: string | null;
  last_attempt_at: string | null;
  last_error: string | null;
  last_http_status: number | null;
  next_attempt_at: string | null;
  payload: Json;
  status: string | null;
}

/** 'Redeliver' query type */
export interface IRedeliverQuery {
  params: IRedeliverParams;
  result: IRedeliverResult;
}

/** 'ClaimDeliveries' parameters type */
export interface IClaimDeliveriesParams {
  busy: Json;
  candidates: NumberOrString;
  cap: number;
  leaseMs: number;
  limit: NumberOrString;
  lockToken: string;
  now: Date | string;
}

/** 'ClaimDeliveries' return type */
export interface IClaimDeliveriesResult {
  attempts: number;
  created_at: string;
  event_id: string;
  id: string;
  lock_token: string;
  merchant_id: string;
  payload: string;
  previous_webhook_secret: string | null;
  previous_webhook_secret_expires_at: string | null;
  type: string;
  webhook_secret: string;
  webhook_url: string | null;
}

/** 'ClaimDeliveries' query type */
export interface IClaimDeliveriesQuery {
  params: IClaimDeliveriesParams;
  result: IClaimDeliveriesResult;
}

/** 'WriteDeliveryResults' parameters type */
export interface IWriteDeliveryResultsParams {
  ids: stringArray;
  results: Json;
}

/** 'WriteDeliveryResults' return type */
export type IWriteDeliveryResultsResult = void;

/** 'WriteDeliveryResults' query type */
export interface IWriteDeliveryResultsQuery {
  params: IWriteDeliveryResultsParams;
  result: IWriteDeliveryResultsResult;
}

/** 'Backlog' parameters type */
export type IBacklogParams = void;

/** 'Backlog' return type */
export interface IBacklogResult {
  oldest: string | null;
  pending: number;
}

/** 'Backlog' query type */
export interface IBacklogQuery {
  params: IBacklogParams;
  result: IBacklogResult;
}

/** 'HandBackDeliveries' parameters type */
export interface IHandBackDeliveriesParams {
  channel: string;
  error: string;
  jobs: Json;
  now: Date | string;
}

/** 'HandBackDeliveries' return type */
export interface IHandBackDeliveriesResult {
  id: string;
  pg_notify: undefined | null;
}

/** 'HandBackDeliveries' query type */
export interface IHandBackDeliveriesQuery {
  params: IHandBackDeliveriesParams;
  result: IHandBackDeliveriesResult;
}

/** 'PruneFinishedDeliveries' parameters type */
export interface IPruneFinishedDeliveriesParams {
  before: Date | string;
  limit: NumberOrString;
}

/** 'PruneFinishedDeliveries' return type */
export interface IPruneFinishedDeliveriesResult {
  id: string;
}

/** 'PruneFinishedDeliveries' query type */
export interface IPruneFinishedDeliveriesQuery {
  params: IPruneFinishedDeliveriesParams;
  result: IPruneFinishedDeliveriesResult;
}

