import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { DomainError, NotFoundError, ServiceUnavailableError } from '../common/errors/domain-error';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import {
  AuthorizationLeft,
  ChainPort,
  ChainTransaction,
  SignatureEntry,
} from '../solana/chain.port';
import type { MintSymbol } from '../solana/mints';
import { planSubscribeReference } from '../solana/references';
import { SubscriptionsService } from '../subscriptions/subscriptions.service';
import { ChainCursors, WalkBudget } from './chain-cursors';
import { SchemeMovesService } from './scheme-moves.service';
import { invalidSignature, NotConfirmedYetError, readConfirmed } from './confirmed-transactions';
import { ChargeRunService, ChargeRunResult } from './charge-run.service';
import { PlanTerms, SubscribesRepository } from './repositories/subscribes.repository';
import { WalletReservationsRepository } from './repositories/wallet-reservations.repository';

export type { PlanTerms } from './repositories/subscribes.repository';

/** Plans whose subscribes are read at once. */
const SWEEP_LANES = 4;
/** What one sweep reads of one plan's subscribes at most; the rest waits for the next sweep. */
const SWEEP_BUDGET: WalkBudget = { pages: 5, ms: 3_000 };

/** What a confirm returns: the subscription as its subscriber may see it. */
export interface ConfirmedSubscription {
  subscriptionId: string;
  /** Whether this confirm created it (false: it existed, by signature or by plan and wallet). */
  created: boolean;
  firstCharge: ChargeRunResult | null;
}

/**
 * Subscriptions are born on-chain (DESIGN section 8): a customer signs the subscribe the
 * checkout built, and the service creates the subscription once it has verified on-chain that
 * the customer authorised this plan. Two ways in, one path: the checkout page confirms with the
 * signature (`confirm`), and the reconciling watcher (`sweep`) finds every subscribe to plans
 * whose checkout was opened (their reference key) even when the tab was closed after signing.
 * Idempotent per signature and per plan and wallet.
 */
@Injectable()
export class SubscribeService {
  private readonly logger = new Logger(SubscribeService.name);

  constructor(
    private readonly db: Db,
    private readonly reads: SubscribesRepository,
    private readonly reservations: WalletReservationsRepository,
    private readonly chain: ChainPort,
    private readonly clock: Clock,
    private readonly subscriptions: SubscriptionsService,
    private readonly charges: ChargeRunService,
    private readonly cursors: ChainCursors,
    private readonly moves: SchemeMovesService,
  ) {}

  /**
   * In the caller's transaction: takes the lock on the wallet's shared approval (held to its
   * end, as a subscribe's confirmation holds it), then returns what the wallet's other live
   * subscriptions of `mint` reserve of that approval (the portal's re-authorise checks the new
   * approval covers it and the subscription's own share).
   */
  async lockWalletReservations(
    tx: SqlTx,
    wallet: string,
    mint: string,
    exceptPlanId: string,
  ): Promise<bigint> {
    await this.reads.lockWallet(tx, wallet, mint);
    return this.reservations.reservedIn(tx, wallet, mint, { exceptPlanId });
  }

  /** @throws NotFoundError when there is no such plan. */
  async plan(planId: string): Promise<PlanTerms> {
    const plan = await this.reads.planTerms(planId);
    if (!plan) throw new NotFoundError('Plan');
    return plan;
  }

  /**
   * What the wallet's live subscriptions in `mint` (any merchant's) need of an approval signed
   * now, leaving out its live subscription to `exceptPlanId` (charges in flight included: see
   * `reservedAllowance`'s `forApproval`).
   */
  reserved(wallet: string, mint: string, exceptPlanId?: string): Promise<bigint> {
    return this.reservations.reserved(wallet, mint, { exceptPlanId, forApproval: true });
  }

  /**
   * The reconciling watcher starts following a plan's subscribes (its checkout was opened),
   * from `startSlot` (a slot before the checkout's transaction: nothing earlier can be one).
   */
  async watch(plan: PlanTerms, startSlot: number): Promise<void> {
    await this.cursors.add({
      address: planSubscribeReference(plan.id),
      kind: 'plan_subscribes',
      merchantId: plan.merchant_id,
      planId: plan.id,
      mint: plan.mint,
      startSlot,
    });
  }

  /**
   * Verifies the subscribe transaction `signature` on-chain and creates the subscription
   * `Active` (customer upserted, `subscription.created`), then charges its first period at once.
   *
   * A signature is used once, ever (`subscription_signatures`): the same subscribe confirmed
   * again answers with the subscription it created; a signature used for anything else (another
   * plan, a re-authorisation, a revoke) is refused; a valid subscribe of a plan the wallet is
   * already subscribed to is bound to that live subscription, so it can never create one later.
   * What the transaction did is read from its instructions: a subscribe (or approval) of this
   * plan signed by the subscriber, in a successful transaction, and what it left on-chain
   * still covers the plan. Confirms of one wallet in one mint are serialised (an advisory lock),
   * so two subscribes racing over one shared approval cannot both be taken as covered.
   * @throws NotFoundError (plan); ValidationError when the transaction is not (yet) a confirmed,
   *   successful subscribe of this plan whose authorisation covers it, or the plan is inactive.
   */
  async confirm(planId: string, signature: string): Promise<ConfirmedSubscription> {
    const plan = await this.plan(planId);
    const used = await this.subscriptions.signatureUse(this.db, signature);
    if (used) return this.usedBefore(used, planId);
    const signed = await this.readConfirmed(signature);
    const subscriber = await this.chain.authorizationSigner(signed, {
      merchantWallet: plan.merchant_wallet,
      planId: plan.id,
      mint: plan.mint,
    });
    if (!subscriber) {
      throw invalidSignature('is not a subscribe to this plan signed by its subscriber');
    }
    const onchain = await this.chain.authorizationLeft(
      {
        merchantWallet: plan.merchant_wallet,
        planId: plan.id,
        mint: plan.mint,
        amount: BigInt(plan.amount),
        periodHours: plan.interval_seconds / 3600,
      },
      subscriber,
    );
    if (!onchain) {
      throw invalidSignature("did not leave a subscription with this plan's terms on-chain");
    }
    // A move posted here: its subscribe of a plan the wallet holds under its approval.
    const moved = await this.moveOfLive(plan, subscriber, signed, signature);
    if (moved) return { subscriptionId: moved, created: false, firstCharge: null };
    // What each period pulls (under a shared approval the price plus the mint's transfer fee),
    // read now, before any database transaction opens.
    const pull = await this.chain.pullAmount(plan.mint, BigInt(plan.amount));

    let created = false;
    let subscriptionId: string;
    try {
      subscriptionId = await this.db.transaction(async (tx) => {
        await this.reads.lockWallet(tx, subscriber, plan.mint);
        const usedMeanwhile = await this.subscriptions.signatureUse(tx, signature);
        if (usedMeanwhile) return this.usedBefore(usedMeanwhile, planId).subscriptionId;
        const live = await this.reads.liveSubscription(tx, plan, subscriber);
        if (live) {
          await this.subscriptions.useSignature(tx, live, signature, 'subscribe');
          return live;
        }
        const authorizedAmount = await this.covers(tx, plan, subscriber, onchain, pull);
        const subscription = await this.subscriptions.create(tx, plan.merchant_id, {
          planId,
          walletAddress: subscriber,
          onchainAddress: onchain.address,
          subscribeSignature: signature,
          authorizedAmount,
          scheme: this.chain.scheme,
        });
        created = true;
        return subscription.id;
      });
    } catch (error) {
      if (!(error instanceof UniqueConstraintViolationException)) throw error;
      // A confirm that did not take the lock (another version of the service) won the race.
      const winner = await this.subscriptions.signatureUse(this.db, signature);
      if (!winner) throw error;
      created = false;
      subscriptionId = this.usedBefore(winner, planId).subscriptionId;
    }
    if (created) await this.carryAlong(subscriber, plan.mint, signed);
    const firstCharge = created ? await this.charges.chargeNow(subscriptionId) : null;
    return { subscriptionId, created, firstCharge };
  }

  /**
   * The wallet's live token-delegate subscription to the plan, moved by this transaction (a
   * portal move confirmed at the checkout: `SchemeMovesService.adopt`, the signature recorded as
   * the move); null when it holds none.
   */
  private async moveOfLive(
    plan: PlanTerms,
    subscriber: string,
    tx: ChainTransaction,
    signature: string,
  ): Promise<string | null> {
    if (!this.chain.moveTo) return null;
    const rows = await this.subscriptions.liveDelegatedOfWallet(subscriber, plan.mint);
    const live = rows.find((row) => row.plan_id === plan.id);
    if (!live) return null;
    // Another plan's checkout, which carried this subscription along: confirmed there only.
    if (await this.moves.subscribesOthers(subscriber, plan.mint, tx)) {
      throw invalidSignature('is a subscribe at the checkout of another plan: confirm it there');
    }
    const use = { id: live.id, signature };
    return (await this.moves.adopt(subscriber, plan.mint, { tx, use })).includes(live.id)
      ? live.id
      : null;
  }

  /**
   * A wallet's subscribe under the program gave its token account's delegate to the program's
   * authority, so it carried the wallet's token-delegate subscriptions in the mint along (the
   * checkout built it so: `SchemeMovesService.carried`): they move now. Should that wait (a
   * charge of theirs in flight, the RPC down), the charge run moves them when it finds their
   * approval gone.
   */
  private async carryAlong(subscriber: string, mint: MintSymbol, tx: ChainTransaction) {
    if (!this.chain.moveTo) return;
    await this.moves.adopt(subscriber, mint, { tx }).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'Could not move the subscriptions a subscribe carried');
    });
  }

  /** A signature the service accepted before: the same subscribe again, or a refusal. */
  private usedBefore(
    used: { subscriptionId: string; planId: string; use: string },
    planId: string,
  ): ConfirmedSubscription {
    if (used.use !== 'subscribe' || used.planId !== planId) {
      throw invalidSignature(
        used.use === 'subscribe'
          ? 'belongs to a subscribe of another plan'
          : 'was already used to change a subscription; a signature is used once',
      );
    }
    return { subscriptionId: used.subscriptionId, created: false, firstCharge: null };
  }

  /**
   * A transaction a customer's wallet sent, as the chain confirmed it.
   * @throws ServiceUnavailableError (the RPC is down); ValidationError (not confirmed yet, or
   *   failed on-chain).
   */
  readConfirmed(signature: string): Promise<ChainTransaction> {
    return readConfirmed(this.chain, this.logger, signature);
  }

  /**
   * The reconciling watcher: every subscribe carrying a watched plan's reference since its
   * cursor is confirmed as the page would have, a few plans at a time, each read in bounded
   * steps (`ChainCursors`); what it could not judge is parked and tried again by the next
   * sweeps. One RPC call per watched plan when idle.
   * @returns the subscriptions it created.
   */
  async sweep(): Promise<number> {
    let created = 0;
    await this.cursors.walkAll('plan_subscribes', SWEEP_LANES, async (cursor) => {
      try {
        await this.cursors.walk(
          cursor,
          async (entries) => {
            const settled = await this.confirmAll(cursor.plan_id!, entries);
            created += settled.created;
            return settled.unread;
          },
          SWEEP_BUDGET,
        );
      } catch (error) {
        this.logger.warn({ err: error, planId: cursor.plan_id }, 'Subscribe scan failed');
      }
    });
    return created;
  }

  /**
   * Confirms each transaction that names a plan's reference, oldest first. A transaction is
   * settled once it is confirmed or refused for what it is; one it could not judge (not served
   * by the RPC, the RPC or the database failing) is answered back as unread: the walk parks it
   * and goes on, and later sweeps judge it again. A real subscribe is never skipped for good,
   * and one that cannot be read never holds up the subscribes after it.
   */
  private async confirmAll(
    planId: string,
    entries: SignatureEntry[],
  ): Promise<{ created: number; unread: SignatureEntry[] }> {
    let created = 0;
    const unread: SignatureEntry[] = [];
    for (const entry of entries) {
      if (entry.failed) continue; // it authorised nothing
      try {
        if ((await this.confirm(planId, entry.signature)).created) created++;
      } catch (error) {
        if (!isRefusal(error)) {
          this.logger.warn(
            { err: error, planId, signature: entry.signature },
            'Could not judge a subscribe; it is parked and tried again by the next sweeps',
          );
          unread.push(entry);
          continue;
        }
        // Not a valid subscribe of this plan (anyone can name the reference): skipped.
        this.logger.debug({ err: error, signature: entry.signature }, 'Skipped a transaction');
      }
    }
    return { created, unread };
  }

  /**
   * Under a shared approval: it must cover this plan's share on top of what the wallet's other
   * live subscriptions in the mint still need, read under the wallet's lock (a subscribe sent
   * later replaces the approval of one sent earlier). @returns this subscription's share (0
   * where the chain keeps the subscription's terms).
   */
  private async covers(
    tx: SqlTx,
    plan: PlanTerms,
    subscriber: string,
    onchain: AuthorizationLeft,
    pull: bigint,
  ): Promise<bigint> {
    const approval = this.chain.approval;
    if (onchain.approved === null || !approval) return 0n;
    const share = approval.share(pull);
    const needed =
      share +
      (await this.reservations.reservedIn(tx, subscriber, plan.mint, { exceptPlanId: plan.id }));
    if (onchain.approved < needed) {
      throw invalidSignature(
        'left an approval that does not cover this plan (a later approval replaced it?)',
      );
    }
    return share;
  }
}

export { invalidSignature, NotConfirmedYetError } from './confirmed-transactions';

/** A refusal of the transaction itself (not a subscribe of the plan, not covered...), final. */
function isRefusal(error: unknown): boolean {
  return (
    error instanceof DomainError &&
    !(error instanceof ServiceUnavailableError) &&
    !(error instanceof NotConfirmedYetError)
  );
}
