/** Types generated for queries found in "src/email/email-outbox.repository.ts" */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type NumberOrString = number | string;

export type stringArray = (string)[];

/** 'InsertEmail' parameters type */
export interface IInsertEmailParams {
  at: Date | string;
  channel: string;
  htmlBody: string;
  id: string;
  invoiceId?: string | null | void;
  merchantId: string;
  recipient: string;
  subject: string;
  textBody: string;
}

/** 'InsertEmail' return type */
export interface IInsertEmailResult {
  pg_notify: undefined | null;
}

/** 'InsertEmail' query type */
export interface IInsertEmailQuery {
  params: IInsertEmailParams;
  result: IInsertEmailResult;
}

/** 'LatestForInvoices' parameters type */
export interface ILatestForInvoicesParams {
  invoiceIds: stringArray;
  merchantId: string;
}

/** 'LatestForInvoices' return type */
export interface ILatestForInvoicesResult {
  attempts: number;
  invoice_id: string;
  last_error: string | null;
  next_attempt_at: string | null;
  recipient: string;
  sent_at: string | null;
  status: string;
}

/** 'LatestForInvoices' query type */
export interface ILatestForInvoicesQuery {
  params: ILatestForInvoicesParams;
  result: ILatestForInvoicesResult;
}

/** 'ClaimDue' parameters type */
export interface IClaimDueParams {
  leaseMs: number;
  limit: NumberOrString;
  lockToken: string;
  now: Date | string;
}

/** 'ClaimDue' return type */
export interface IClaimDueResult {
  attempts: number;
  created_at: string;
  html_body: string;
  id: string;
  invoice_id: string | null;
  lock_token: string;
  merchant_id: string;
  recipient: string;
  subject: string;
  text_body: string;
}

/** 'ClaimDue' query type */
export interface IClaimDueQuery {
  params: IClaimDueParams;
  result: IClaimDueResult;
}

/** 'WriteResults' parameters type */
export interface IWriteResultsParams {
  results: Json;
}

/** 'WriteResults' return type */
export type IWriteResultsResult = void;

/** 'WriteResults' query type */
export interface IWriteResultsQuery {
  params: IWriteResultsParams;
  result: IWriteResultsResult;
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

/** 'HandBack' parameters type */
export interface IHandBackParams {
  channel: string;
  error: string;
  jobs: Json;
  now: Date | string;
}

/** 'HandBack' return type */
export interface IHandBackResult {
  id: string;
  pg_notify: undefined | null;
}

/** 'HandBack' query type */
export interface IHandBackQuery {
  params: IHandBackParams;
  result: IHandBackResult;
}

/** 'PruneFinished' parameters type */
export interface IPruneFinishedParams {
  before: Date | string;
  limit: NumberOrString;
}

/** 'PruneFinished' return type */
export interface IPruneFinishedResult {
  id: string;
}

/** 'PruneFinished' query type */
export interface IPruneFinishedQuery {
  params: IPruneFinishedParams;
  result: IPruneFinishedResult;
}

