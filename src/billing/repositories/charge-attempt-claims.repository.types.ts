/** Types generated for queries found in "src/billing/repositories/charge-attempt-claims.repository.ts" */
export type NumberOrString = number | string;

export type stringArray = (string)[];

/** 'ClaimDueAll' parameters type */
export interface IClaimDueAllParams {
  afterDue: Date | string;
  afterId: string;
  leaseSeconds: number;
  limit: NumberOrString;
  now: Date | string;
  owner: string;
}

/** 'ClaimDueAll' return type */
export interface IClaimDueAllResult {
  amount: string;
  due_at: string;
  id: string;
  last_valid_block_height: string | null;
  merchant_id: string;
  merchant_wallet: string;
  metered: boolean;
  mint: string;
  period: number;
  price: string;
  s_authorized_amount: string;
  s_charged_amount: string;
  s_created_at: string;
  s_customer_id: string;
  s_plan_id: string;
  s_revoked: boolean;
  s_scheme: string;
  s_status: string;
  signature: string | null;
  state: string;
  subscriber: string;
  subscription_id: string;
  transaction: string | null;
  walked: number;
}

/** 'ClaimDueAll' query type */
export interface IClaimDueAllQuery {
  params: IClaimDueAllParams;
  result: IClaimDueAllResult;
}

/** 'ClaimDueOneAtATime' parameters type */
export interface IClaimDueOneAtATimeParams {
  afterDue: Date | string;
  afterId: string;
  busy: stringArray;
  candidateLimit: NumberOrString;
  leaseSeconds: number;
  limit: NumberOrString;
  now: Date | string;
  owner: string;
}

/** 'ClaimDueOneAtATime' return type */
export interface IClaimDueOneAtATimeResult {
  amount: string;
  due_at: string;
  id: string;
  last_valid_block_height: string | null;
  merchant_id: string;
  merchant_wallet: string;
  metered: boolean;
  mint: string;
  period: number;
  price: string;
  r_in_flight: number;
  r_reserved: string;
  r_siblings: number;
  r_version: string;
  s_authorized_amount: string;
  s_charged_amount: string;
  s_created_at: string;
  s_customer_id: string;
  s_plan_id: string;
  s_revoked: boolean;
  s_scheme: string;
  s_status: string;
  signature: string | null;
  state: string;
  subscriber: string;
  subscription_id: string;
  transaction: string | null;
  walked: number;
}

/** 'ClaimDueOneAtATime' query type */
export interface IClaimDueOneAtATimeQuery {
  params: IClaimDueOneAtATimeParams;
  result: IClaimDueOneAtATimeResult;
}

/** 'ClaimDueOne' parameters type */
export interface IClaimDueOneParams {
  busy: stringArray;
  leaseSeconds: number;
  limit: NumberOrString;
  now: Date | string;
  owner: string;
  subscriptionId: string;
}

/** 'ClaimDueOne' return type */
export interface IClaimDueOneResult {
  amount: string;
  id: string;
  last_valid_block_height: string | null;
  merchant_id: string;
  merchant_wallet: string;
  metered: boolean;
  mint: string;
  period: number;
  price: string;
  s_authorized_amount: string;
  s_charged_amount: string;
  s_created_at: string;
  s_customer_id: string;
  s_plan_id: string;
  s_revoked: boolean;
  s_scheme: string;
  s_status: string;
  signature: string | null;
  state: string;
  subscriber: string;
  subscription_id: string;
  transaction: string | null;
}

/** 'ClaimDueOne' query type */
export interface IClaimDueOneQuery {
  params: IClaimDueOneParams;
  result: IClaimDueOneResult;
}

/** 'ResumeStale' parameters type */
export interface IResumeStaleParams {
  inHand: stringArray;
  leaseSeconds: number;
  limit: NumberOrString;
  owner: string;
}

/** 'ResumeStale' return type */
export interface IResumeStaleResult {
  amount: string;
  id: string;
  last_valid_block_height: string | null;
  merchant_id: string;
  merchant_wallet: string;
  metered: boolean;
  mint: string;
  period: number;
  price: string;
  s_authorized_amount: string;
  s_charged_amount: string;
  s_created_at: string;
  s_customer_id: string;
  s_plan_id: string;
  s_revoked: boolean;
  s_scheme: string;
  s_status: string;
  signature: string | null;
  state: string;
  subscriber: string;
  subscription_id: string;
  transaction: string | null;
}

/** 'ResumeStale' query type */
export interface IResumeStaleQuery {
  params: IResumeStaleParams;
  result: IResumeStaleResult;
}

/** 'FailedWithBytes' parameters type */
export interface IFailedWithBytesParams {
  limit: NumberOrString;
}

/** 'FailedWithBytes' return type */
export interface IFailedWithBytesResult {
  amount: string;
  id: string;
  last_valid_block_height: string | null;
  merchant_id: string;
  merchant_wallet: string;
  metered: boolean;
  mint: string;
  period: number;
  price: string;
  s_authorized_amount: string;
  s_charged_amount: string;
  s_created_at: string;
  s_customer_id: string;
  s_plan_id: string;
  s_revoked: boolean;
  s_scheme: string;
  s_status: string;
  signature: string | null;
  state: string;
  subscriber: string;
  subscription_id: string;
  transaction: string | null;
}

/** 'FailedWithBytes' query type */
export interface IFailedWithBytesQuery {
  params: IFailedWithBytesParams;
  result: IFailedWithBytesResult;
}

