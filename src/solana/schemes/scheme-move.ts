import { PublicKey } from '@solana/web3.js';
import {
  type MoveInput,
  type ResolvedMint,
  type SubscribeTx,
  TransactionTooLargeError,
} from '../chain.port';
import type { UnsignedTxBuilder } from '../transactions';
import type { ProgramScheme } from './program.scheme';
import type { SchemeSubscribe } from './subscription-scheme';
import type { TokenDelegateScheme } from './token-delegate.scheme';

/**
 * The instructions of a wallet's move from the token-delegate scheme to the Subscriptions
 * program (`ChainPort.buildMove`): the program's subscribe of every plan, in the program's two
 * steps. The first step (`initialize_subscription_authority`) approves the program's authority
 * as the token account's delegate, which replaces the service key's approval: so the same
 * transaction approves the service key again for what the subscriptions still need, and a
 * customer who stops after it is charged as before. The second step's subscribe gives the
 * delegate back to the authority (`programSubscribe` re-initialises it, keeping its `init_id`),
 * so once it lands the old approval is gone.
 */
export async function moveInstructions(
  schemes: { program: ProgramScheme; delegate: TokenDelegateScheme },
  input: MoveInput,
  mint: ResolvedMint,
): Promise<SchemeSubscribe> {
  if (input.plans.length === 0) throw new RangeError('a move needs a subscription to move');
  const built = await schemes.program.subscribeAll(
    input.plans.map((plan) => ({
      subscriber: input.subscriber,
      mint: mint.symbol,
      keepRunning: plan.reference === undefined,
      ...plan,
    })),
    mint,
  );
  if (built.step === 'subscribe' || input.keepApproved === 0n) return built;
  const keep = schemes.delegate.approveService(input.subscriber, mint, input.keepApproved);
  return { step: 'authority', instructions: [...built.instructions, keep] };
}

/**
 * The move's unsigned transaction for the wallet to sign (`moveInstructions`).
 * @throws TransactionTooLargeError when it does not fit in one transaction.
 */
export async function moveTransaction(
  schemes: { program: ProgramScheme; delegate: TokenDelegateScheme },
  unsigned: UnsignedTxBuilder,
  input: MoveInput,
  mint: ResolvedMint,
): Promise<SubscribeTx> {
  const { step, instructions } = await moveInstructions(schemes, input, mint);
  const tx = await unsigned
    .build(new PublicKey(input.subscriber), instructions)
    .catch((error: unknown) => {
      if (!(error instanceof TransactionTooLargeError)) throw error;
      throw new TransactionTooLargeError(
        `These ${input.plans.length} subscriptions do not fit in one transaction: cancel one, ` +
          'then move the others',
      );
    });
  return { ...tx, step };
}
