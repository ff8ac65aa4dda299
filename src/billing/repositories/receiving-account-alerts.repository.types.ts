/** Types generated for queries found in "src/billing/repositories/receiving-account-alerts.repository.ts" */

/** 'AddAlert' parameters type */
export interface IAddAlertParams {
  address: string;
  merchantId: string;
  mint: string;
  now: Date | string;
}

/** 'AddAlert' return type */
export interface IAddAlertResult {
  mint: string;
}

/** 'AddAlert' query type */
export interface IAddAlertQuery {
  params: IAddAlertParams;
  result: IAddAlertResult;
}

/** 'ListAlerts' parameters type */
export type IListAlertsParams = void;

/** 'ListAlerts' return type */
export interface IListAlertsResult {
  address: string;
  merchant_id: string;
  mint: string;
}

/** 'ListAlerts' query type */
export interface IListAlertsQuery {
  params: IListAlertsParams;
  result: IListAlertsResult;
}

/** 'RemoveAlert' parameters type */
export interface IRemoveAlertParams {
  address: string;
  merchantId: string;
  mint: string;
}

/** 'RemoveAlert' return type */
export type IRemoveAlertResult = void;

/** 'RemoveAlert' query type */
export interface IRemoveAlertQuery {
  params: IRemoveAlertParams;
  result: IRemoveAlertResult;
}

