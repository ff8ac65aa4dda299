import { AccountInfo, Commitment, Connection, PublicKey } from '@solana/web3.js';
import { ChargeFailure, ChargeInput, reservedOf } from './chain.port';
import { computeExhausted } from './compute-budget';
import { issuerRefusal, readIssuerSide } from './issuer-side';
import { ataOf, MintResolver } from './mint-resolver';
import type { SubscriptionScheme } from './schemes/subscription-scheme';
import { doomedCharge, tokenAccountState } from './token-account-state';
import { TransferHooks } from './transfer-hook';

/** What the classification of a failed charge reads and who it asks. */
export interface ChargeFailureReads {
  connection: Connection;
  commitment: Commitment;
  mints: MintResolver;
  service: PublicKey;
  /** The charge's scheme (its subscription's). */
  scheme: SubscriptionScheme;
  /** Forgets the compute-unit limits learnt from simulations (a charge ran out of them). */
  forgetUnits(): void;
}

/**
 * Why a sent charge failed (`ChainPort.classifyChargeFailure`): the chain's error where it says
 * enough, else the accounts as read now, then the scheme's reading of the error.
 */
export async function classifyChargeFailure(
  reads: ChargeFailureReads,
  input: ChargeInput,
  error: string,
): Promise<ChargeFailure> {
  if (/BlockhashNotFound|Blockhash not found/i.test(error)) return 'transient';
  // Its limit, from what its shape consumed, was too small after all: simulate anew.
  if (computeExhausted(error)) {
    reads.forgetUnits();
    return 'transient';
  }
  const resolved = await reads.mints.mint(input.mint);
  const program = new PublicKey(resolved.tokenProgram);
  const source = ataOf(resolved, input.subscriber);
  const destination = ataOf(resolved, input.merchantWallet);
  const read = (keys: (PublicKey | string)[]): Promise<(AccountInfo<Buffer> | null)[]> =>
    reads.connection.getMultipleAccountsInfo(
      keys.map((k) => new PublicKey(k)),
      reads.commitment,
    );
  const [[sourceInfo, destinationInfo], { mint, infos: issuerInfos }] = await Promise.all([
    read([source, destination]),
    readIssuerSide(resolved, read, (changed) => reads.mints.update(changed)),
  ]);
  const issuer = issuerRefusal(mint, issuerInfos);
  if (issuer) return issuer.reason;
  const sourceState = tokenAccountState(source, sourceInfo, program, reads.service);
  const doomed = doomedCharge(
    sourceState,
    tokenAccountState(destination, destinationInfo, program, reads.service),
    input.amount,
    reads.scheme.approval !== null,
    await reservedOf(input, sourceState.delegatedAmount - input.amount),
  );
  if (doomed) return doomed.reason;
  const reason = await reads.scheme.classifyProgramError(input, error);
  // What neither the accounts nor the scheme explain, on a mint whose hook program runs on
  // every transfer, is the hook's refusal: the issuer's side, never the customer's.
  if (reason === 'transient' && TransferHooks.programOf(mint)) return 'transfer_hook_failed';
  return reason;
}
