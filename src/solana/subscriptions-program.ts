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
  identifySubscriptionsInstruction,
  parseCancelSubscriptionInstruction,
  parseRevokeDelegationInstruction,
  parseSubscribeInstruction,
  SubscriptionsInstruction,
  findPlanPda,
  findSubscriptionAuthorityPda,
  findSubscriptionDelegationPda,
  getCreatePlanOverlayInstructionAsync,
  getInitSubscriptionAuthorityOverlayInstructionAsync,
  getRevokeSubscriptionOverlayInstruction,
  getSubscribeOverlayInstructionAsync,
  getTransferSubscriptionOverlayInstructionAsync,
  SUBSCRIPTIONS_PROGRAM_ADDRESS,
} from '@solana/subscriptions';
import { AccountInfo, PublicKey, TransactionInstruction } from '@solana/web3.js';
import type { ChainInstruction } from './chain.port';

/**
 * The Solana Foundation Subscriptions program (devnet and mainnet-beta), through its official
 * client: every instruction and PDA here is what `@solana/subscriptions` builds, converted to
 * web3.js v1 types. Nothing is encoded by hand.
 */
export const SUBSCRIPTIONS_PROGRAM_ID = new PublicKey(SUBSCRIPTIONS_PROGRAM_ADDRESS);

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

/** `create_plan`, signed by the merchant: pullers = [service key], destinations = [merchant]. */
export async function createPlanInstruction(p: CreatePlanParams): Promise<TransactionInstruction> {
  return toWeb3Instruction(
    await getCreatePlanOverlayInstructionAsync({
      owner: createNoopSigner(address(p.merchant)),
      planId: p.planId,
      mint: address(p.mint),
      tokenProgram: address(p.tokenProgram),
      amount: p.amount,
      periodHours: p.periodHours,
      endTs: 0,
      destinations: [address(p.merchant)],
      pullers: [address(p.puller)],
      metadataUri: '',
    }),
  );
}

export interface SubscribeParams {
  subscriber: string;
  merchant: string;
  planId: bigint;
  mint: string;
  tokenProgram: string;
  subscriberAta: string;
  /** The live plan terms the subscriber consents to (read from the plan account). */
  terms: { amount: bigint; periodHours: bigint; createdAt: bigint };
  /** The subscriber's authority `init_id`; null when the authority does not exist yet. */
  authorityInitId: bigint | null;
}

/**
 * `initialize_subscription_authority` (only when the subscriber has none for this mint) and
 * `subscribe`, both signed by the subscriber. A fresh authority starts at `init_id` 0.
 */
export async function subscribeInstructions(p: SubscribeParams): Promise<TransactionInstruction[]> {
  const subscriber = createNoopSigner(address(p.subscriber));
  const instructions: TransactionInstruction[] = [];
  if (p.authorityInitId === null) {
    instructions.push(
      toWeb3Instruction(
        await getInitSubscriptionAuthorityOverlayInstructionAsync({
          owner: subscriber,
          tokenMint: address(p.mint),
          tokenProgram: address(p.tokenProgram),
          userAta: address(p.subscriberAta),
        }),
      ),
    );
  }
  instructions.push(
    toWeb3Instruction(
      await getSubscribeOverlayInstructionAsync({
        subscriber,
        merchant: address(p.merchant),
        planId: p.planId,
        tokenMint: address(p.mint),
        expectedAmount: p.terms.amount,
        expectedPeriodHours: p.terms.periodHours,
        expectedCreatedAt: p.terms.createdAt,
        expectedSubscriptionAuthorityInitId: p.authorityInitId ?? 0n,
      }),
    ),
  );
  return instructions;
}

export interface TransferSubscriptionParams {
  caller: string;
  subscriber: string;
  plan: string;
  subscription: string;
  receiverAta: string;
  mint: string;
  tokenProgram: string;
  amount: bigint;
}

/** `transfer_subscription`: the pull, signed by the service key (an allowed puller). */
export async function transferSubscriptionInstruction(
  p: TransferSubscriptionParams,
): Promise<TransactionInstruction> {
  return toWeb3Instruction(
    await getTransferSubscriptionOverlayInstructionAsync({
      caller: createNoopSigner(address(p.caller)),
      delegator: address(p.subscriber),
      planPda: address(p.plan),
      subscriptionPda: address(p.subscription),
      receiverAta: address(p.receiverAta),
      tokenMint: address(p.mint),
      tokenProgram: address(p.tokenProgram),
      amount: p.amount,
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

export interface RevokeSubscriptionParams {
  subscriber: string;
  plan: string;
  subscription: string;
}

/**
 * The subscriber's revoke of one subscription: closes its delegation PDA at once, so no puller
 * can pull again (the program's `cancel_subscription` would let the paid period run out instead).
 */
export function revokeSubscriptionInstruction(p: RevokeSubscriptionParams): TransactionInstruction {
  return toWeb3Instruction(
    getRevokeSubscriptionOverlayInstruction({
      authority: createNoopSigner(address(p.subscriber)),
      planPda: address(p.plan),
      subscriptionPda: address(p.subscription),
    }),
  );
}

/** A recorded instruction as kit's instruction, which the official parsers take. */
function asKitInstruction(ix: ChainInstruction) {
  return {
    programAddress: address(ix.programId),
    accounts: ix.accounts.map((a) => ({
      address: address(a.address),
      role: a.signer
        ? a.writable
          ? AccountRole.WRITABLE_SIGNER
          : AccountRole.READONLY_SIGNER
        : a.writable
          ? AccountRole.WRITABLE
          : AccountRole.READONLY,
    })),
    data: ix.data,
  };
}

/** The program's instructions of a transaction, identified by the official client. */
function programInstructions(instructions: ChainInstruction[]) {
  const found: { kind: SubscriptionsInstruction; ix: ReturnType<typeof asKitInstruction> }[] = [];
  for (const ix of instructions) {
    if (ix.programId !== SUBSCRIPTIONS_PROGRAM_ADDRESS) continue;
    try {
      found.push({ kind: identifySubscriptionsInstruction(ix.data), ix: asKitInstruction(ix) });
    } catch {
      // not an instruction of this program's interface
    }
  }
  return found;
}

const signs = (role: AccountRole) =>
  role === AccountRole.READONLY_SIGNER || role === AccountRole.WRITABLE_SIGNER;

/**
 * The subscriber of a signed `subscribe` of the plan (merchant, plan id) among the instructions,
 * parsed by the official client: the subscriber signs, and the merchant, the plan PDA and the
 * subscription PDA are this plan's and this subscriber's. Null when there is none.
 */
export async function subscribeSignerIn(
  instructions: ChainInstruction[],
  plan: { merchant: string; planId: bigint },
): Promise<string | null> {
  const planAddress = await planPda(plan.merchant, plan.planId);
  for (const { kind, ix } of programInstructions(instructions)) {
    if (kind !== SubscriptionsInstruction.Subscribe || ix.accounts.length < 4) continue;
    const { accounts } = parseSubscribeInstruction(ix);
    const subscriber = accounts.subscriber;
    if (!signs(subscriber.role)) continue;
    if (accounts.merchant.address !== plan.merchant || accounts.planPda.address !== planAddress) {
      continue;
    }
    if (
      accounts.subscriptionPda.address !== (await subscriptionPda(planAddress, subscriber.address))
    ) {
      continue;
    }
    return subscriber.address;
  }
  return null;
}

/**
 * Whether the instructions hold the subscriber's signed withdrawal of its subscription to the
 * plan: the revoke that closes the subscription PDA (what the portal builds), or the program's
 * `cancel_subscription` (the customer cancelled elsewhere).
 */
export async function revokedIn(
  instructions: ChainInstruction[],
  plan: { merchant: string; planId: bigint; subscriber: string },
): Promise<boolean> {
  const planAddress = await planPda(plan.merchant, plan.planId);
  const subscription = await subscriptionPda(planAddress, plan.subscriber);
  for (const { kind, ix } of programInstructions(instructions)) {
    if (kind === SubscriptionsInstruction.RevokeDelegation && ix.accounts.length >= 2) {
      const { accounts } = parseRevokeDelegationInstruction(ix);
      if (
        signs(accounts.authority.role) &&
        accounts.authority.address === plan.subscriber &&
        accounts.delegationAccount.address === subscription
      ) {
        return true;
      }
    }
    if (kind === SubscriptionsInstruction.CancelSubscription && ix.accounts.length >= 3) {
      const { accounts } = parseCancelSubscriptionInstruction(ix);
      if (
        signs(accounts.subscriber.role) &&
        accounts.subscriber.address === plan.subscriber &&
        accounts.planPda.address === planAddress &&
        accounts.subscriptionPda.address === subscription
      ) {
        return true;
      }
    }
  }
  return false;
}
