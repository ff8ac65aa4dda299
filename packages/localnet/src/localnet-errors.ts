import { TransactionErrorJson, transactionErrorMessage } from './transaction-errors';

/** A request the chain cannot serve as asked (an unknown mint, nothing to fund). */
export class LocalnetInputError extends Error {
  override readonly name = 'LocalnetInputError';
}

/**
 * A transaction refused without being recorded, as a validator's preflight refuses it: a failed
 * simulation, an unknown or expired blockhash, a duplicate, or a failure before execution.
 */
export class PreflightError extends Error {
  override readonly name = 'PreflightError';

  constructor(
    readonly err: TransactionErrorJson,
    readonly logs: string[] = [],
    readonly unitsConsumed = 0,
  ) {
    super(transactionErrorMessage(err));
  }
}
