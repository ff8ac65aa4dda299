/** Types generated for queries found in "src/customers/customer-credits.repository.ts" */
export type NumberOrString = number | string;

/** 'LockCredits' parameters type */
export interface ILockCreditsParams {
  customerId: string;
}

/** 'LockCredits' return type */
export interface ILockCreditsResult {
  locked: undefined;
}

/** 'LockCredits' query type */
export interface ILockCreditsQuery {
  params: ILockCreditsParams;
  result: ILockCreditsResult;
}

/** 'CreditBalance' parameters type */
export interface ICreditBalanceParams {
  customerId: string;
  merchantId: string;
  mint: string;
}

/** 'CreditBalance' return type */
export interface ICreditBalanceResult {
  balance: string;
}

/** 'CreditBalance' query type */
export interface ICreditBalanceQuery {
  params: ICreditBalanceParams;
  result: ICreditBalanceResult;
}

/** 'BalancesOf' parameters type */
export interface IBalancesOfParams {
  customerId: string;
  merchantId: string;
}

/** 'BalancesOf' return type */
export interface IBalancesOfResult {
  balance: string;
  mint: string;
}

/** 'BalancesOf' query type */
export interface IBalancesOfQuery {
  params: IBalancesOfParams;
  result: IBalancesOfResult;
}

/** 'CreditOfInvoice' parameters type */
export interface ICreditOfInvoiceParams {
  customerId: string;
  invoiceId: string;
}

/** 'CreditOfInvoice' return type */
export interface ICreditOfInvoiceResult {
  net: string;
}

/** 'CreditOfInvoice' query type */
export interface ICreditOfInvoiceQuery {
  params: ICreditOfInvoiceParams;
  result: ICreditOfInvoiceResult;
}

/** 'InsertCredit' parameters type */
export interface IInsertCreditParams {
  amount: NumberOrString;
  at: Date | string;
  creditNoteId?: string | null | void;
  customerId: string;
  id: string;
  invoiceId?: string | null | void;
  merchantId: string;
  mint: string;
}

/** 'InsertCredit' return type */
export type IInsertCreditResult = void;

/** 'InsertCredit' query type */
export interface IInsertCreditQuery {
  params: IInsertCreditParams;
  result: IInsertCreditResult;
}

