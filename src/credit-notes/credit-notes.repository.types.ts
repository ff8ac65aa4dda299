/** Types generated for queries found in "src/credit-notes/credit-notes.repository.ts" */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type NumberOrString = number | string;

/** 'LockCreditNoteNumbers' parameters type */
export interface ILockCreditNoteNumbersParams {
  merchantId: string;
}

/** 'LockCreditNoteNumbers' return type */
export interface ILockCreditNoteNumbersResult {
  locked: undefined;
}

/** 'LockCreditNoteNumbers' query type */
export interface ILockCreditNoteNumbersQuery {
  params: ILockCreditNoteNumbersParams;
  result: ILockCreditNoteNumbersResult;
}

/** 'NextCreditNoteNumber' parameters type */
export interface INextCreditNoteNumberParams {
  merchantId: string;
}

/** 'NextCreditNoteNumber' return type */
export interface INextCreditNoteNumberResult {
  next: number;
}

/** 'NextCreditNoteNumber' query type */
export interface INextCreditNoteNumberQuery {
  params: INextCreditNoteNumberParams;
  result: INextCreditNoteNumberResult;
}

/** 'FindCreditNote' parameters type */
export interface IFindCreditNoteParams {
  id: string;
  merchantId?: string | null | void;
}

/** 'FindCreditNote' return type */
export interface IFindCreditNoteResult {
  action: string;
  amount: string;
  created_at: string;
  customer_id: string;
  id: string;
  invoice_id: string;
  lines: Json;
  memo: string | null;
  merchant_id: string;
  mint: string;
  number: number;
  reason: string;
  refund_id: string | null;
  subtotal: string;
  tax: string;
}

/** 'FindCreditNote' query type */
export interface IFindCreditNoteQuery {
  params: IFindCreditNoteParams;
  result: IFindCreditNoteResult;
}

/** 'ListCreditNotes' parameters type */
export interface IListCreditNotesParams {
  afterCreatedAt?: Date | string | null | void;
  afterId?: string | null | void;
  customerId?: string | null | void;
  invoiceId?: string | null | void;
  limit?: number | null | void;
  merchantId: string;
}

/** 'ListCreditNotes' return type */
export interface IListCreditNotesResult {
  action: string;
  amount: string;
  created_at: string;
  customer_id: string;
  id: string;
  invoice_id: string;
  lines: Json;
  memo: string | null;
  merchant_id: string;
  mint: string;
  number: number;
  reason: string;
  refund_id: string | null;
  subtotal: string;
  tax: string;
}

/** 'ListCreditNotes' query type */
export interface IListCreditNotesQuery {
  params: IListCreditNotesParams;
  result: IListCreditNotesResult;
}

/** 'InsertCreditNote' parameters type */
export interface IInsertCreditNoteParams {
  action: string;
  amount: NumberOrString;
  at: Date | string;
  customerId: string;
  id: string;
  invoiceId: string;
  lines: Json;
  memo?: string | null | void;
  merchantId: string;
  mint: string;
  number: number;
  reason: string;
  refundId?: string | null | void;
  subtotal: NumberOrString;
  tax: NumberOrString;
}

/** 'InsertCreditNote' return type */
export interface IInsertCreditNoteResult {
  action: string;
  amount: string;
  created_at: string;
  customer_id: string;
  id: string;
  invoice_id: string;
  lines: Json;
  memo: string | null;
  merchant_id: string;
  mint: string;
  number: number;
  reason: string;
  refund_id: string | null;
  subtotal: string;
  tax: string;
}

/** 'InsertCreditNote' query type */
export interface IInsertCreditNoteQuery {
  params: IInsertCreditNoteParams;
  result: IInsertCreditNoteResult;
}

/** 'CreditNoteCreatedAt' parameters type */
export interface ICreditNoteCreatedAtParams {
  id: string;
  merchantId: string;
}

/** 'CreditNoteCreatedAt' return type */
export interface ICreditNoteCreatedAtResult {
  created_at: string;
}

/** 'CreditNoteCreatedAt' query type */
export interface ICreditNoteCreatedAtQuery {
  params: ICreditNoteCreatedAtParams;
  result: ICreditNoteCreatedAtResult;
}

