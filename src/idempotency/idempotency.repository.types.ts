/** Types generated for queries found in "src/idempotency/idempotency.repository.ts" */
export type NumberOrString = number | string;

/** 'ClaimKey' parameters type */
export interface IClaimKeyParams {
  createdAt: Date | string;
  expiresAt: Date | string;
  fingerprint: string;
  id: string;
  key: string;
  lockedUntil: Date | string;
  merchantId: string;
  owner: string;
}

/** 'ClaimKey' return type */
export interface IClaimKeyResult {
  id: string;
  owner: string;
}

/** 'ClaimKey' query type */
export interface IClaimKeyQuery {
  params: IClaimKeyParams;
  result: IClaimKeyResult;
}

/** 'FindKey' parameters type */
export interface IFindKeyParams {
  key: string;
  merchantId: string;
}

/** 'FindKey' return type */
export interface IFindKeyResult {
  fingerprint: string;
  response_body: string | null;
  response_status: number | null;
}

/** 'FindKey' query type */
export interface IFindKeyQuery {
  params: IFindKeyParams;
  result: IFindKeyResult;
}

/** 'CompleteKey' parameters type */
export interface ICompleteKeyParams {
  at: Date | string;
  body: string;
  id: string;
  owner: string;
  status: number;
}

/** 'CompleteKey' return type */
export interface ICompleteKeyResult {
  id: string;
}

/** 'CompleteKey' query type */
export interface ICompleteKeyQuery {
  params: ICompleteKeyParams;
  result: ICompleteKeyResult;
}

/** 'ReleaseKey' parameters type */
export interface IReleaseKeyParams {
  id: string;
  owner: string;
}

/** 'ReleaseKey' return type */
export type IReleaseKeyResult = void;

/** 'ReleaseKey' query type */
export interface IReleaseKeyQuery {
  params: IReleaseKeyParams;
  result: IReleaseKeyResult;
}

/** 'PurgeExpiredKeys' parameters type */
export interface IPurgeExpiredKeysParams {
  limit: NumberOrString;
  now: Date | string;
}

/** 'PurgeExpiredKeys' return type */
export interface IPurgeExpiredKeysResult {
  id: string;
}

/** 'PurgeExpiredKeys' query type */
export interface IPurgeExpiredKeysQuery {
  params: IPurgeExpiredKeysParams;
  result: IPurgeExpiredKeysResult;
}

