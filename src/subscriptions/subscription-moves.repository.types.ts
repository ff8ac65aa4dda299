/** Types generated for queries found in "src/subscriptions/subscription-moves.repository.ts" */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type stringArray = (string)[];

/** 'LiveDelegatedOfWallet' parameters type */
export interface ILiveDelegatedOfWalletParams {
  mint: string;
  walletAddress: string;
}

/** 'LiveDelegatedOfWallet' return type */
export interface ILiveDelegatedOfWalletResult {
  amount: string;
  id: string;
  interval_seconds: number;
  merchant_id: string;
  merchant_wallet: string;
  plan_id: string;
}

/** 'LiveDelegatedOfWallet' query type */
export interface ILiveDelegatedOfWalletQuery {
  params: ILiveDelegatedOfWalletParams;
  result: ILiveDelegatedOfWalletResult;
}

/** 'MoveToProgram' parameters type */
export interface IMoveToProgramParams {
  at: Date | string;
  moves: Json;
}

/** 'MoveToProgram' return type */
export interface IMoveToProgramResult {
  id: string;
}

/** 'MoveToProgram' query type */
export interface IMoveToProgramQuery {
  params: IMoveToProgramParams;
  result: IMoveToProgramResult;
}

/** 'LockForMove' parameters type */
export interface ILockForMoveParams {
  ids: stringArray;
}

/** 'LockForMove' return type */
export interface ILockForMoveResult {
  id: string;
}

/** 'LockForMove' query type */
export interface ILockForMoveQuery {
  params: ILockForMoveParams;
  result: ILockForMoveResult;
}

