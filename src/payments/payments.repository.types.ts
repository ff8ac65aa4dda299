/** Types generated for queries found in "src/payments/payments.repository.ts" */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type NumberOrString = number | string;

export type stringArray = (string)[];

/** 'ListPayments' parameters type */
export interface IListPaymentsParams {
  afterCreatedAt?: Date | string | null | void;
  afterId?: string | null | void;
  customerId?: string | null | void;
  kind?: string | null | void;
  limit?: number | null | void;
  merchantId: string;
  status?: string | null | void;
}

/** 'ListPayments' return type */
export interface IListPaymentsResult {
  amount: string;
  created_at: string;
  customer_id: string | null;
  destination: string | null;
  details: Json | null;
  excess: string;
  fee: string;
  finalized_at: string | null;
  id: string;
  invoice_id: string | null;
  kind: string;
  merchant_id: string;
  mint: string;
  note: string | null;
  payer: string | null;
  period: number | null;
  references: stringArray | null;
  signature: string | null;
  slot: string | null;
  status: string;
  subscription_id: string | null;
  updated_at: string;
}

/** 'ListPayments' query type */
export interface IListPaymentsQuery {
  params: IListPaymentsParams;
  result: IListPaymentsResult;
}

/** 'ListInvoicePayments' parameters type */
export interface IListInvoicePaymentsParams {
  afterCreatedAt?: Date | string | null | void;
  afterId?: string | null | void;
  customerId?: string | null | void;
  invoiceId: string;
  kind?: string | null | void;
  limit?: number | null | void;
  merchantId: string;
  status?: string | null | void;
  subscriptionId?: string | null | void;
}

/** 'ListInvoicePayments' return type */
export interface IListInvoicePaymentsResult {
  amount: string;
  created_at: string;
  customer_id: string | null;
  destination: string | null;
  details: Json | null;
  excess: string;
  fee: string;
  finalized_at: string | null;
  id: string;
  invoice_id: string | null;
  kind: string;
  merchant_id: string;
  mint: string;
  note: string | null;
  payer: string | null;
  period: number | null;
  references: stringArray | null;
  signature: string | null;
  slot: string | null;
  status: string;
  subscription_id: string | null;
  updated_at: string;
}

/** 'ListInvoicePayments' query type */
export interface IListInvoicePaymentsQuery {
  params: IListInvoicePaymentsParams;
  result: IListInvoicePaymentsResult;
}

/** 'ListSubscriptionPayments' parameters type */
export interface IListSubscriptionPaymentsParams {
  afterCreatedAt?: Date | string | null | void;
  afterId?: string | null | void;
  customerId?: string | null | void;
  kind?: string | null | void;
  limit?: number | null | void;
  merchantId: string;
  status?: string | null | void;
  subscriptionId: string;
}

/** 'ListSubscriptionPayments' return type */
export interface IListSubscriptionPaymentsResult {
  amount: string;
  created_at: string;
  customer_id: string | null;
  destination: string | null;
  details: Json | null;
  excess: string;
  fee: string;
  finalized_at: string | null;
  id: string;
  invoice_id: string | null;
  kind: string;
  merchant_id: string;
  mint: string;
  note: string | null;
  payer: string | null;
  period: number | null;
  references: stringArray | null;
  signature: string | null;
  slot: string | null;
  status: string;
  subscription_id: string | null;
  updated_at: string;
}

/** 'ListSubscriptionPayments' query type */
export interface IListSubscriptionPaymentsQuery {
  params: IListSubscriptionPaymentsParams;
  result: IListSubscriptionPaymentsResult;
}

/** 'InsertPayment' parameters type */
export interface IInsertPaymentParams {
  amount: NumberOrString;
  at: Date | string;
  customerId?: string | null | void;
  destination?: string | null | void;
  details?: Json | null | void;
  excess: NumberOrString;
  fee: NumberOrString;
  finalizedAt?: Date | string | null | void;
  id: string;
  instruction?: number | null | void;
  invoiceId?: string | null | void;
  kind: string;
  merchantId: string;
  mint: string;
  note?: string | null | void;
  payer?: string | null | void;
  period?: number | null | void;
  references?: stringArray | null | void;
  signature?: string | null | void;
  slot?: NumberOrString | null | void;
  status: string;
  subscriptionId?: string | null | void;
}

/** 'InsertPayment' return type */
export interface IInsertPaymentResult {
  amount: string;
  created_at: string;
  customer_id: string | null;
  destination: string | null;
  details: Json | null;
  excess: string;
  fee: string;
  finalized_at: string | null;
  id: string;
  invoice_id: string | null;
  kind: string;
  merchant_id: string;
  mint: string;
  note: string | null;
  payer: string | null;
  period: number | null;
  references: stringArray | null;
  signature: string | null;
  slot: string | null;
  status: string;
  subscription_id: string | null;
  updated_at: string;
}

/** 'InsertPayment' query type */
export interface IInsertPaymentQuery {
  params: IInsertPaymentParams;
  result: IInsertPaymentResult;
}

/** 'InsertPayments' parameters type */
export interface IInsertPaymentsParams {
  at: Date | string;
  lines: Json;
}

/** 'InsertPayments' return type */
export interface IInsertPaymentsResult {
  amount: string;
  created_at: string;
  customer_id: string | null;
  destination: string | null;
  details: Json | null;
  excess: string;
  fee: string;
  finalized_at: string | null;
  id: string;
  invoice_id: string | null;
  kind: string;
  merchant_id: string;
  mint: string;
  note: string | null;
  payer: string | null;
  period: number | null;
  references: stringArray | null;
  signature: string | null;
  slot: string | null;
  status: string;
  subscription_id: string | null;
  updated_at: string;
}

/** 'InsertPayments' query type */
export interface IInsertPaymentsQuery {
  params: IInsertPaymentsParams;
  result: IInsertPaymentsResult;
}

/** 'AttachPayment' parameters type */
export interface IAttachPaymentParams {
  at: Date | string;
  customerId: string;
  excess: NumberOrString;
  id: string;
  invoiceId: string;
  merchantId: string;
}

/** 'AttachPayment' return type */
export interface IAttachPaymentResult {
  amount: string;
  created_at: string;
  customer_id: string | null;
  destination: string | null;
  details: Json | null;
  excess: string;
  fee: string;
  finalized_at: string | null;
  id: string;
  invoice_id: string | null;
  kind: string;
  merchant_id: string;
  mint: string;
  note: string | null;
  payer: string | null;
  period: number | null;
  references: stringArray | null;
  signature: string | null;
  slot: string | null;
  status: string;
  subscription_id: string | null;
  updated_at: string;
}

/** 'AttachPayment' query type */
export interface IAttachPaymentQuery {
  params: IAttachPaymentParams;
  result: IAttachPaymentResult;
}

/** 'LockUnattributed' parameters type */
export interface ILockUnattributedParams {
  id: string;
  merchantId: string;
}

/** 'LockUnattributed' return type */
export interface ILockUnattributedResult {
  amount: string;
  mint: string;
  refund_held: string;
  status: string;
}

/** 'LockUnattributed' query type */
export interface ILockUnattributedQuery {
  params: ILockUnattributedParams;
  result: ILockUnattributedResult;
}

/** 'FinalizePayment' parameters type */
export interface IFinalizePaymentParams {
  at: Date | string;
  id: string;
}

/** 'FinalizePayment' return type */
export interface IFinalizePaymentResult {
  amount: string;
  created_at: string;
  customer_id: string | null;
  destination: string | null;
  details: Json | null;
  excess: string;
  fee: string;
  finalized_at: string | null;
  id: string;
  invoice_id: string | null;
  kind: string;
  merchant_id: string;
  mint: string;
  note: string | null;
  payer: string | null;
  period: number | null;
  references: stringArray | null;
  signature: string | null;
  slot: string | null;
  status: string;
  subscription_id: string | null;
  updated_at: string;
}

/** 'FinalizePayment' query type */
export interface IFinalizePaymentQuery {
  params: IFinalizePaymentParams;
  result: IFinalizePaymentResult;
}

/** 'FindLegacyInvoiceLine' parameters type */
export interface IFindLegacyInvoiceLineParams {
  merchantId: string;
  mint: string;
  signature: string;
}

/** 'FindLegacyInvoiceLine' return type */
export interface IFindLegacyInvoiceLineResult {
  one: number | null;
}

/** 'FindLegacyInvoiceLine' query type */
export interface IFindLegacyInvoiceLineQuery {
  params: IFindLegacyInvoiceLineParams;
  result: IFindLegacyInvoiceLineResult;
}

/** 'FindPayment' parameters type */
export interface IFindPaymentParams {
  id: string;
  merchantId: string;
}

/** 'FindPayment' return type */
export interface IFindPaymentResult {
  id: string;
}

/** 'FindPayment' query type */
export interface IFindPaymentQuery {
  params: IFindPaymentParams;
  result: IFindPaymentResult;
}

/** 'PaymentCreatedAt' parameters type */
export interface IPaymentCreatedAtParams {
  id: string;
  merchantId: string;
}

/** 'PaymentCreatedAt' return type */
export interface IPaymentCreatedAtResult {
  created_at: string;
}

/** 'PaymentCreatedAt' query type */
export interface IPaymentCreatedAtQuery {
  params: IPaymentCreatedAtParams;
  result: IPaymentCreatedAtResult;
}

