import { DomainError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-codes';
import type { MintSymbol } from './mints';

/** How a charge or a chain read fails, as `ChainPort` reports it. */

/**
 * Why a charge did not happen: docs/solana.md has each class and what billing does with it
 * (the issuer's side, `ISSUER_SIDE_FAILURES`, waits: never the customer's fault).
 */
export type ChargeFailure =
  | 'insufficient_funds'
  | 'authorization_gone'
  | 'account_frozen'
  | 'merchant_account_missing'
  | 'merchant_account_frozen'
  | 'mint_paused'
  | 'transfer_hook_failed'
  | 'transient';

/**
 * The failures that are the mint issuer's doing: a charge waits for them, nobody is PastDue. A
 * frozen receiving account of the merchant is one (the issuer froze it): the customer can do
 * nothing about it.
 */
export const ISSUER_SIDE_FAILURES: readonly ChargeFailure[] = [
  'mint_paused',
  'transfer_hook_failed',
  'merchant_account_frozen',
];

/**
 * The merchant's receiving token account of the mint does not exist: a payment to it would make
 * the payer pay its rent (a 409: the merchant creates it, with any registration it signs).
 */
export class MerchantAccountMissingError extends DomainError {
  constructor(mint: MintSymbol) {
    super(
      ErrorCode.CONFLICT,
      `The merchant cannot receive ${mint} yet: its receiving token account does not exist. ` +
        `The merchant creates it by signing the invoice's or a plan's registration transaction.`,
    );
  }
}

export class ChargeFailedError extends Error {
  constructor(
    readonly reason: ChargeFailure,
    message: string,
    /** Set when a transaction was sent and failed on-chain. */
    readonly signature?: string,
  ) {
    super(message);
    this.name = 'ChargeFailedError';
  }
}

/**
 * The on-chain plan does not exist or differs from the database's terms (program scheme): a
 * subscribe is refused (409: the plan's on-chain state conflicts with its record; registering
 * it, or a plan registered by someone else first, settles which).
 */
export class PlanTermsMismatchError extends DomainError {
  constructor(
    message: string,
    readonly kind: 'not_registered' | 'terms_differ',
    /** The plan (the service's id): a move names several. */
    readonly planId: string,
  ) {
    super(ErrorCode.CONFLICT, message);
  }
}

/**
 * The wallet's subscription account of the plan is still on-chain and cannot be replaced yet
 * (program scheme): running there without the service knowing of it, or cancelled and running to
 * its expiry. A 409 naming which.
 */
export class SubscribedOnChainError extends DomainError {
  constructor(
    message: string,
    /** The plan (the service's id) whose subscription it is; absent: all of a move's. */
    readonly planId?: string,
  ) {
    super(ErrorCode.CONFLICT, message);
  }
}

/**
 * A transfer of the mint cannot go through: its transfer hook program is not deployed, or an
 * account of it is frozen. A 409 naming the cause.
 */
export class TransferRefusedError extends DomainError {
  constructor(message: string) {
    super(ErrorCode.CONFLICT, message);
  }
}

/**
 * What a customer would sign does not fit in one transaction (1,232 bytes): a move carrying the
 * most subscriptions with old subscription accounts to close besides. A 409 saying what to do.
 */
export class TransactionTooLargeError extends DomainError {
  constructor(message: string) {
    super(ErrorCode.CONFLICT, message);
  }
}
