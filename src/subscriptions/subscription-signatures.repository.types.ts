/** Types generated for queries found in "src/subscriptions/subscription-signatures.repository.ts" */

/** 'FindSignatureUse' parameters type */
export interface IFindSignatureUseParams {
  signature: string;
}

/** 'FindSignatureUse' return type */
export interface IFindSignatureUseResult {
  plan_id: string;
  subscription_id: string;
  use: string;
}

/** 'FindSignatureUse' query type */
export interface IFindSignatureUseQuery {
  params: IFindSignatureUseParams;
  result: IFindSignatureUseResult;
}

/** 'InsertSignature' parameters type */
export interface IInsertSignatureParams {
  at: Date | string;
  signature: string;
  subscriptionId: string;
  use: string;
}

/** 'InsertSignature' return type */
export interface IInsertSignatureResult {
  signature: string;
}

/** 'InsertSignature' query type */
export interface IInsertSignatureQuery {
  params: IInsertSignatureParams;
  result: IInsertSignatureResult;
}

/** 'InsertSignatureOnce' parameters type */
export interface IInsertSignatureOnceParams {
  at: Date | string;
  signature: string;
  subscriptionId: string;
  use: string;
}

/** 'InsertSignatureOnce' return type */
export interface IInsertSignatureOnceResult {
  signature: string;
}

/** 'InsertSignatureOnce' query type */
export interface IInsertSignatureOnceQuery {
  params: IInsertSignatureOnceParams;
  result: IInsertSignatureOnceResult;
}

