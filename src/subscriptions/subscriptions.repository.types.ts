/** Types generated for queries found in "src/subscriptions/subscriptions.repository.ts" */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type NumberOrString = number | string;

export type stringArray = (string)[];

/** 'LockPlanForSubscribe' parameters type */
export interface ILockPlanForSubscribeParams {
  merchantId: string;
  planId: string;
}

/** 'LockPlanForSubscribe' return type */
export interface ILockPlanForSubscribeResult {
  active: boolean;
}

/** 'LockPlanForSubscribe' query type */
export interface ILockPlanForSubscribeQuery {
  params: ILockPlanForSubscribeParams;
  result: ILockPlanForSubscribeResult;
}

/** 'InsertSubscription' parameters type */
export interface IInsertSubscriptionParams {
  at: Date | string;
  authorizedAmount: NumberOrString;
  customerId: string;
  id: string;
  merchantId: string;
  onchainAddress?: string | null | void;
  planId: string;
  scheme: string;
}

/** 'InsertSubscription' return type */
export type IInsertSubscriptionResult = void;

/** 'InsertSubscription' query type */
export interface IInsertSubscriptionQuery {
  params: IInsertSubscriptionParams;
  result: IInsertSubscriptionResult;
}

/** 'FindSubscription' parameters type */
export interface IFindSubscriptionParams {
  id: string;
  merchantId: string;
}

/** 'FindSubscription' return type */
export interface IFindSubscriptionResult {
  c_label: string | null;
  c_wallet_address: string;
  cancelled_at: string | null;
  created_at: string;
  current_period_end: string | null;
  customer_id: string;
  failure_reason: string | null;
  id: string;
  last_charge_at: string | null;
  merchant_id: string;
  onchain_address: string | null;
  p_amount: string;
  p_interval_seconds: number;
  p_label: string;
  p_mint: string;
  paused_at: string | null;
  plan_id: string;
  revoked_at: string | null;
  status: string;
  updated_at: string;
}

/** 'FindSubscription' query type */
export interface IFindSubscriptionQuery {
  params: IFindSubscriptionParams;
  result: IFindSubscriptionResult;
}

/** 'ListSubscriptionsOfCustomer' parameters type */
export interface IListSubscriptionsOfCustomerParams {
  customerId: string;
  merchantId: string;
}

/** 'ListSubscriptionsOfCustomer' return type */
export interface IListSubscriptionsOfCustomerResult {
  c_label: string | null;
  c_wallet_address: string;
  cancelled_at: string | null;
  created_at: string;
  current_period_end: string | null;
  customer_id: string;
  failure_reason: string | null;
  id: string;
  last_charge_at: string | null;
  merchant_id: string;
  onchain_address: string | null;
  p_amount: string;
  p_interval_seconds: number;
  p_label: string;
  p_mint: string;
  paused_at: string | null;
  plan_id: string;
  revoked_at: string | null;
  status: string;
  updated_at: string;
}

/** 'ListSubscriptionsOfCustomer' query type */
export interface IListSubscriptionsOfCustomerQuery {
  params: IListSubscriptionsOfCustomerParams;
  result: IListSubscriptionsOfCustomerResult;
}

/** 'Transition' parameters type */
export interface ITransitionParams {
  at: Date | string;
  failureReason?: string | null | void;
  from: stringArray;
  id: string;
  merchantId: string;
  resume: boolean;
  setFailure: boolean;
  stampCancelled: boolean;
  stampPaused: boolean;
  to: string;
}

/** 'Transition' return type */
export interface ITransitionResult {
  previous: string;
}

/** 'Transition' query type */
export interface ITransitionQuery {
  params: ITransitionParams;
  result: ITransitionResult;
}

/** 'RecordCharges' parameters type */
export interface IRecordChargesParams {
  at: Date | string;
  charges: Json;
}

/** 'RecordCharges' return type */
export interface IRecordChargesResult {
  c_label: string | null;
  c_wallet_address: string;
  cancelled_at: string | null;
  charge_first: boolean;
  created_at: string;
  current_period_end: string | null;
  customer_id: string;
  failure_reason: string | null;
  id: string;
  last_charge_at: string | null;
  merchant_id: string;
  onchain_address: string | null;
  p_amount: string;
  p_interval_seconds: number;
  p_label: string;
  p_mint: string;
  paused_at: string | null;
  plan_id: string;
  revoked_at: string | null;
  status: string;
  status_before: string;
  updated_at: string;
}

/** 'RecordCharges' query type */
export interface IRecordChargesQuery {
  params: IRecordChargesParams;
  result: IRecordChargesResult;
}

/** 'Reauthorize' parameters type */
export interface IReauthorizeParams {
  at: Date | string;
  customerId: string;
  id: string;
  merchantId: string;
  share: NumberOrString;
}

/** 'Reauthorize' return type */
export interface IReauthorizeResult {
  id: string;
}

/** 'Reauthorize' query type */
export interface IReauthorizeQuery {
  params: IReauthorizeParams;
  result: IReauthorizeResult;
}

/** 'MarkRevoked' parameters type */
export interface IMarkRevokedParams {
  at: Date | string;
  customerId: string;
  id: string;
  merchantId: string;
}

/** 'MarkRevoked' return type */
export interface IMarkRevokedResult {
  status: string;
}

/** 'MarkRevoked' query type */
export interface IMarkRevokedQuery {
  params: IMarkRevokedParams;
  result: IMarkRevokedResult;
}

/** 'ListCustomerSubscriptions' parameters type */
export interface IListCustomerSubscriptionsParams {
  customerId: string;
  id?: string | null | void;
  merchantId: string;
}

/** 'ListCustomerSubscriptions' return type */
export interface IListCustomerSubscriptionsResult {
  amount: string;
  authorized_amount: string;
  charged_amount: string;
  current_period_end: string | null;
  ended_at: string | null;
  failure_reason: string | null;
  id: string;
  interval_seconds: number;
  label: string;
  last_charge_at: string | null;
  merchant_wallet: string;
  mint: string;
  paused: boolean;
  plan_id: string;
  revoked: boolean;
  scheme: string;
  status: string;
  wallet_address: string;
}

/** 'ListCustomerSubscriptions' query type */
export interface IListCustomerSubscriptionsQuery {
  params: IListCustomerSubscriptionsParams;
  result: IListCustomerSubscriptionsResult;
}

/** 'LiveForWallet' parameters type */
export interface ILiveForWalletParams {
  planId: string;
  walletAddress: string;
}

/** 'LiveForWallet' return type */
export interface ILiveForWalletResult {
  id: string;
}

/** 'LiveForWallet' query type */
export interface ILiveForWalletQuery {
  params: ILiveForWalletParams;
  result: ILiveForWalletResult;
}

/** 'AtOnchainAddresses' parameters type */
export interface IAtOnchainAddressesParams {
  addresses: stringArray;
  merchantId: string;
}

/** 'AtOnchainAddresses' return type */
export interface IAtOnchainAddressesResult {
  customer_id: string;
  id: string;
  onchain_address: string;
}

/** 'AtOnchainAddresses' query type */
export interface IAtOnchainAddressesQuery {
  params: IAtOnchainAddressesParams;
  result: IAtOnchainAddressesResult;
}

/** 'ChargeState' parameters type */
export interface IChargeStateParams {
  id: string;
}

/** 'ChargeState' return type */
export interface IChargeStateResult {
  failure_reason: string | null;
  periods_charged: number;
  status: string;
}

/** 'ChargeState' query type */
export interface IChargeStateQuery {
  params: IChargeStateParams;
  result: IChargeStateResult;
}

