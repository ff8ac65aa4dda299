import {
  AccountRole,
  address,
  createNoopSigner,
  lamports,
  type EncodedAccount,
  type Instruction,
} from '@solana/kit';
import {
  decodePlan,
  decodeSubscriptionAuthority,
  decodeSubscriptionDelegation,
  findPlanPda,
  findSubscriptionAuthorityPda,
  findSubscriptionDelegationPda,
  getCancelSubscriptionInstructionAsync,
  getCreatePlanInstruction,
  getInitSubscriptionAuthorityInstructionAsync,
  getResumeSubscriptionInstructionAsync,
  getRevokeAbandonedSubscriptionInstruction,
  getRevokeDelegationInstruction,
  getRevokeSubscriptionAuthorityInstructionAsync,
  getSubscribeInstructionAsync,
  getTransferSubscriptionInstructionAsync,
  getUpdatePlanInstructionAsync,
  PlanStatus,
  SUBSCRIPTIONS_PROGRAM_ADDRESS,
} from './subscriptions-client/generated';
import { AccountInfo, AccountMeta, PublicKey, TransactionInstruction } from '@solana/web3.js';

/**
 * The Solana Foundation Subscriptions program v0.4.0 (devnet and mainnet-beta), through the client
 * Codama generates from the program's own interface description (`idl/subscriptions-v0.4.0.json`,
 * `subscriptions-client/generated/`): every instruction, PDA, account and event codec here is
 * what that client builds, converted to web3.js v1 types. Nothing is encoded by hand.
 */
export const SUBSCRIPTIONS_PROGRAM_ID = new PublicKey(SUBSCRIPTIONS_PROGRAM_ADDRESS);

/** The program's fixed-size plan arrays (pullers, destinations) and their padding. */
export const MAX_PLAN_PULLERS = 4;
export const MAX_PLAN_DESTINATIONS = 4;
export const ZERO_ADDRESS = '11111111111111111111111111111111';

/** `items` padded to the program's fixed array size with the zero address. */
export function padAddresses(items: readonly string[], size: number) {
  if (items.length > size) throw new RangeError(`At most ${size} addresses, got ${items.length}`);
  return [...items, ...Array.from({ length: size - items.length }, () => ZERO_ADDRESS)].map((a) =>
    address(a),
  );
}

/** A kit instruction as a web3.js v1 instruction: same program, accounts, roles and bytes. */
export function toWeb3Instruction(instruction: Instruction): TransactionInstruction {
  return new TransactionInstruction({
    programId: new PublicKey(instruction.programAddress),
    keys: (instruction.accounts ?? []).map((account) => ({
      pubkey: new PublicKey(account.address),
      isSigner:
        account.role === AccountRole.READONLY_SIGNER ||
        account.role === AccountRole.WRITABLE_SIGNER,
      isWritable:
        account.role === AccountRole.WRITABLE || account.role === AccountRole.WRITABLE_SIGNER,
    })),
    data: Buffer.from(instruction.data ?? new Uint8Array()),
  });
}

/** The on-chain plan id (a u64 seed of the plan PDA) of a plan: the first 8 bytes of its UUID. */
export function onchainPlanId(planUuid: string): bigint {
  const hex = planUuid.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new RangeError(`Not a UUID: ${planUuid}`);
  return BigInt(`0x${hex.slice(0, 16)}`);
}

export async function planPda(merchant: string, planId: bigint): Promise<string> {
  const [pda] = await findPlanPda({ owner: address(merchant), planId });
  return pda;
}

export async function subscriptionPda(plan: string, subscriber: string): Promise<string> {
  const [pda] = await findSubscriptionDelegationPda({
    planPda: address(plan),
    subscriber: address(subscriber),
  });
  return pda;
}

export async function subscriptionAuthorityPda(user: string, mint: string): Promise<string> {
  const [pda] = await findSubscriptionAuthorityPda({
    user: address(user),
    tokenMint: address(mint),
  });
  return pda;
}

export interface CreatePlanParams {
  merchant: string;
  planId: bigint;
  mint: string;
  tokenProgram: string;
  amount: bigint;
  periodHours: number;
  /** Who may pull: the service key. */
  puller: string;
}

/**
 * `create_plan`, signed by the merchant: pullers = [service key], destinations = [merchant], no
 * end, no metadata. The program stamps `terms.createdAt` itself (0 is sent). At v0.4.0 the
 * instruction has no sponsor payer (the merchant pays the plan's rent), so the service offers none.
 */
export async function createPlanInstruction(p: CreatePlanParams): Promise<TransactionInstruction> {
  const [plan] = await findPlanPda({ owner: address(p.merchant), planId: p.planId });
  return toWeb3Instruction(
    getCreatePlanInstruction({
      merchant: createNoopSigner(address(p.merchant)),
      planPda: plan,
      tokenMint: address(p.mint),
      tokenProgram: address(p.tokenProgram),
      planData: {
        planId: p.planId,
        mint: address(p.mint),
        terms: { amount: p.amount, periodHours: p.periodHours, createdAt: 0n },
        endTs: 0n,
        destinations: padAddresses([p.merchant], MAX_PLAN_DESTINATIONS),
        pullers: padAddresses([p.puller], MAX_PLAN_PULLERS),
        metadataUri: '',
      },
    }),
  );
}

export interface UpdatePlanParams {
  merchant: string;
  plan: string;
  /** Active, or Sunset (no new subscribers; needs an end). */
  status: 'Active' | 'Sunset';
  /** Unix seconds; 0 for none. A finite end may only be shortened (program error 520). */
  endTs: bigint;
  /** The whole new puller set (a key rotation adds the new service key, then drops the old). */
  pullers: string[];
}

/**
 * `update_plan`, signed by the merchant, with the event accounts v0.4.0 requires (the
 * `event_authority` PDA and the program itself, for the self-CPI `PlanUpdatedEvent`).
 */
export async function updatePlanInstruction(p: UpdatePlanParams): Promise<TransactionInstruction> {
  return toWeb3Instruction(
    await getUpdatePlanInstructionAsync({
      owner: createNoopSigner(address(p.merchant)),
      planPda: address(p.plan),
      updatePlanData: {
        status: p.status === 'Active' ? PlanStatus.Active : PlanStatus.Sunset,
        endTs: p.endTs,
        pullers: padAddresses(p.pullers, MAX_PLAN_PULLERS),
        metadataUri: '',
      },
    }),
  );
}

export interface AuthorityParams {
  subscriber: string;
  mint: string;
  tokenProgram: string;
  subscriberAta: string;
}

/**
 * `initialize_subscription_authority`, signed by the subscriber: the program's delegate on the
 * subscriber's token account for this mint. The program stamps the authority's `init_id` with the
 * slot the transaction lands in, and `subscribe` must name that exact `init_id` (error 136
 * otherwise), so a first subscription takes two transactions: this one, then the subscribe built
 * from the authority as it landed (docs/solana.md, "Subscribing under the program").
 */
export async function initAuthorityInstruction(
  p: AuthorityParams,
): Promise<TransactionInstruction> {
  return toWeb3Instruction(
    await getInitSubscriptionAuthorityInstructionAsync({
      owner: createNoopSigner(address(p.subscriber)),
      tokenMint: address(p.mint),
      tokenProgram: address(p.tokenProgram),
      userAta: address(p.subscriberAta),
    }),
  );
}

export interface SubscribeParams {
  subscriber: string;
  merchant: string;
  planId: bigint;
  mint: string;
  /** The live plan terms the subscriber consents to (read from the plan account). */
  terms: { amount: bigint; periodHours: bigint; createdAt: bigint };
  /** The `init_id` of the subscriber's authority for the mint, as read from the chain. */
  authorityInitId: bigint;
}

/** `subscribe`, signed by the subscriber, bound to the plan's live terms and its authority. */
export async function subscribeInstruction(p: SubscribeParams): Promise<TransactionInstruction> {
  const [plan, planBump] = await findPlanPda({ owner: address(p.merchant), planId: p.planId });
  return toWeb3Instruction(
    await getSubscribeInstructionAsync({
      subscriber: createNoopSigner(address(p.subscriber)),
      merchant: address(p.merchant),
      planPda: plan,
      subscriptionAuthorityPda: address(await subscriptionAuthorityPda(p.subscriber, p.mint)),
      subscribeData: {
        planId: p.planId,
        planBump,
        expectedMint: address(p.mint),
        expectedAmount: p.terms.amount,
        expectedPeriodHours: p.terms.periodHours,
        expectedCreatedAt: p.terms.createdAt,
        expectedSubscriptionAuthorityInitId: p.authorityInitId,
      },
    }),
  );
}

export interface TransferSubscriptionParams {
  caller: string;
  subscriber: string;
  subscriberAta: string;
  plan: string;
  subscription: string;
  receiverAta: string;
  mint: string;
  tokenProgram: string;
  amount: bigint;
  /** A hooked mint's extra accounts, forwarded as they are to Token-2022's `TransferChecked`. */
  hookAccounts?: readonly AccountMeta[];
}

/** `transfer_subscription`: the pull, signed by the service key (an allowed puller). */
export async function transferSubscriptionInstruction(
  p: TransferSubscriptionParams,
): Promise<TransactionInstruction> {
  const ix = toWeb3Instruction(
    await getTransferSubscriptionInstructionAsync({
      subscriptionPda: address(p.subscription),
      planPda: address(p.plan),
      subscriptionAuthority: address(await subscriptionAuthorityPda(p.subscriber, p.mint)),
      delegatorAta: address(p.subscriberAta),
      receiverAta: address(p.receiverAta),
      caller: createNoopSigner(address(p.caller)),
      tokenMint: address(p.mint),
      tokenProgram: address(p.tokenProgram),
      transferData: { amount: p.amount, delegator: address(p.subscriber), mint: address(p.mint) },
    }),
  );
  ix.keys.push(...(p.hookAccounts ?? []));
  return ix;
}

export interface SubscriberPlanParams {
  subscriber: string;
  plan: string;
  subscription: string;
}

/**
 * `cancel_subscription`, signed by the subscriber: the program sets the subscription's expiry to
 * the end of its current on-chain period, after which no puller can pull. This is the subscriber's
 * way out of a running subscription at v0.4.0: closing it (`revoke_delegation`) is refused until
 * it is cancelled and expired (error 510).
 */
export async function cancelSubscriptionInstruction(
  p: SubscriberPlanParams,
): Promise<TransactionInstruction> {
  return toWeb3Instruction(
    await getCancelSubscriptionInstructionAsync({
      subscriber: createNoopSigner(address(p.subscriber)),
      planPda: address(p.plan),
      subscriptionPda: address(p.subscription),
    }),
  );
}

/**
 * `resume_subscription`, signed by the subscriber, with the subscriber's authority for the plan's
 * mint that v0.4.0 requires (its owner, mint and `init_id` are checked: a re-initialised authority
 * cannot resume an old subscription).
 */
export async function resumeSubscriptionInstruction(
  p: SubscriberPlanParams & { mint: string },
): Promise<TransactionInstruction> {
  return toWeb3Instruction(
    await getResumeSubscriptionInstructionAsync({
      subscriber: createNoopSigner(address(p.subscriber)),
      planPda: address(p.plan),
      subscriptionPda: address(p.subscription),
      subscriptionAuthority: address(await subscriptionAuthorityPda(p.subscriber, p.mint)),
    }),
  );
}

/**
 * `revoke_subscription_authority`, signed by the subscriber: removes the program's delegate from
 * the subscriber's token account and closes the authority, which ends every subscription of that
 * wallet in that mint at once (their pulls fail on the missing authority).
 */
export async function revokeAuthorityInstruction(
  p: AuthorityParams,
): Promise<TransactionInstruction> {
  return toWeb3Instruction(
    await getRevokeSubscriptionAuthorityInstructionAsync({
      user: createNoopSigner(address(p.subscriber)),
      userAta: address(p.subscriberAta),
      tokenMint: address(p.mint),
      tokenProgram: address(p.tokenProgram),
    }),
  );
}

/** A web3.js account as kit's `EncodedAccount`, which the official decoders take. */
function encoded(at: string, info: AccountInfo<Buffer>): EncodedAccount {
  return {
    address: address(at),
    data: new Uint8Array(info.data),
    executable: info.executable,
    lamports: lamports(BigInt(info.lamports)),
    programAddress: address(info.owner.toBase58()),
    space: BigInt(info.data.length),
  };
}

export const decodePlanAccount = (at: string, info: AccountInfo<Buffer>) =>
  decodePlan(encoded(at, info)).data;
export const decodeSubscriptionAccount = (at: string, info: AccountInfo<Buffer>) =>
  decodeSubscriptionDelegation(encoded(at, info)).data;
export const decodeAuthorityAccount = (at: string, info: AccountInfo<Buffer>) =>
  decodeSubscriptionAuthority(encoded(at, info)).data;

/**
 * `revoke_delegation` of a subscription, signed by the subscriber: closes a cancelled
 * subscription once its expiry has passed (refused before: error 510), returning its rent. The
 * plan PDA follows as the instruction's remaining account, which the program binds to the
 * subscription. A wallet subscribing again to the same plan needs its old account gone.
 */
export function closeSubscriptionInstruction(p: SubscriberPlanParams): TransactionInstruction {
  const ix = toWeb3Instruction(
    getRevokeDelegationInstruction({
      authority: createNoopSigner(address(p.subscriber)),
      delegationAccount: address(p.subscription),
    }),
  );
  ix.keys.push({ pubkey: new PublicKey(p.plan), isSigner: false, isWritable: false });
  return ix;
}

/**
 * `revoke_abandoned_subscription`, signed by the subscription's recorded payer (the subscriber,
 * who paid its rent): closes a subscription whose authority was closed or re-initialised since
 * (it can never be pulled again), so the wallet can subscribe to the plan again.
 */
export async function closeAbandonedSubscriptionInstruction(
  p: SubscriberPlanParams & { mint: string },
): Promise<TransactionInstruction> {
  return toWeb3Instruction(
    getRevokeAbandonedSubscriptionInstruction({
      payer: createNoopSigner(address(p.subscriber)),
      subscriptionAccount: address(p.subscription),
      subscriptionAuthority: address(await subscriptionAuthorityPda(p.subscriber, p.mint)),
      planPda: address(p.plan),
    }),
  );
}
