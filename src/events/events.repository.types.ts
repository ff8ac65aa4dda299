/** Types generated for queries found in "src/events/events.repository.ts" */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type NumberOrString = number | string;

/** 'ListEvents' parameters type */
export interface IListEventsParams {
  limit: NumberOrString;
  merchantId: string;
}

/** 'ListEvents' return type */
export interface IListEventsResult {
  attempts: number | null;
  delivered_at: string | null;
  last_attempt_at: string | null;
  last_error: string | null;
  last_http_status: number | null;
  next_attempt_at: string | null;
  payload: Json;
  status: string | null;
}

/** 'ListEvents' query type */
export interface IListEventsQuery {
  params: IListEventsParams;
  result: IListEventsResult;
}

/** 'ListEventsOfType' parameters type */
export interface IListEventsOfTypeParams {
  limit: NumberOrString;
  merchantId: string;
  type: string;
}

/** 'ListEventsOfType' return type */
export interface IListEventsOfTypeResult {
  attempts: number | null;
  delivered_at: string | null;
  last_attempt_at: string | null;
  last_error: string | null;
  last_http_status: number | null;
  next_attempt_at: string | null;
  payload: Json;
  status: string | null;
}

/** 'ListEventsOfType' query type */
export interface IListEventsOfTypeQuery {
  params: IListEventsOfTypeParams;
  result: IListEventsOfTypeResult;
}

/** 'ListEventsAfter' parameters type */
export interface IListEventsAfterParams {
  afterCreatedAt: Date | string;
  afterId: string;
  limit: NumberOrString;
  merchantId: string;
}

/** 'ListEventsAfter' return type */
export interface IListEventsAfterResult {
  attempts: number | null;
  delivered_at: string | null;
  last_attempt_at: string | null;
  last_error: string | null;
  last_http_status: number | null;
  next_attempt_at: string | null;
  payload: Json;
  status: string | null;
}

/** 'ListEventsAfter' query type */
export interface IListEventsAfterQuery {
  params: IListEventsAfterParams;
  result: IListEventsAfterResult;
}

/** 'ListEventsOfTypeAfter' parameters type */
export interface IListEventsOfTypeAfterParams {
  afterCreatedAt: Date | string;
  afterId: string;
  limit: NumberOrString;
  merchantId: string;
  type: string;
}

/** 'ListEventsOfTypeAfter' return type */
export interface IListEventsOfTypeAfterResult {
  attempts: number | null;
  delivered_at: string | null;
  last_attempt_at: string | null;
  last_error: string | null;
  last_http_status: number | null;
  next_attempt_at: string | null;
  payload: Json;
  status: string | null;
}

/** 'ListEventsOfTypeAfter' query type */
export interface IListEventsOfTypeAfterQuery {
  params: IListEventsOfTypeAfterParams;
  result: IListEventsOfTypeAfterResult;
}

/** 'GetEvent' parameters type */
export interface IGetEventParams {
  id: string;
  merchantId: string;
}

/** 'GetEvent' return type */
export interface IGetEventResult {
  attempts: number | null;
  delivered_at: string | null;
  last_attempt_at: string | null;
  last_error: string | null;
  last_http_status: number | null;
  next_attempt_at: string | null;
  payload: Json;
  status: string | null;
}

/** 'GetEvent' query type */
export interface IGetEventQuery {
  params: IGetEventParams;
  result: IGetEventResult;
}

/** 'EventCreatedAt' parameters type */
export interface IEventCreatedAtParams {
  id: string;
  merchantId: string;
}

/** 'EventCreatedAt' return type */
export interface IEventCreatedAtResult {
  created_at: string;
}

/** 'EventCreatedAt' query type */
export interface IEventCreatedAtQuery {
  params: IEventCreatedAtParams;
  result: IEventCreatedAtResult;
}

