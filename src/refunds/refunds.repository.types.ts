/** Types generated for queries found in "src/refunds/refunds.repository.ts" */
export type NumberOrString = number | string;

/** 'FindRefund' parameters type */
export interface IFindRefundParams {
  id: string;
  merchantId: string;
}

/** 'FindRefund' return type */
export interface IFindRefundResult {
  amount: string;
  created_at: string;
  customer_id: string | null;
  destination: string;
  expired_at: string | null;
  fee: string;
  id: string;
  invoice_id: string | null;
  last_valid_block_height: string;
  ledger_payment_id: string | null;
  merchant_id: string;
  mint: string;
  payment_id: string;
  reason: string | null;
  recipient: string;
  reference: string;
  signature: string | null;
  slot: string | null;
  status: string;
  subscription_id: string | null;
  succeeded_at: string | null;
  updated_at: string;
}

/** 'FindRefund' query type */
export interface IFindRefundQuery {
  params: IFindRefundParams;
  result: IFindRefundResult;
}

/** 'LockRefund' parameters type */
export interface ILockRefundParams {
  id: string;
  merchantId: string;
}

/** 'LockRefund' return type */
export interface ILockRefundResult {
  amount: string;
  created_at: string;
  customer_id: string | null;
  destination: string;
  expired_at: string | null;
  fee: string;
  id: string;
  invoice_id: string | null;
  last_valid_block_height: string;
  ledger_payment_id: string | null;
  merchant_id: string;
  mint: string;
  payment_id: string;
  reason: string | null;
  recipient: string;
  reference: string;
  signature: string | null;
  slot: string | null;
  status: string;
  subscription_id: string | null;
  succeeded_at: string | null;
  updated_at: string;
}

/** 'LockRefund' query type */
export interface ILockRefundQuery {
  params: ILockRefundParams;
  result: ILockRefundResult;
}

/** 'ListRefunds' parameters type */
export interface IListRefundsParams {
  afterCreatedAt?: Date | string | null | void;
  afterId?: string | null | void;
  customerId?: string | null | void;
  invoiceId?: string | null | void;
  limit?: number | null | void;
  merchantId: string;
  paymentId?: string | null | void;
  status?: string | null | void;
}

/** 'ListRefunds' return type */
export interface IListRefundsResult {
  amount: string;
  created_at: string;
  customer_id: string | null;
  destination: string;
  expired_at: string | null;
  fee: string;
  id: string;
  invoice_id: string | null;
  last_valid_block_height: string;
  ledger_payment_id: string | null;
  merchant_id: string;
  mint: string;
  payment_id: string;
  reason: string | null;
  recipient: string;
  reference: string;
  signature: string | null;
  slot: string | null;
  status: string;
  subscription_id: string | null;
  succeeded_at: string | null;
  updated_at: string;
}

/** 'ListRefunds' query type */
export interface IListRefundsQuery {
  params: IListRefundsParams;
  result: IListRefundsResult;
}

/** 'InsertRefund' parameters type */
export interface IInsertRefundParams {
  amount: NumberOrString;
  at: Date | string;
  customerId?: string | null | void;
  destination: string;
  id: string;
  invoiceId?: string | null | void;
  lastValidBlockHeight: NumberOrString;
  merchantId: string;
  mint: string;
  paymentId: string;
  reason?: string | null | void;
  recipient: string;
  reference: string;
  subscriptionId?: string | null | void;
}

/** 'InsertRefund' return type */
export interface IInsertRefundResult {
  amount: string;
  created_at: string;
  customer_id: string | null;
  destination: string;
  expired_at: string | null;
  fee: string;
  id: string;
  invoice_id: string | null;
  last_valid_block_height: string;
  ledger_payment_id: string | null;
  merchant_id: string;
  mint: string;
  payment_id: string;
  reason: string | null;
  recipient: string;
  reference: string;
  signature: string | null;
  slot: string | null;
  status: string;
  subscription_id: string | null;
  succeeded_at: string | null;
  updated_at: string;
}

/** 'InsertRefund' query type */
export interface IInsertRefundQuery {
  params: IInsertRefundParams;
  result: IInsertRefundResult;
}

/** 'RefundedOfInvoice' parameters type */
export interface IRefundedOfInvoiceParams {
  invoiceId: string;
}

/** 'RefundedOfInvoice' return type */
export interface IRefundedOfInvoiceResult {
  held: string;
}

/** 'RefundedOfInvoice' query type */
export interface IRefundedOfInvoiceQuery {
  params: IRefundedOfInvoiceParams;
  result: IRefundedOfInvoiceResult;
}

/** 'SucceedRefund' parameters type */
export interface ISucceedRefundParams {
  at: Date | string;
  fee: NumberOrString;
  id: string;
  ledgerPaymentId: string;
  signature: string;
  slot: NumberOrString;
}

/** 'SucceedRefund' return type */
export interface ISucceedRefundResult {
  amount: string;
  created_at: string;
  customer_id: string | null;
  destination: string;
  expired_at: string | null;
  fee: string;
  id: string;
  invoice_id: string | null;
  last_valid_block_height: string;
  ledger_payment_id: string | null;
  merchant_id: string;
  mint: string;
  payment_id: string;
  reason: string | null;
  recipient: string;
  reference: string;
  signature: string | null;
  slot: string | null;
  status: string;
  subscription_id: string | null;
  succeeded_at: string | null;
  updated_at: string;
}

/** 'SucceedRefund' query type */
export interface ISucceedRefundQuery {
  params: ISucceedRefundParams;
  result: ISucceedRefundResult;
}

/** 'ExpireRefund' parameters type */
export interface IExpireRefundParams {
  at: Date | string;
  id: string;
  lastValidBlockHeight: NumberOrString;
}

/** 'ExpireRefund' return type */
export interface IExpireRefundResult {
  amount: string;
  created_at: string;
  customer_id: string | null;
  destination: string;
  expired_at: string | null;
  fee: string;
  id: string;
  invoice_id: string | null;
  last_valid_block_height: string;
  ledger_payment_id: string | null;
  merchant_id: string;
  mint: string;
  payment_id: string;
  reason: string | null;
  recipient: string;
  reference: string;
  signature: string | null;
  slot: string | null;
  status: string;
  subscription_id: string | null;
  succeeded_at: string | null;
  updated_at: string;
}

/** 'ExpireRefund' query type */
export interface IExpireRefundQuery {
  params: IExpireRefundParams;
  result: IExpireRefundResult;
}

/** 'ReissueRefund' parameters type */
export interface IReissueRefundParams {
  at: Date | string;
  id: string;
  lastValidBlockHeight: NumberOrString;
}

/** 'ReissueRefund' return type */
export interface IReissueRefundResult {
  amount: string;
  created_at: string;
  customer_id: string | null;
  destination: string;
  expired_at: string | null;
  fee: string;
  id: string;
  invoice_id: string | null;
  last_valid_block_height: string;
  ledger_payment_id: string | null;
  merchant_id: string;
  mint: string;
  payment_id: string;
  reason: string | null;
  recipient: string;
  reference: string;
  signature: string | null;
  slot: string | null;
  status: string;
  subscription_id: string | null;
  succeeded_at: string | null;
  updated_at: string;
}

/** 'ReissueRefund' query type */
export interface IReissueRefundQuery {
  params: IReissueRefundParams;
  result: IReissueRefundResult;
}

/** 'PendingRefunds' parameters type */
export interface IPendingRefundsParams {
  limit: number;
}

/** 'PendingRefunds' return type */
export interface IPendingRefundsResult {
  amount: string;
  created_at: string;
  customer_id: string | null;
  destination: string;
  expired_at: string | null;
  fee: string;
  id: string;
  invoice_id: string | null;
  last_valid_block_height: string;
  ledger_payment_id: string | null;
  merchant_id: string;
  mint: string;
  payment_id: string;
  reason: string | null;
  recipient: string;
  reference: string;
  signature: string | null;
  slot: string | null;
  status: string;
  subscription_id: string | null;
  succeeded_at: string | null;
  updated_at: string;
}

/** 'PendingRefunds' query type */
export interface IPendingRefundsQuery {
  params: IPendingRefundsParams;
  result: IPendingRefundsResult;
}

/** 'RefundCreatedAt' parameters type */
export interface IRefundCreatedAtParams {
  id: string;
  merchantId: string;
}

/** 'RefundCreatedAt' return type */
export interface IRefundCreatedAtResult {
  created_at: string;
}

/** 'RefundCreatedAt' query type */
export interface IRefundCreatedAtQuery {
  params: IRefundCreatedAtParams;
  result: IRefundCreatedAtResult;
}

