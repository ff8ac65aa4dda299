/** Types generated for queries found in "src/customers/customers.repository.ts" */

/** 'ListCustomers' parameters type */
export interface IListCustomersParams {
  merchantId: string;
}

/** 'ListCustomers' return type */
export interface IListCustomersResult {
  created_at: string;
  email: string | null;
  id: string;
  invoices: number;
  label: string | null;
  merchant_id: string;
  subscriptions: number;
  updated_at: string;
  wallet_address: string;
}

/** 'ListCustomers' query type */
export interface IListCustomersQuery {
  params: IListCustomersParams;
  result: IListCustomersResult;
}

/** 'ListCustomersPage' parameters type */
export interface IListCustomersPageParams {
  afterCreatedAt?: Date | string | null | void;
  afterId?: string | null | void;
  limit?: number | null | void;
  merchantId: string;
}

/** 'ListCustomersPage' return type */
export interface IListCustomersPageResult {
  created_at: string;
  email: string | null;
  id: string;
  invoices: number;
  label: string | null;
  merchant_id: string;
  subscriptions: number;
  updated_at: string;
  wallet_address: string;
}

/** 'ListCustomersPage' query type */
export interface IListCustomersPageQuery {
  params: IListCustomersPageParams;
  result: IListCustomersPageResult;
}

/** 'SearchCustomers' parameters type */
export interface ISearchCustomersParams {
  afterCreatedAt?: Date | string | null | void;
  afterId?: string | null | void;
  limit?: number | null | void;
  merchantId: string;
  pattern: string;
}

/** 'SearchCustomers' return type */
export interface ISearchCustomersResult {
  created_at: string;
  email: string | null;
  id: string;
  invoices: number;
  label: string | null;
  merchant_id: string;
  subscriptions: number;
  updated_at: string;
  wallet_address: string;
}

/** 'SearchCustomers' query type */
export interface ISearchCustomersQuery {
  params: ISearchCustomersParams;
  result: ISearchCustomersResult;
}

/** 'CustomerCreatedAt' parameters type */
export interface ICustomerCreatedAtParams {
  id: string;
  merchantId: string;
}

/** 'CustomerCreatedAt' return type */
export interface ICustomerCreatedAtResult {
  created_at: string;
}

/** 'CustomerCreatedAt' query type */
export interface ICustomerCreatedAtQuery {
  params: ICustomerCreatedAtParams;
  result: ICustomerCreatedAtResult;
}

/** 'FindCustomer' parameters type */
export interface IFindCustomerParams {
  id: string;
  merchantId: string;
}

/** 'FindCustomer' return type */
export interface IFindCustomerResult {
  created_at: string;
  email: string | null;
  id: string;
  label: string | null;
  merchant_id: string;
  updated_at: string;
  wallet_address: string;
}

/** 'FindCustomer' query type */
export interface IFindCustomerQuery {
  params: IFindCustomerParams;
  result: IFindCustomerResult;
}

/** 'FindCustomerByWallet' parameters type */
export interface IFindCustomerByWalletParams {
  merchantId: string;
  walletAddress: string;
}

/** 'FindCustomerByWallet' return type */
export interface IFindCustomerByWalletResult {
  created_at: string;
  email: string | null;
  id: string;
  label: string | null;
  merchant_id: string;
  updated_at: string;
  wallet_address: string;
}

/** 'FindCustomerByWallet' query type */
export interface IFindCustomerByWalletQuery {
  params: IFindCustomerByWalletParams;
  result: IFindCustomerByWalletResult;
}

/** 'UpsertCustomer' parameters type */
export interface IUpsertCustomerParams {
  at: Date | string;
  email?: string | null | void;
  id: string;
  label?: string | null | void;
  merchantId: string;
  walletAddress: string;
}

/** 'UpsertCustomer' return type */
export interface IUpsertCustomerResult {
  created: boolean;
  created_at: string;
  email: string | null;
  id: string;
  label: string | null;
  merchant_id: string;
  updated_at: string;
  wallet_address: string;
}

/** 'UpsertCustomer' query type */
export interface IUpsertCustomerQuery {
  params: IUpsertCustomerParams;
  result: IUpsertCustomerResult;
}

/** 'UpdateCustomer' parameters type */
export interface IUpdateCustomerParams {
  at: Date | string;
  email?: string | null | void;
  id: string;
  label?: string | null | void;
  merchantId: string;
  setEmail: boolean;
  setLabel: boolean;
}

/** 'UpdateCustomer' return type */
export interface IUpdateCustomerResult {
  changed: boolean;
  created_at: string;
  email: string | null;
  id: string;
  label: string | null;
  merchant_id: string;
  updated_at: string;
  wallet_address: string;
}

/** 'UpdateCustomer' query type */
export interface IUpdateCustomerQuery {
  params: IUpdateCustomerParams;
  result: IUpdateCustomerResult;
}

/** 'FindWithMerchantName' parameters type */
export interface IFindWithMerchantNameParams {
  customerId: string;
  merchantId: string;
}

/** 'FindWithMerchantName' return type */
export interface IFindWithMerchantNameResult {
  email: string | null;
  merchant_name: string;
  wallet_address: string;
}

/** 'FindWithMerchantName' query type */
export interface IFindWithMerchantNameQuery {
  params: IFindWithMerchantNameParams;
  result: IFindWithMerchantNameResult;
}

