/** Types generated for queries found in "src/x402/x402.repository.ts" */
export type DateOrString = Date | string;

export type NumberOrString = number | string;

export type stringArray = (string)[];

/** 'InsertSettlement' parameters type */
export interface IInsertSettlementParams {
  amount: NumberOrString;
  at: Date | string;
  id: string;
  lastValidBlockHeight: NumberOrString;
  merchantId: string;
  mint: string;
  network: string;
  networkFee: NumberOrString;
  payer: string;
  resourceUrl?: string | null | void;
  signature: string;
  transaction: string;
}

/** 'InsertSettlement' return type */
export interface IInsertSettlementResult {
  id: string;
}

/** 'InsertSettlement' query type */
export interface IInsertSettlementQuery {
  params: IInsertSettlementParams;
  result: IInsertSettlementResult;
}

/** 'SpendFee' parameters type */
export interface ISpendFeeParams {
  budget: NumberOrString;
  day: DateOrString;
  fee: NumberOrString;
  merchantId: string;
}

/** 'SpendFee' return type */
export interface ISpendFeeResult {
  spent: string;
}

/** 'SpendFee' query type */
export interface ISpendFeeQuery {
  params: ISpendFeeParams;
  result: ISpendFeeResult;
}

/** 'ReleaseFee' parameters type */
export interface IReleaseFeeParams {
  day: DateOrString;
  fee: NumberOrString;
  merchantId: string;
}

/** 'ReleaseFee' return type */
export type IReleaseFeeResult = void;

/** 'ReleaseFee' query type */
export interface IReleaseFeeQuery {
  params: IReleaseFeeParams;
  result: IReleaseFeeResult;
}

/** 'FeeSpent' parameters type */
export interface IFeeSpentParams {
  day: DateOrString;
  merchantId: string;
}

/** 'FeeSpent' return type */
export interface IFeeSpentResult {
  spent: string;
}

/** 'FeeSpent' query type */
export interface IFeeSpentQuery {
  params: IFeeSpentParams;
  result: IFeeSpentResult;
}

/** 'SettleSettlement' parameters type */
export interface ISettleSettlementParams {
  at: Date | string;
  id: string;
  paymentId: string;
}

/** 'SettleSettlement' return type */
export interface ISettleSettlementResult {
  id: string;
}

/** 'SettleSettlement' query type */
export interface ISettleSettlementQuery {
  params: ISettleSettlementParams;
  result: ISettleSettlementResult;
}

/** 'FailSettlement' parameters type */
export interface IFailSettlementParams {
  at: Date | string;
  error: string;
  id: string;
}

/** 'FailSettlement' return type */
export interface IFailSettlementResult {
  day: string;
}

/** 'FailSettlement' query type */
export interface IFailSettlementQuery {
  params: IFailSettlementParams;
  result: IFailSettlementResult;
}

/** 'LandedFailures' parameters type */
export interface ILandedFailuresParams {
  at: Date | string;
  merchantId: string;
  payer: string;
}

/** 'LandedFailures' return type */
export interface ILandedFailuresResult {
  failures: number;
}

/** 'LandedFailures' query type */
export interface ILandedFailuresQuery {
  params: ILandedFailuresParams;
  result: ILandedFailuresResult;
}

/** 'SettlementSignatures' parameters type */
export interface ISettlementSignaturesParams {
  signatures: stringArray;
}

/** 'SettlementSignatures' return type */
export interface ISettlementSignaturesResult {
  signature: string;
}

/** 'SettlementSignatures' query type */
export interface ISettlementSignaturesQuery {
  params: ISettlementSignaturesParams;
  result: ISettlementSignaturesResult;
}

/** 'PendingSettlements' parameters type */
export interface IPendingSettlementsParams {
  before: Date | string;
  limit: number;
}

/** 'PendingSettlements' return type */
export interface IPendingSettlementsResult {
  amount: string;
  id: string;
  last_valid_block_height: string;
  merchant_id: string;
  mint: string;
  network: string;
  network_fee: string;
  payer: string;
  resource_url: string | null;
  signature: string;
}

/** 'PendingSettlements' query type */
export interface IPendingSettlementsQuery {
  params: IPendingSettlementsParams;
  result: IPendingSettlementsResult;
}

