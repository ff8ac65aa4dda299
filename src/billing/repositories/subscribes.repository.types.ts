/** Types generated for queries found in "src/billing/repositories/subscribes.repository.ts" */

/** 'PlanTerms' parameters type */
export interface IPlanTermsParams {
  planId: string;
}

/** 'PlanTerms' return type */
export interface IPlanTermsResult {
  active: boolean;
  amount: string;
  id: string;
  interval_seconds: number;
  label: string;
  merchant_id: string;
  merchant_name: string;
  merchant_wallet: string;
  meter_cap: string | null;
  meter_included_units: string | null;
  meter_name: string | null;
  meter_unit_price: string | null;
  meter_unit_size: string | null;
  mint: string;
  usage_grace_seconds: number;
}

/** 'PlanTerms' query type */
export interface IPlanTermsQuery {
  params: IPlanTermsParams;
  result: IPlanTermsResult;
}

/** 'LiveSubscription' parameters type */
export interface ILiveSubscriptionParams {
  merchantId: string;
  planId: string;
  wallet: string;
}

/** 'LiveSubscription' return type */
export interface ILiveSubscriptionResult {
  id: string;
}

/** 'LiveSubscription' query type */
export interface ILiveSubscriptionQuery {
  params: ILiveSubscriptionParams;
  result: ILiveSubscriptionResult;
}

/** 'LockWalletKey' parameters type */
export interface ILockWalletKeyParams {
  key: string;
}

/** 'LockWalletKey' return type */
export interface ILockWalletKeyResult {
  pg_advisory_xact_lock: undefined | null;
}

/** 'LockWalletKey' query type */
export interface ILockWalletKeyQuery {
  params: ILockWalletKeyParams;
  result: ILockWalletKeyResult;
}

