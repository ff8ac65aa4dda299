import type { Logger } from '@nestjs/common';
import { ServiceUnavailableError, ValidationError } from '../common/errors/domain-error';
import type { ChainPort, ChainTransaction } from '../solana/chain.port';

/** A refusal of a `signature` field, with its detail. */
export function invalidSignature(problem: string): ValidationError {
  return new ValidationError(`signature ${problem}`, [{ field: 'signature', message: problem }]);
}

/** The chain has not (yet) shown the transaction: a 400 to a caller, who may retry. */
export class NotConfirmedYetError extends ValidationError {
  constructor() {
    const problem = 'is not confirmed on-chain (yet); retry in a few seconds';
    super(`signature ${problem}`, [{ field: 'signature', message: problem }]);
  }
}

/**
 * A transaction a customer's wallet sent, as the chain confirmed it.
 * @throws ServiceUnavailableError (the RPC is down); ValidationError (not confirmed yet, or
 *   failed on-chain).
 */
export async function readConfirmed(
  chain: ChainPort,
  logger: Logger,
  signature: string,
): Promise<ChainTransaction> {
  const tx = await chain.readTransaction(signature).catch((error: unknown) => {
    logger.warn({ err: error }, 'Could not read a transaction');
    throw new ServiceUnavailableError('The chain is not reachable; retry shortly');
  });
  if (!tx) throw new NotConfirmedYetError();
  if (tx.error) throw invalidSignature('is a transaction that failed on-chain');
  return tx;
}
