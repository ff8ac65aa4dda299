import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import {
  NotFoundError,
  ServiceUnavailableError,
  ValidationError,
} from '../common/errors/domain-error';
import { ChainPort, ChainTransaction } from '../solana/chain.port';
import type { MintSymbol } from '../solana/mints';
import { planSubscribeReference } from '../solana/references';
import { SubscriptionsService } from '../subscriptions/subscriptions.service';
import { ChargeRunService, ChargeRunResult } from './charge-run.service';
import { reservedAllowance } from './reserved-allowance';

/** A plan with what a subscribe needs of its merchant. */
export interface PlanTerms {
  id: string;
  merchant_id: string;
  label: string;
  mint: MintSymbol;
  amount: string;
  interval_seconds: number;
  active: boolean;
  merchant_wallet: string;
  merchant_name: string;
}

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
    private readonly em: EntityManager,
    private readonly chain: ChainPort,
    private readonly clock: Clock,
    private readonly subscriptions: SubscriptionsService,
    private readonly charges: ChargeRunService,
  ) {}

  /** @throws NotFoundError when there is no such plan. */
  async plan(planId: string): Promise<PlanTerms> {
    const [plan] = await this.em.fork().execute<PlanTerms[]>(
      `SELECT p.id, p.merchant_id, p.label, p.mint, p.amount::text AS amount, p.interval_seconds,
              p.active, m.wallet_address AS merchant_wallet, m.name AS merchant_name
         FROM plans p JOIN merchants m ON m.id = p.merchant_id WHERE p.id = ?`,
      [planId],
    );
    if (!plan) throw new NotFoundError('Plan');
    return plan;
  }

  /**
   * What the wallet's live subscriptions in `mint` (any merchant's) still need of a shared
   * approval, leaving out its live subscription to `exceptPlanId`.
   */
  reserved(wallet: string, mint: string, exceptPlanId?: string): Promise<bigint> {
    return reservedAllowance(this.em, wallet, mint, { exceptPlanId });
  }

  /** The reconciling watcher starts following a plan's subscribes (its checkout was opened). */
  async watch(plan: PlanTerms): Promise<void> {
    await this.em.fork().execute(
      `INSERT INTO chain_cursors (address, kind, merchant_id, plan_id, mint, cursor, updated_at)
       VALUES (?, 'plan_subscribes', ?, ?, ?, NULL, ?) ON CONFLICT (address) DO NOTHING`,
      [planSubscribeReference(plan.id), plan.merchant_id, plan.id, plan.mint, this.clock.now()],
    );
  }

  /**
   * Verifies the subscribe transaction `signature` on-chain and creates the subscription
   * `Active` (customer upserted, `subscription.created`), then charges its first period at once.
   * @throws NotFoundError (plan); ValidationError when the transaction is not (yet) a confirmed,
   *   successful subscribe of this plan whose authorisation covers it, or the plan is inactive.
   */
  async confirm(planId: string, signature: string): Promise<ConfirmedSubscription> {
    const plan = await this.plan(planId);
    const bySignature = await this.findBySignature(signature);
    if (bySignature) {
      if (bySignature.plan_id !== planId) {
        throw invalidSignature('belongs to a subscribe of another plan');
      }
      return { subscriptionId: bySignature.id, created: false, firstCharge: null };
    }
    const tx = await this.readConfirmed(signature);
    const subscriber = tx.feePayer;
    const { onchainAddress, authorizedAmount } = await this.verify(plan, tx, subscriber);

    let created = false;
    let subscriptionId: string;
    try {
      subscriptionId = await this.em.fork().transactional(async (em) => {
        const live = await this.liveSubscription(em, plan, subscriber);
        if (live) return live;
        const subscription = await this.subscriptions.create(em, plan.merchant_id, {
          planId,
          walletAddress: subscriber,
          onchainAddress,
          subscribeSignature: signature,
          authorizedAmount,
        });
        created = true;
        return subscription.id;
      });
    } catch (error) {
      if (!(error instanceof UniqueConstraintViolationException)) throw error;
      // A concurrent confirm of this signature, or of this plan and wallet, won.
      created = false;
      const winner =
        (await this.findBySignature(signature))?.id ??
        (await this.liveSubscription(this.em.fork(), plan, subscriber));
      if (!winner) throw error;
      subscriptionId = winner;
    }
    const firstCharge = created ? await this.charges.chargeNow(subscriptionId) : null;
    return { subscriptionId, created, firstCharge };
  }

  /**
   * A transaction a customer's wallet sent, as the chain confirmed it.
   * @throws ServiceUnavailableError (the RPC is down); ValidationError (not confirmed yet, or
   *   failed on-chain).
   */
  async readConfirmed(signature: string): Promise<ChainTransaction> {
    const tx = await this.chain.readTransaction(signature).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'Could not read a transaction');
      throw new ServiceUnavailableError('The chain is not reachable; retry shortly');
    });
    if (!tx) throw invalidSignature('is not confirmed on-chain (yet); retry in a few seconds');
    if (tx.error) throw invalidSignature('is a transaction that failed on-chain');
    return tx;
  }

  /**
   * The reconciling watcher: every subscribe carrying a watched plan's reference since its
   * cursor is confirmed as the page would have. One RPC call per watched plan when idle.
   * @returns the subscriptions it created.
   */
  async sweep(): Promise<number> {
    const cursors = await this.em
      .fork()
      .execute<{ address: string; plan_id: string; cursor: string | null }[]>(
        `SELECT address, plan_id, cursor FROM chain_cursors WHERE kind = 'plan_subscribes'`,
      );
    let created = 0;
    for (const cursor of cursors) {
      try {
        const scan = await this.chain.signaturesAfter(cursor.address, cursor.cursor);
        for (const signature of scan.signatures) {
          try {
            if ((await this.confirm(cursor.plan_id, signature)).created) created++;
          } catch (error) {
            // Not a valid subscribe of this plan (anyone can name the reference): skipped.
            this.logger.debug({ err: error, signature }, 'Skipped a transaction naming a plan');
          }
        }
        if (scan.cursor !== cursor.cursor) {
          await this.em.fork().execute(
            `UPDATE chain_cursors SET cursor = ?, updated_at = ?
              WHERE address = ? AND cursor IS NOT DISTINCT FROM ?`,
            [scan.cursor, this.clock.now(), cursor.address, cursor.cursor],
          );
        }
      } catch (error) {
        this.logger.warn({ err: error, planId: cursor.plan_id }, 'Subscribe scan failed');
      }
    }
    return created;
  }

  /**
   * The on-chain proof that `subscriber` authorised this plan. Token-delegate: the transaction
   * is this plan's subscribe, and the service key's approval on the subscriber's token account
   * now covers this plan's share on top of what their other live subscriptions in the mint
   * still need. Program scheme: the subscription account exists with the plan's terms.
   */
  private async verify(
    plan: PlanTerms,
    tx: ChainTransaction,
    subscriber: string,
  ): Promise<{ onchainAddress: string; authorizedAmount: bigint }> {
    const amount = BigInt(plan.amount);
    if (this.chain.scheme === 'program') {
      const state = await this.chain.readProgramSubscription(
        plan.merchant_wallet,
        plan.id,
        subscriber,
      );
      if (
        !state ||
        state.terms.amount !== amount ||
        state.terms.periodHours !== BigInt(plan.interval_seconds / 3600) ||
        state.expiresAtTs !== 0n
      ) {
        throw invalidSignature("did not create a subscription with this plan's terms");
      }
      return { onchainAddress: state.address, authorizedAmount: 0n };
    }
    if (!tx.memos.includes(`subscribe:v1:${plan.id}`)) {
      throw invalidSignature('is not a subscribe to this plan');
    }
    const authorization = await this.chain.readAuthorization(subscriber, plan.mint);
    const share = this.chain.subscriptionAllowance(amount);
    const needed = share + (await this.reserved(subscriber, plan.mint, plan.id));
    if (!authorization.delegatedToService || authorization.delegatedAmount < needed) {
      throw invalidSignature(
        'left an approval that does not cover this plan (a later approval replaced it?)',
      );
    }
    return { onchainAddress: authorization.tokenAccount, authorizedAmount: share };
  }

  private async findBySignature(signature: string) {
    const [row] = await this.em
      .fork()
      .execute<{ id: string; plan_id: string }[]>(
        `SELECT id, plan_id FROM subscriptions WHERE subscribe_signature = ?`,
        [signature],
      );
    return row ?? null;
  }

  private async liveSubscription(
    em: EntityManager,
    plan: PlanTerms,
    wallet: string,
  ): Promise<string | null> {
    const [row] = await em.execute<{ id: string }[]>(
      `SELECT s.id FROM subscriptions s JOIN customers c ON c.id = s.customer_id
        WHERE s.plan_id = ? AND c.merchant_id = ? AND c.wallet_address = ?
          AND s.status IN ('Active', 'PastDue')`,
      [plan.id, plan.merchant_id, wallet],
    );
    return row?.id ?? null;
  }
}

/** A refusal of a `signature` field, with its detail. */
export function invalidSignature(problem: string): ValidationError {
  return new ValidationError(`signature ${problem}`, [{ field: 'signature', message: problem }]);
}
