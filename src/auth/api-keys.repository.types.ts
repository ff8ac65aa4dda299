/** Types generated for queries found in "src/auth/api-keys.repository.ts" */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** 'InsertApiKey' parameters type */
export interface IInsertApiKeyParams {
  at: Date | string;
  id: string;
  keyHash: string;
  label?: string | null | void;
  merchantId: string;
  prefix: string;
}

/** 'InsertApiKey' return type */
export type IInsertApiKeyResult = void;

/** 'InsertApiKey' query type */
export interface IInsertApiKeyQuery {
  params: IInsertApiKeyParams;
  result: IInsertApiKeyResult;
}

/** 'LockMerchant' parameters type */
export interface ILockMerchantParams {
  merchantId: string;
}

/** 'LockMerchant' return type */
export interface ILockMerchantResult {
  id: string;
}

/** 'LockMerchant' query type */
export interface ILockMerchantQuery {
  params: ILockMerchantParams;
  result: ILockMerchantResult;
}

/** 'CountActiveKeys' parameters type */
export interface ICountActiveKeysParams {
  merchantId: string;
}

/** 'CountActiveKeys' return type */
export interface ICountActiveKeysResult {
  count: number;
}

/** 'CountActiveKeys' query type */
export interface ICountActiveKeysQuery {
  params: ICountActiveKeysParams;
  result: ICountActiveKeysResult;
}

/** 'ListActiveKeys' parameters type */
export interface IListActiveKeysParams {
  merchantId: string;
}

/** 'ListActiveKeys' return type */
export interface IListActiveKeysResult {
  created_at: string;
  id: string;
  label: string | null;
  last_used_at: string | null;
  prefix: string;
}

/** 'ListActiveKeys' query type */
export interface IListActiveKeysQuery {
  params: IListActiveKeysParams;
  result: IListActiveKeysResult;
}

/** 'RevokeKey' parameters type */
export interface IRevokeKeyParams {
  at: Date | string;
  id: string;
  merchantId: string;
}

/** 'RevokeKey' return type */
export interface IRevokeKeyResult {
  key_hash: string;
}

/** 'RevokeKey' query type */
export interface IRevokeKeyQuery {
  params: IRevokeKeyParams;
  result: IRevokeKeyResult;
}

/** 'NotifyRevoked' parameters type */
export interface INotifyRevokedParams {
  channel: string;
  hash: string;
}

/** 'NotifyRevoked' return type */
export interface INotifyRevokedResult {
  pg_notify: undefined | null;
}

/** 'NotifyRevoked' query type */
export interface INotifyRevokedQuery {
  params: INotifyRevokedParams;
  result: INotifyRevokedResult;
}

/** 'FindActiveKey' parameters type */
export interface IFindActiveKeyParams {
  keyHash: string;
}

/** 'FindActiveKey' return type */
export interface IFindActiveKeyResult {
  id: string;
  merchant_id: string;
}

/** 'FindActiveKey' query type */
export interface IFindActiveKeyQuery {
  params: IFindActiveKeyParams;
  result: IFindActiveKeyResult;
}

/** 'RecordLastUses' parameters type */
export interface IRecordLastUsesParams {
  uses: Json;
}

/** 'RecordLastUses' return type */
export type IRecordLastUsesResult = void;

/** 'RecordLastUses' query type */
export interface IRecordLastUsesQuery {
  params: IRecordLastUsesParams;
  result: IRecordLastUsesResult;
}

