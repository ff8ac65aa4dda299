import {
  createApproveCheckedInstruction,
  createRevokeInstruction,
  createTransferCheckedInstruction,
  TokenInstruction,
} from '@solana/spl-token';
import { PublicKey, TransactionInstruction } from '@solana/web3.js';
import {
  AuthorizationLeft,
  ChainInstruction,
  ChainTransaction,
  ChargeFailedError,
  reservedOf,
  ChargeFailure,
  ChargeInput,
  PlanRegistrationInput,
  ResolvedMint,
  RevokeInput,
  SharedApproval,
  SubscribeInput,
} from '../chain.port';
import { ataOf, publicKeyOf } from '../mint-resolver';
import { hookRefusal } from '../transfer-hook';
import { doomedCharge, tokenAccountState } from '../token-account-state';
import { memo, withReference } from '../transactions';
import {
  ChargeAccounts,
  SchemeContext,
  SchemeSubscribe,
  SubscriptionScheme,
} from './subscription-scheme';

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
  /** One approval per token account, shared by the wallet's subscriptions in the mint. */
  readonly approval: SharedApproval;
  /** The price arrives whole: each pull adds the mint's transfer fee. */
  readonly pullsTransferFee = true;

  constructor(private readonly ctx: SchemeContext) {
    const periods = ctx.approvalPeriods;
    this.approval = { periods, share: (pull) => pull * BigInt(periods) };
  }

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

  /** One step: the approval is the authorisation. */
  subscribe(input: SubscribeInput, mint: ResolvedMint): Promise<SchemeSubscribe> {
    const subscriber = new PublicKey(input.subscriber);
    const share = this.approval.share(input.amount);
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
    return Promise.resolve({
      step: 'subscribe',
      instructions: [memo(subscribeMemo(input.planId)), approve],
    });
  }

  /**
   * The bare approval of the service key for `amount` on the subscriber's token account (no
   * memo: it is no plan's subscribe or revoke): what a move's first step gives back to the
   * subscriptions not moved yet.
   */
  approveService(subscriber: string, mint: ResolvedMint, amount: bigint): TransactionInstruction {
    const owner = new PublicKey(subscriber);
    return createApproveCheckedInstruction(
      ataOf(mint, owner),
      new PublicKey(mint.address),
      this.ctx.signer.publicKey,
      owner,
      amount,
      mint.decimals,
      [],
      new PublicKey(mint.tokenProgram),
    );
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
    return Promise.resolve([memo(revokeMemo(input.planId)), instruction]);
  }

  /**
   * A subscribe (or re-authorisation) of the plan: its memo, and an approval of the service key
   * on the token account of the plan's mint of the wallet that signs it as the account's owner.
   * That owner is the subscriber (not the fee payer: anyone may pay the fee).
   */
  authorizationSigner(
    tx: ChainTransaction,
    plan: { planId: string },
    mint: ResolvedMint,
  ): Promise<string | null> {
    if (!tx.memos.includes(subscribeMemo(plan.planId))) return Promise.resolve(null);
    const service = this.ctx.signer.publicKey.toBase58();
    for (const ix of tx.instructions) {
      const approval = approvalOf(ix, mint);
      if (approval?.delegate === service) return Promise.resolve(approval.owner);
    }
    return Promise.resolve(null);
  }

  /**
   * The subscriber's revoke of the plan (what `revoke` builds): its memo, and a revoke of their
   * token account's delegate, or an approval of what their other subscriptions still need,
   * signed by them as the account's owner.
   */
  isRevocationBy(
    tx: ChainTransaction,
    plan: { planId: string; subscriber: string },
    mint: ResolvedMint,
  ): Promise<boolean> {
    if (!tx.memos.includes(revokeMemo(plan.planId))) return Promise.resolve(false);
    const account = ataOf(mint, plan.subscriber).toBase58();
    const service = this.ctx.signer.publicKey.toBase58();
    return Promise.resolve(
      tx.instructions.some((ix) => {
        if (ix.programId !== mint.tokenProgram) return false;
        if (ix.data[0] === Number(TokenInstruction.Revoke)) {
          const [source, owner] = ix.accounts;
          return source?.address === account && owner?.address === plan.subscriber && owner.signer;
        }
        const approval = approvalOf(ix, mint);
        return approval?.owner === plan.subscriber && approval.delegate === service;
      }),
    );
  }

  async charge(
    input: ChargeInput,
    mint: ResolvedMint,
    accounts: ChargeAccounts,
  ): Promise<TransactionInstruction[]> {
    const program = publicKeyOf(mint.tokenProgram);
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
    const reserved = await reservedOf(input, source.delegatedAmount - input.amount);
    const doomed = doomedCharge(source, destination, input.amount, true, reserved);
    if (doomed) throw new ChargeFailedError(doomed.reason, doomed.message);
    const transfer = createTransferCheckedInstruction(
      publicKeyOf(accounts.source.address),
      publicKeyOf(mint.address),
      publicKeyOf(accounts.destination.address),
      service,
      input.amount,
      mint.decimals,
      [],
      program,
    );
    // A mint with a transfer hook program: the accounts its hook needs, as spl-token resolves them.
    transfer.keys.push(
      ...(await this.ctx.hooks
        .extraAccounts(mint, {
          source: transfer.keys[0].pubkey,
          destination: transfer.keys[2].pubkey,
          authority: service,
          amount: input.amount,
        })
        .catch(hookRefusal)),
    );
    return [transfer];
  }

  /** The approval of the service key on the subscriber's token account (0 without one). */
  async authorizationLeft(
    _plan: unknown,
    subscriber: string,
    mint: ResolvedMint,
  ): Promise<AuthorizationLeft> {
    const address = ataOf(mint, subscriber);
    const info = await this.ctx.connection.getAccountInfo(address, this.ctx.commitment);
    const state = tokenAccountState(
      address,
      info,
      new PublicKey(mint.tokenProgram),
      this.ctx.signer.publicKey,
    );
    return {
      address: state.tokenAccount,
      approved: state.delegatedToService ? state.delegatedAmount : 0n,
    };
  }

  /** The revoke itself reset the approval to what the wallet's other subscriptions need. */
  authorizationWithdrawn(): Promise<boolean> {
    return Promise.resolve(true);
  }

  /** The account states explain every refusal of a plain transfer; anything else may pass. */
  classifyProgramError(): Promise<ChargeFailure> {
    return Promise.resolve('transient');
  }
}

/** The memo that names the plan a subscribe (or re-authorisation) is for. */
const subscribeMemo = (planId: string) => `subscribe:v1:${planId}`;
/** The memo that names the plan a revoke withdraws. */
const revokeMemo = (planId: string) => `revoke:v1:${planId}`;

/**
 * An SPL `approve` or `approveChecked` (of the mint's token program) on the owner's own
 * associated token account of the mint, signed by that owner: its delegate and owner.
 */
function approvalOf(
  ix: ChainInstruction,
  mint: ResolvedMint,
): { delegate: string; owner: string } | null {
  if (ix.programId !== mint.tokenProgram) return null;
  let source, delegate, owner;
  if (ix.data[0] === Number(TokenInstruction.Approve)) [source, delegate, owner] = ix.accounts;
  else if (ix.data[0] === Number(TokenInstruction.ApproveChecked)) {
    let mintAccount;
    [source, mintAccount, delegate, owner] = ix.accounts;
    if (mintAccount?.address !== mint.address) return null;
  } else return null;
  if (!source || !delegate || !owner?.signer) return null;
  if (source.address !== ataOf(mint, owner.address).toBase58()) return null;
  return { delegate: delegate.address, owner: owner.address };
}
