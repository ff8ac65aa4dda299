/** Types generated for queries found in "src/billing/repositories/wallet-reservations.repository.ts" */

/** 'ReservedStillNeeded' parameters type */
export interface IReservedStillNeededParams {
  mint: string;
  wallet: string;
}

/** 'ReservedStillNeeded' return type */
export interface IReservedStillNeededResult {
  total: string;
}

/** 'ReservedStillNeeded' query type */
export interface IReservedStillNeededQuery {
  params: IReservedStillNeededParams;
  result: IReservedStillNeededResult;
}

/** 'ReservedStillNeededExcept' parameters type */
export interface IReservedStillNeededExceptParams {
  exceptPlanId: string;
  mint: string;
  wallet: string;
}

/** 'ReservedStillNeededExcept' return type */
export interface IReservedStillNeededExceptResult {
  total: string;
}

/** 'ReservedStillNeededExcept' query type */
export interface IReservedStillNeededExceptQuery {
  params: IReservedStillNeededExceptParams;
  result: IReservedStillNeededExceptResult;
}

/** 'ReservedForApproval' parameters type */
export interface IReservedForApprovalParams {
  mint: string;
  wallet: string;
}

/** 'ReservedForApproval' return type */
export interface IReservedForApprovalResult {
  total: string;
}

/** 'ReservedForApproval' query type */
export interface IReservedForApprovalQuery {
  params: IReservedForApprovalParams;
  result: IReservedForApprovalResult;
}

/** 'ReservedForApprovalExcept' parameters type */
export interface IReservedForApprovalExceptParams {
  exceptPlanId: string;
  mint: string;
  wallet: string;
}

/** 'ReservedForApprovalExcept' return type */
export interface IReservedForApprovalExceptResult {
  total: string;
}

/** 'ReservedForApprovalExcept' query type */
export interface IReservedForApprovalExceptQuery {
  params: IReservedForApprovalExceptParams;
  result: IReservedForApprovalExceptResult;
}

/** 'WalletReservation' parameters type */
export interface IWalletReservationParams {
  mint: string;
  selfCreatedAt: Date | string;
  selfId: string;
  wallet: string;
}

/** 'WalletReservation' return type */
export interface IWalletReservationResult {
  in_flight: number;
  reserved: string;
  siblings: number;
  version: string;
}

/** 'WalletReservation' query type */
export interface IWalletReservationQuery {
  params: IWalletReservationParams;
  result: IWalletReservationResult;
}

