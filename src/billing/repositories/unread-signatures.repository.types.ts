/** Types generated for queries found in "src/billing/repositories/unread-signatures.repository.ts" */
export type NumberOrString = number | string;

export type NumberOrStringArray = (NumberOrString)[];

export type stringArray = (string)[];

/** 'Park' parameters type */
export interface IParkParams {
  address: string;
  kind: string;
  merchantId: string;
  now: Date | string;
  signatures: stringArray;
  slots: NumberOrStringArray;
}

/** 'Park' return type */
export type IParkResult = void;

/** 'Park' query type */
export interface IParkQuery {
  params: IParkParams;
  result: IParkResult;
}

/** 'Remove' parameters type */
export interface IRemoveParams {
  address: string;
  signatures: stringArray;
}

/** 'Remove' return type */
export type IRemoveResult = void;

/** 'Remove' query type */
export interface IRemoveQuery {
  params: IRemoveParams;
  result: IRemoveResult;
}

/** 'Due' parameters type */
export interface IDueParams {
  address: string;
  limit: NumberOrString;
}

/** 'Due' return type */
export interface IDueResult {
  signature: string;
  slot: string;
}

/** 'Due' query type */
export interface IDueQuery {
  params: IDueParams;
  result: IDueResult;
}

/** 'CountTries' parameters type */
export interface ICountTriesParams {
  address: string;
  now: Date | string;
  signatures: stringArray;
}

/** 'CountTries' return type */
export interface ICountTriesResult {
  first_seen_at: string;
  signature: string;
  tries: number;
}

/** 'CountTries' query type */
export interface ICountTriesQuery {
  params: ICountTriesParams;
  result: ICountTriesResult;
}

