/** Types generated for queries found in "src/invoices/invoice-views.repository.ts" */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** 'FindForCheckout' parameters type */
export interface IFindForCheckoutParams {
  id: string;
}

/** 'FindForCheckout' return type */
export interface IFindForCheckoutResult {
  amount_credited: string;
  amount_credited_to_balance: string;
  amount_due: string;
  amount_paid: string;
  amount_refunded: string;
  created_at: string;
  customer_id: string;
  customer_label: string | null;
  customer_wallet: string;
  due_date: string | null;
  id: string;
  line_items: Json;
  memo: string | null;
  merchant_id: string;
  merchant_name: string;
  merchant_wallet: string;
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

/** 'FindForCheckout' query type */
export interface IFindForCheckoutQuery {
  params: IFindForCheckoutParams;
  result: IFindForCheckoutResult;
}

/** 'ListForPortal' parameters type */
export interface IListForPortalParams {
  customerId: string;
  merchantId: string;
}

/** 'ListForPortal' return type */
export interface IListForPortalResult {
  amount_due: string;
  amount_paid: string;
  due_date: string | null;
  id: string;
  mint: string;
  number: number;
  status: string;
  total: string;
}

/** 'ListForPortal' query type */
export interface IListForPortalQuery {
  params: IListForPortalParams;
  result: IListForPortalResult;
}

