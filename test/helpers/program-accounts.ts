import { address } from '@solana/kit';
import {
  createApproveCheckedInstruction,
  getAssociatedTokenAddressSync,
  TOKEN_2022_PROGRAM_ID,
} from '@solana/spl-token';
import { PublicKey, TransactionInstruction } from '@solana/web3.js';
import type { LocalnetChain } from '@stablecoin-billing/localnet';
import {
  AccountDiscriminator,
  getPlanEncoder,
  getSubscriptionAuthorityEncoder,
  getSubscriptionDelegationEncoder,
  PlanStatus,
  SUBSCRIPTIONS_PROGRAM_ADDRESS,
} from '../../src/solana/subscriptions-client/generated';
import {
  MAX_PLAN_DESTINATIONS,
  MAX_PLAN_PULLERS,
  onchainPlanId,
  padAddresses,
  planPda,
  subscriptionAuthorityPda,
  subscriptionPda,
} from '../../src/solana/subscriptions-program';

export interface PlanTerms {
  amount: bigint;
  periodHours: bigint;
  createdAt: bigint;
}

/**
 * The Subscriptions program's accounts as v0.4.0 leaves them, written onto localnet (which cannot
 * run the program) in their exact layouts, encoded by the client generated from the program's IDL
 * (docs/localnet.md, "The Subscriptions program on localnet"). Each writer returns the address.
 */
export class ProgramAccounts {
  constructor(private readonly chain: LocalnetChain) {}

  private write(at: string, data: Uint8Array) {
    this.chain.setAccount(at, {
      lamports: 3_000_000n,
      owner: SUBSCRIPTIONS_PROGRAM_ADDRESS,
      data: new Uint8Array(data),
    });
  }

  /** What `create_plan` leaves, or an `update_plan` after it (status, end, pullers). */
  async plan(p: {
    merchant: string;
    planId: string;
    mint: string;
    terms: PlanTerms;
    pullers: string[];
    destinations?: string[];
    endTs?: bigint;
    status?: 'Active' | 'Sunset';
  }): Promise<string> {
    const at = await planPda(p.merchant, onchainPlanId(p.planId));
    this.write(
      at,
      new Uint8Array(
        getPlanEncoder().encode({
          discriminator: AccountDiscriminator.Plan,
          owner: address(p.merchant),
          bump: 255,
          status: p.status === 'Sunset' ? PlanStatus.Sunset : PlanStatus.Active,
          data: {
            planId: onchainPlanId(p.planId),
            mint: address(p.mint),
            terms: p.terms,
            endTs: p.endTs ?? 0n,
            destinations: padAddresses(p.destinations ?? [p.merchant], MAX_PLAN_DESTINATIONS),
            pullers: padAddresses(p.pullers, MAX_PLAN_PULLERS),
            metadataUri: '',
          },
        }),
      ),
    );
    return at;
  }

  /**
   * What `initialize_subscription_authority` leaves: its `init_id` is the slot it landed in (a
   * re-initialisation after a close stamps a new one).
   */
  async authority(subscriber: string, mint: string, initId: bigint): Promise<string> {
    const at = await subscriptionAuthorityPda(subscriber, mint);
    this.write(
      at,
      new Uint8Array(
        getSubscriptionAuthorityEncoder().encode({
          discriminator: AccountDiscriminator.SubscriptionAuthority,
          user: address(subscriber),
          tokenMint: address(mint),
          payer: address(subscriber),
          bump: 254,
          initId,
        }),
      ),
    );
    return at;
  }

  /** What `subscribe` leaves (bound to the authority's `init_id`), or a cancel (expiry set). */
  async subscription(p: {
    merchant: string;
    planId: string;
    subscriber: string;
    terms: PlanTerms;
    initId: bigint;
    expiresAtTs?: bigint;
    amountPulledInPeriod?: bigint;
    currentPeriodStartTs?: bigint;
  }): Promise<string> {
    const plan = await planPda(p.merchant, onchainPlanId(p.planId));
    const at = await subscriptionPda(plan, p.subscriber);
    this.write(
      at,
      new Uint8Array(
        getSubscriptionDelegationEncoder().encode({
          header: {
            discriminator: AccountDiscriminator.SubscriptionDelegation,
            version: 1,
            bump: 253,
            delegator: address(p.subscriber),
            delegatee: address(plan),
            payer: address(p.subscriber),
            initId: p.initId,
          },
          terms: p.terms,
          amountPulledInPeriod: p.amountPulledInPeriod ?? 0n,
          currentPeriodStartTs: p.currentPeriodStartTs ?? 1_790_100_000n,
          expiresAtTs: p.expiresAtTs ?? 0n,
        }),
      ),
    );
    return at;
  }

  /** A closed account (rent returned): no longer the program's, no data. */
  close(at: string): void {
    this.chain.setAccount(at, {
      lamports: 0n,
      owner: '11111111111111111111111111111111',
      data: new Uint8Array(),
    });
  }
}

/**
 * What `initialize_subscription_authority` does to the subscriber's token account besides the
 * authority: approves the authority PDA as its delegate for everything (u64::MAX). Localnet
 * cannot run the program, so a test sends this approval itself, signed by the subscriber.
 */
export async function approveAuthority(
  subscriber: PublicKey,
  mint: string,
  tokenProgram = TOKEN_2022_PROGRAM_ID,
): Promise<TransactionInstruction> {
  const ata = getAssociatedTokenAddressSync(new PublicKey(mint), subscriber, true, tokenProgram);
  return createApproveCheckedInstruction(
    ata,
    new PublicKey(mint),
    new PublicKey(await subscriptionAuthorityPda(subscriber.toBase58(), mint)),
    subscriber,
    0xffff_ffff_ffff_ffffn,
    6,
    [],
    tokenProgram,
  );
}
