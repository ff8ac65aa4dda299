/** Types generated for queries found in "src/merchants/merchants.repository.ts" */

/** 'WalletTaken' parameters type */
export interface IWalletTakenParams {
  walletAddress: string;
}

/** 'WalletTaken' return type */
export interface IWalletTakenResult {
  id: string;
}

/** 'WalletTaken' query type */
export interface IWalletTakenQuery {
  params: IWalletTakenParams;
  result: IWalletTakenResult;
}

/** 'InsertMerchant' parameters type */
export interface IInsertMerchantParams {
  at: Date | string;
  id: string;
  name: string;
  walletAddress: string;
  webhookSecret: string;
}

/** 'InsertMerchant' return type */
export type IInsertMerchantResult = void;

/** 'InsertMerchant' query type */
export interface IInsertMerchantQuery {
  params: IInsertMerchantParams;
  result: IInsertMerchantResult;
}

/** 'Account' parameters type */
export interface IAccountParams {
  id: string;
}

/** 'Account' return type */
export interface IAccountResult {
  id: string;
  name: string;
  walletAddress: string;
}

/** 'Account' query type */
export interface IAccountQuery {
  params: IAccountParams;
  result: IAccountResult;
}

/** 'CountMerchants' parameters type */
export type ICountMerchantsParams = void;

/** 'CountMerchants' return type */
export interface ICountMerchantsResult {
  count: number;
}

/** 'CountMerchants' query type */
export interface ICountMerchantsQuery {
  params: ICountMerchantsParams;
  result: ICountMerchantsResult;
}

/** 'WebhookUrl' parameters type */
export interface IWebhookUrlParams {
  id: string;
}

/** 'WebhookUrl' return type */
export interface IWebhookUrlResult {
  webhookUrl: string | null;
}

/** 'WebhookUrl' query type */
export interface IWebhookUrlQuery {
  params: IWebhookUrlParams;
  result: IWebhookUrlResult;
}

/** 'SetWebhookUrl' parameters type */
export interface ISetWebhookUrlParams {
  at: Date | string;
  id: string;
  webhookUrl?: string | null | void;
}

/** 'SetWebhookUrl' return type */
export interface ISetWebhookUrlResult {
  webhookUrl: string | null;
}

/** 'SetWebhookUrl' query type */
export interface ISetWebhookUrlQuery {
  params: ISetWebhookUrlParams;
  result: ISetWebhookUrlResult;
}

/** 'WebhookSecrets' parameters type */
export interface IWebhookSecretsParams {
  id: string;
}

/** 'WebhookSecrets' return type */
export interface IWebhookSecretsResult {
  previous_webhook_secret: string | null;
  previous_webhook_secret_expires_at: string | null;
  webhook_secret: string;
}

/** 'WebhookSecrets' query type */
export interface IWebhookSecretsQuery {
  params: IWebhookSecretsParams;
  result: IWebhookSecretsResult;
}

/** 'RotateWebhookSecret' parameters type */
export interface IRotateWebhookSecretParams {
  at: Date | string;
  id: string;
  previousExpiresAt: Date | string;
  secret: string;
}

/** 'RotateWebhookSecret' return type */
export interface IRotateWebhookSecretResult {
  previous_webhook_secret: string | null;
  previous_webhook_secret_expires_at: string | null;
  webhook_secret: string;
}

/** 'RotateWebhookSecret' query type */
export interface IRotateWebhookSecretQuery {
  params: IRotateWebhookSecretParams;
  result: IRotateWebhookSecretResult;
}

