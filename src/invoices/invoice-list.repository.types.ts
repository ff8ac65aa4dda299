/** Types generated for queries found in "src/invoices/invoice-list.repository.ts" */

/** 'ListInvoices' parameters type */
export interface IListInvoicesParams {
  afterCreatedAt?: Date | string | null | void;
  afterId?: string | null | void;
  limit?: number | null | void;
  merchantId: string;
}

/** 'ListInvoices' return type */
export interface IListInvoicesResult {
  amount_credited: string;
  amount_credited_to_balance: string;
  amount_due: string;
  amount_paid: string;
  amount_refunded: string;
  customer_json: string;
  id: string;
  line_items: string;
  line_items_rendered: boolean;
  list_json_due_date: string;
  list_json_head: string;
  list_json_tail: string;
  subtotal: string;
  tax: string;
  tax_bps: number;
  total: string;
}

/** 'ListInvoices' query type */
export interface IListInvoicesQuery {
  params: IListInvoicesParams;
  result: IListInvoicesResult;
}

/** 'ListInvoicesByStatus' parameters type */
export interface IListInvoicesByStatusParams {
  afterCreatedAt?: Date | string | null | void;
  afterId?: string | null | void;
  limit?: number | null | void;
  merchantId: string;
  status: string;
}

/** 'ListInvoicesByStatus' return type */
export interface IListInvoicesByStatusResult {
  amount_credited: string;
  amount_credited_to_balance: string;
  amount_due: string;
  amount_paid: string;
  amount_refunded: string;
  customer_json: string;
  id: string;
  line_items: string;
  line_items_rendered: boolean;
  list_json_due_date: string;
  list_json_head: string;
  list_json_tail: string;
  subtotal: string;
  tax: string;
  tax_bps: number;
  total: string;
}

/** 'ListInvoicesByStatus' query type */
export interface IListInvoicesByStatusQuery {
  params: IListInvoicesByStatusParams;
  result: IListInvoicesByStatusResult;
}

/** 'ListInvoicesBySearch' parameters type */
export interface IListInvoicesBySearchParams {
  afterCreatedAt?: Date | string | null | void;
  afterId?: string | null | void;
  limit?: number | null | void;
  merchantId: string;
  pattern: string;
}

/** 'ListInvoicesBySearch' return type */
export interface IListInvoicesBySearchResult {
  amount_credited: string;
  amount_credited_to_balance: string;
  amount_due: string;
  amount_paid: string;
  amount_refunded: string;
  customer_json: string;
  id: string;
  line_items: string;
  line_items_rendered: boolean;
  list_json_due_date: string;
  list_json_head: string;
  list_json_tail: string;
  subtotal: string;
  tax: string;
  tax_bps: number;
  total: string;
}

/** 'ListInvoicesBySearch' query type */
export interface IListInvoicesBySearchQuery {
  params: IListInvoicesBySearchParams;
  result: IListInvoicesBySearchResult;
}

/** 'ListInvoicesByStatusAndSearch' parameters type */
export interface IListInvoicesByStatusAndSearchParams {
  afterCreatedAt?: Date | string | null | void;
  afterId?: string | null | void;
  limit?: number | null | void;
  merchantId: string;
  pattern: string;
  status: string;
}

/** 'ListInvoicesByStatusAndSearch' return type */
export interface IListInvoicesByStatusAndSearchResult {
  amount_credited: string;
  amount_credited_to_balance: string;
  amount_due: string;
  amount_paid: string;
  amount_refunded: string;
  customer_json: string;
  id: string;
  line_items: string;
  line_items_rendered: boolean;
  list_json_due_date: string;
  list_json_head: string;
  list_json_tail: string;
  subtotal: string;
  tax: string;
  tax_bps: number;
  total: string;
}

/** 'ListInvoicesByStatusAndSearch' query type */
export interface IListInvoicesByStatusAndSearchQuery {
  params: IListInvoicesByStatusAndSearchParams;
  result: IListInvoicesByStatusAndSearchResult;
}

/** 'InvoiceCreatedAt' parameters type */
export interface IInvoiceCreatedAtParams {
  id: string;
  merchantId: string;
}

/** 'InvoiceCreatedAt' return type */
export interface IInvoiceCreatedAtResult {
  created_at: string;
}

/** 'InvoiceCreatedAt' query type */
export interface IInvoiceCreatedAtQuery {
  params: IInvoiceCreatedAtParams;
  result: IInvoiceCreatedAtResult;
}

