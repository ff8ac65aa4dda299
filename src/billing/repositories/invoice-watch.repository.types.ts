/** Types generated for queries found in "src/billing/repositories/invoice-watch.repository.ts" */
export type NumberOrString = number | string;

/** 'ConfirmedPayments' parameters type */
export interface IConfirmedPaymentsParams {
  limit: NumberOrString;
}

/** 'ConfirmedPayments' return type */
export interface IConfirmedPaymentsResult {
  id: string;
  merchant_id: string;
  signature: string;
}

/** 'ConfirmedPayments' query type */
export interface IConfirmedPaymentsQuery {
  params: IConfirmedPaymentsParams;
  result: IConfirmedPaymentsResult;
}

/** 'NewlyOverdue' parameters type */
export interface INewlyOverdueParams {
  limit: NumberOrString;
  now: Date | string;
}

/** 'NewlyOverdue' return type */
export interface INewlyOverdueResult {
  id: string;
  merchant_id: string;
}

/** 'NewlyOverdue' query type */
export interface INewlyOverdueQuery {
  params: INewlyOverdueParams;
  result: INewlyOverdueResult;
}

/** 'OpenDueBefore' parameters type */
export interface IOpenDueBeforeParams {
  before: Date | string;
  limit: NumberOrString;
}

/** 'OpenDueBefore' return type */
export interface IOpenDueBeforeResult {
  id: string;
  merchant_id: string;
}

/** 'OpenDueBefore' query type */
export interface IOpenDueBeforeQuery {
  params: IOpenDueBeforeParams;
  result: IOpenDueBeforeResult;
}

