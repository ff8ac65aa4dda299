/** Types generated for queries found in "src/payments/payment-refunds.repository.ts" */
export type NumberOrString = number | string;

/** 'FindRefundable' parameters type */
export interface IFindRefundableParams {
  id: string;
  merchantId: string;
}

/** 'FindRefundable' return type */
export interface IFindRefundableResult {
  amount: string;
  customer_id: string | null;
  id: string;
  invoice_id: string | null;
  kind: string;
  mint: string;
  note: string | null;
  payer: string | null;
  refund_held: string;
  status: string;
  subscription_id: string | null;
}

/** 'FindRefundable' query type */
export interface IFindRefundableQuery {
  params: IFindRefundableParams;
  result: IFindRefundableResult;
}

/** 'LockRefundable' parameters type */
export interface ILockRefundableParams {
  id: string;
  merchantId: string;
}

/** 'LockRefundable' return type */
export interface ILockRefundableResult {
  amount: string;
  customer_id: string | null;
  id: string;
  invoice_id: string | null;
  kind: string;
  mint: string;
  note: string | null;
  payer: string | null;
  refund_held: string;
  status: string;
  subscription_id: string | null;
}

/** 'LockRefundable' query type */
export interface ILockRefundableQuery {
  params: ILockRefundableParams;
  result: ILockRefundableResult;
}

/** 'AddRefundHeld' parameters type */
export interface IAddRefundHeldParams {
  at: Date | string;
  delta: NumberOrString;
  id: string;
  merchantId: string;
}

/** 'AddRefundHeld' return type */
export type IAddRefundHeldResult = void;

/** 'AddRefundHeld' query type */
export interface IAddRefundHeldQuery {
  params: IAddRefundHeldParams;
  result: IAddRefundHeldResult;
}

