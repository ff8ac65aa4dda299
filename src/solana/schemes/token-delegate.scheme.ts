import {
  createApproveCheckedInstruction,
  createRevokeInstruction,
  createTransferCheckedInstruction,
} from '@solana/spl-token';
import { PublicKey, TransactionInstruction } from '@solana/web3.js';
import {
  ChargeFailedError,
  reservedOf,
  ChargeFailure,
  ChargeInput,
  PlanRegistrationInput,
  ResolvedMint,
  RevokeInput,
  SubscribeInput,
} from '../chain.port';
import { ataOf } from '../mint-resolver';
import { doomedCharge, tokenAccountState } from '../token-account-state';
import { memo, withReference } from '../transactions';
import { ChargeAccounts, SchemeContext, SubscriptionScheme } from './subscription-scheme';

/**
 * Localnet's scheme (the Subscriptions program cannot run there): the subscriber `approve`s the
 * service key on their token account, and a charge is a delegate-signed `transferChecked`.
 *
 * A token account has one delegate and one allowance, and a new `approve` replaces the old one.
 * So the approval a subscribe transaction writes is the SUM the service needs for all of the
 * subscriber's live subscriptions in that mint (the caller passes the others' remaining shares),
 * and a revoke re-approves what the other subscriptions still need (or revokes when none do).
 */
export class TokenDelegateScheme implements SubscriptionScheme {
  readonly name = 'token-delegate' as const;

  constructor(private readonly ctx: SchemeContext) {}

  planAddress(): Promise<string | null> {
    return Promise.resolve(null); // the registration is a memo; no plan account exists
  }

  subscriptionAddress(input: { subscriber: string; mint: ResolvedMint }): Promise<string> {
    return Promise.resolve(ataOf(input.mint, input.subscriber).toBase58());
  }

  planRegistration(
    input: PlanRegistrationInput,
    mint: ResolvedMint,
  ): Promise<TransactionInstruction[]> {
    const merchant = new PublicKey(input.merchantWallet);
    const text = [
      'plan:v1',
      input.planId,
      mint.address,
      input.amount.toString(),
      input.periodHours,
      this.ctx.signer.publicKey.toBase58(),
    ].join(':');
    return Promise.resolve([memo(text, [merchant])]);
  }

  subscribe(input: SubscribeInput, mint: ResolvedMint): Promise<TransactionInstruction[]> {
    const subscriber = new PublicKey(input.subscriber);
    const share = input.amount * BigInt(this.ctx.approvalPeriods);
    const others = input.otherSubscriptionsAllowance ?? 0n;
    if (others < 0n) throw new RangeError('otherSubscriptionsAllowance must not be negative');
    const approve = createApproveCheckedInstruction(
      ataOf(mint, subscriber),
      new PublicKey(mint.address),
      this.ctx.signer.publicKey,
      subscriber,
      share + others,
      mint.decimals,
      [],
      new PublicKey(mint.tokenProgram),
    );
    // Extra accounts after the owner are ignored by the token program unless the owner is a
    // multisig, so the reference can ride on the approve as it does on a Solana Pay transfer.
    withReference(approve, input.reference);
    return Promise.resolve([memo(`subscribe:v1:${input.planId}`), approve]);
  }

  revoke(input: RevokeInput, mint: ResolvedMint): Promise<TransactionInstruction[]> {
    const subscriber = new PublicKey(input.subscriber);
    const account = ataOf(mint, subscriber);
    const program = new PublicKey(mint.tokenProgram);
    const remaining = input.remainingAllowance ?? 0n;
    if (remaining < 0n) throw new RangeError('remainingAllowance must not be negative');
    const instruction =
      remaining === 0n
        ? createRevokeInstruction(account, subscriber, [], program)
        : createApproveCheckedInstruction(
            account,
            new PublicKey(mint.address),
            this.ctx.signer.publicKey,
            subscriber,
            remaining,
            mint.decimals,
            [],
            program,
          );
    return Promise.resolve([memo(`revoke:v1:${input.planId}`), instruction]);
  }

  async charge(
    input: ChargeInput,
    mint: ResolvedMint,
    accounts: ChargeAccounts,
  ): Promise<TransactionInstruction[]> {
    const program = new PublicKey(mint.tokenProgram);
    const service = this.ctx.signer.publicKey;
    const source = tokenAccountState(
      accounts.source.address,
      accounts.source.info,
      program,
      service,
    );
    const destination = tokenAccountState(
      accounts.destination.address,
      accounts.destination.info,
      program,
      service,
    );
    const doomed = doomedCharge(source, destination, input.amount, true, await reservedOf(input));
    if (doomed) throw new ChargeFailedError(doomed.reason, doomed.message);
    return [
      createTransferCheckedInstruction(
        new PublicKey(accounts.source.address),
        new PublicKey(mint.address),
        new PublicKey(accounts.destination.address),
        service,
        input.amount,
        mint.decimals,
        [],
        program,
      ),
    ];
  }

  /** The account states explain every refusal of a plain transfer; anything else may pass. */
  classifyProgramError(): Promise<ChargeFailure> {
    return Promise.resolve('transient');
  }
}
