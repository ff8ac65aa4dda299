/** Types generated for queries found in "src/invoices/invoices.repository.ts" */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type NumberOrString = number | string;

export type stringArray = (string)[];

/** 'NextNumber' parameters type */
export interface INextNumberParams {
  merchantId: string;
}

/** 'NextNumber' return type */
export interface INextNumberResult {
  last: number;
  set_config: string | null;
}

/** 'NextNumber' query type */
export interface INextNumberQuery {
  params: INextNumberParams;
  result: INextNumberResult;
}

/** 'FindWithCustomer' parameters type */
export interface IFindWithCustomerParams {
  id: string;
  merchantId: string;
}

/** 'FindWithCustomer' return type */
export interface IFindWithCustomerResult {
  amount_credited: string;
  amount_credited_to_balance: string;
  amount_due: string;
  amount_paid: string;
  amount_refunded: string;
  c_created_at: string;
  c_email: string | null;
  c_label: string | null;
  c_updated_at: string;
  c_wallet_address: string;
  created_at: string;
  customer_id: string;
  due_date: string | null;
  id: string;
  line_items: Json;
  memo: string | null;
  merchant_id: string;
  mint: string;
  number: number;
  onchain_id: string;
  paid_at: string | null;
  payment_signature: string | null;
  status: string;
  subtotal: string;
  tax: string;
  tax_bps: number;
  total: string;
  updated_at: string;
}

/** 'FindWithCustomer' query type */
export interface IFindWithCustomerQuery {
  params: IFindWithCustomerParams;
  result: IFindWithCustomerResult;
}

/** 'ListForCustomer' parameters type */
export interface IListForCustomerParams {
  customerId: string;
  merchantId: string;
}

/** 'ListForCustomer' return type */
export interface IListForCustomerResult {
  amount_credited: string;
  amount_credited_to_balance: string;
  amount_due: string;
  amount_paid: string;
  amount_refunded: string;
  created_at: string;
  customer_id: string;
  due_date: string | null;
  id: string;
  line_items: Json;
  memo: string | null;
  merchant_id: string;
  mint: string;
  number: number;
  onchain_id: string;
  paid_at: string | null;
  payment_signature: string | null;
  status: string;
  subtotal: string;
  tax: string;
  tax_bps: number;
  total: string;
  updated_at: string;
}

/** 'ListForCustomer' query type */
export interface IListForCustomerQuery {
  params: IListForCustomerParams;
  result: IListForCustomerResult;
}

/** 'MoveStatus' parameters type */
export interface IMoveStatusParams {
  at: Date | string;
  from: stringArray;
  id: string;
  merchantId: string;
  paid: boolean;
  signature?: string | null | void;
  to: string;
}

/** 'MoveStatus' return type */
export interface IMoveStatusResult {
  id: string;
}

/** 'MoveStatus' query type */
export interface IMoveStatusQuery {
  params: IMoveStatusParams;
  result: IMoveStatusResult;
}

/** 'MarkOverdue' parameters type */
export interface IMarkOverdueParams {
  id: string;
  merchantId: string;
  now: Date | string;
}

/** 'MarkOverdue' return type */
export interface IMarkOverdueResult {
  id: string;
}

/** 'MarkOverdue' query type */
export interface IMarkOverdueQuery {
  params: IMarkOverdueParams;
  result: IMarkOverdueResult;
}

/** 'LockByReferences' parameters type */
export interface ILockByReferencesParams {
  merchantId: string;
  references: stringArray;
}

/** 'LockByReferences' return type */
export interface ILockByReferencesResult {
  amount_credited: string;
  amount_credited_to_balance: string;
  amount_paid: string;
  customer_id: string;
  id: string;
  mint: string;
  onchain_id: string;
  status: string;
  total: string;
}

/** 'LockByReferences' query type */
export interface ILockByReferencesQuery {
  params: ILockByReferencesParams;
  result: ILockByReferencesResult;
}

/** 'LockForPayment' parameters type */
export interface ILockForPaymentParams {
  id: string;
  merchantId: string;
}

/** 'LockForPayment' return type */
export interface ILockForPaymentResult {
  amount_credited: string;
  amount_credited_to_balance: string;
  amount_paid: string;
  customer_id: string;
  id: string;
  mint: string;
  onchain_id: string;
  status: string;
  total: string;
}

/** 'LockForPayment' query type */
export interface ILockForPaymentQuery {
  params: ILockForPaymentParams;
  result: ILockForPaymentResult;
}

/** 'LockCovered' parameters type */
export interface ILockCoveredParams {
  id: string;
}

/** 'LockCovered' return type */
export interface ILockCoveredResult {
  covered: boolean;
  merchant_id: string;
}

/** 'LockCovered' query type */
export interface ILockCoveredQuery {
  params: ILockCoveredParams;
  result: ILockCoveredResult;
}

/** 'AddPaid' parameters type */
export interface IAddPaidParams {
  amount: NumberOrString;
  at: Date | string;
  id: string;
}

/** 'AddPaid' return type */
export type IAddPaidResult = void;

/** 'AddPaid' query type */
export interface IAddPaidQuery {
  params: IAddPaidParams;
  result: IAddPaidResult;
}

/** 'AddCredited' parameters type */
export interface IAddCreditedParams {
  amount: NumberOrString;
  at: Date | string;
  id: string;
  merchantId: string;
}

/** 'AddCredited' return type */
export type IAddCreditedResult = void;

/** 'AddCredited' query type */
export interface IAddCreditedQuery {
  params: IAddCreditedParams;
  result: IAddCreditedResult;
}

/** 'AddCreditedToBalance' parameters type */
export interface IAddCreditedToBalanceParams {
  amount: NumberOrString;
  at: Date | string;
  id: string;
  merchantId: string;
}

/** 'AddCreditedToBalance' return type */
export type IAddCreditedToBalanceResult = void;

/** 'AddCreditedToBalance' query type */
export interface IAddCreditedToBalanceQuery {
  params: IAddCreditedToBalanceParams;
  result: IAddCreditedToBalanceResult;
}

/** 'AddRefunded' parameters type */
export interface IAddRefundedParams {
  amount: NumberOrString;
  at: Date | string;
  id: string;
  merchantId: string;
}

/** 'AddRefunded' return type */
export type IAddRefundedResult = void;

/** 'AddRefunded' query type */
export interface IAddRefundedQuery {
  params: IAddRefundedParams;
  result: IAddRefundedResult;
}

