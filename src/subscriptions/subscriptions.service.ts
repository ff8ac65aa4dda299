import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { pgQuery, type SqlTx } from '../database/pg-transaction';
import { randomUUID } from 'node:crypto';
import { Clock } from '../common/clock';
import { NotFoundError, ValidationError } from '../common/errors/domain-error';
import { CustomersService } from '../customers/customers.service';
import { forEachRowBatch } from '../database/row-batches';
import { EventsService } from '../events/events.service';
import { ListSubscriptionsQueryDto } from './dto/subscription.dto';
import { SUBSCRIPTION_LIST_SELECT, subscriptionListItemJson } from './subscription-list';
import { SubscriptionResponse } from './dto/subscription.response';
import type { SignatureUse } from './entities/subscription-signature.entity';
import {
  SUBSCRIPTION_TRANSITIONS,
  SubscriptionAction,
  SubscriptionStatus,
} from './subscription-status';
import {
  SUBSCRIPTION_SELECT,
  subscriptionSelect,
  SubscriptionRow,
  toSubscriptionResponse,
} from './subscription.mapper';

/** What the billing engine knows when a customer's subscribe transaction is confirmed. */
export interface NewSubscription {
  planId: string;
  /** The subscriber's wallet: the customer is created (or found) by it. */
  walletAddress: string;
  /** Where the authorisation lives on-chain (`ChainPort.subscriptionAddress`). */
  onchainAddress: string | null;
  /** The confirmed subscribe transaction (a signature creates at most one subscription). */
  subscribeSignature?: string | null;
  /** Token-delegate scheme: this subscription's share of the approval, in base units. */
  authorizedAmount?: bigint;
}

/** Extra values some moves set: the failure of a charge. */
export interface TransitionDetails {
  failureReason?: string;
}

/**
 * Subscriptions of a merchant. Created by the billing engine when a customer's authorisation is
 * confirmed; moved only by `transition` (the table in subscription-status.ts), which validates
 * under the row's lock, stamps, and records the event in the same transaction.
 *
 * Row locks (docs/subscriptions.md): every move is one `UPDATE … WHERE status IN (allowed)`, so
 * concurrent moves of one subscription serialize on its row and each sees the other's result.
 * The charge run takes the same row lock before it sends a charge, so a pause or cancel that
 * commits first stops the charge, and one that commits after finds it already sent.
 */
@Injectable()
export class SubscriptionsService {
  constructor(
    private readonly em: EntityManager,
    private readonly clock: Clock,
    private readonly customers: CustomersService,
    private readonly events: EventsService,
  ) {}

  /**
   * Creates a subscription `Active`, its first charge due at once (DESIGN section 8), in the
   * caller's transaction: the customer upserted by wallet, `subscription.created` recorded. The
   * plan is read under a share lock, so a plan deactivated concurrently either lets this one in
   * first or refuses it.
   * @throws NotFoundError for another merchant's or an unknown plan; ValidationError for an
   *   inactive plan; a unique violation (409) when the customer already has a live subscription
   *   to the plan.
   */
  async create(
    tx: SqlTx,
    merchantId: string,
    input: NewSubscription,
  ): Promise<SubscriptionResponse> {
    const em = tx;
    const [plan] = await em.execute<{ active: boolean }[]>(
      'SELECT active FROM plans WHERE id = ? AND merchant_id = ? FOR SHARE',
      [input.planId, merchantId],
    );
    if (!plan) throw new NotFoundError('Plan');
    if (!plan.active) {
      throw new ValidationError('Plan is not active: it accepts no new subscribers', [
        { field: 'planId', message: 'is not active' },
      ]);
    }
    const { customer } = await this.customers.upsertIn(em, merchantId, {
      walletAddress: input.walletAddress,
    });
    const id = randomUUID();
    const now = this.clock.now();
    await em.execute(
      `INSERT INTO subscriptions (id, merchant_id, plan_id, customer_id, status, current_period_end,
         onchain_address, authorized_amount, created_at, updated_at)
       VALUES (?, ?, ?, ?, 'Active', ?, ?, ?, ?, ?)`,
      [
        id,
        merchantId,
        input.planId,
        customer.id,
        now,
        input.onchainAddress,
        (input.authorizedAmount ?? 0n).toString(),
        now,
        now,
      ],
    );
    if (input.subscribeSignature) {
      await this.useSignature(em, id, input.subscribeSignature, 'subscribe', { mustBeNew: true });
    }
    const subscription = toSubscriptionResponse(await this.findRow(em, merchantId, id));
    await this.events.record(em, merchantId, 'subscription.created', subscription);
    return subscription;
  }

  /**
   * Newest first with plan and customer snapshots; `status` filters. Read through a cursor and
   * handed to `onBatch` as JSON a batch of rows at a time (`forEachRowBatch`): memory stays at
   * two batches.
   */
  async listJson(
    merchantId: string,
    query: ListSubscriptionsQueryDto,
    onBatch: (json: string) => Promise<boolean>,
  ): Promise<void> {
    const params: unknown[] = [merchantId];
    let where = 's.merchant_id = ?';
    if (query.status) {
      where += ' AND s.status = ?';
      params.push(query.status);
    }
    await forEachRowBatch(
      this.em,
      `${SUBSCRIPTION_LIST_SELECT} WHERE ${where} ORDER BY s.created_at DESC, s.id DESC`,
      params,
      (rows) => onBatch(rows.map(subscriptionListItemJson).join(',')),
    );
  }

  /** @throws NotFoundError when absent or another merchant's. */
  async get(merchantId: string, id: string): Promise<SubscriptionResponse> {
    return toSubscriptionResponse(await this.findRow(this.em, merchantId, id));
  }

  /** A customer's subscriptions, newest first (customer detail, D7). */
  async listForCustomer(merchantId: string, customerId: string): Promise<SubscriptionResponse[]> {
    const rows = await pgQuery<SubscriptionRow[]>(
      this.em,
      `${SUBSCRIPTION_SELECT} WHERE s.merchant_id = ? AND s.customer_id = ?
          ORDER BY s.created_at DESC, s.id DESC`,
      [merchantId, customerId],
    );
    return rows.map(toSubscriptionResponse);
  }

  /** The merchant's pause, resume and cancel: one transition each, in its own transaction. */
  act(merchantId: string, id: string, action: 'pause' | 'resume' | 'cancel') {
    return this.em.fork().transactional((em) => this.transition(em, merchantId, id, action));
  }

  /**
   * Applies an action of the transition table inside the caller's transaction. The UPDATE
   * checks the current status itself, under the row's lock, and stamps what the move changes:
   * `cancelledAt` (cancel), `pausedAt` (pause; cleared by resume), `failureReason` (a failed
   * charge; cleared by resume), and on resume the next charge: at the end of the period already
   * paid for, or at the next run when it has passed (paused periods are not billed back; the
   * charge re-anchors the period). Records the move's event with the previous status.
   * @throws NotFoundError; ValidationError (the move is not allowed from the current status).
   */
  async transition(
    em: SqlTx,
    merchantId: string,
    id: string,
    action: SubscriptionAction,
    details: TransitionDetails = {},
  ): Promise<SubscriptionResponse> {
    const move = SUBSCRIPTION_TRANSITIONS[action];
    const now = this.clock.now();
    const moved = await em.execute<{ previous: SubscriptionStatus }[]>(
      `WITH before AS (
         SELECT id, status FROM subscriptions WHERE id = ? AND merchant_id = ? FOR UPDATE
       )
       UPDATE subscriptions s SET status = ?, updated_at = ?,
         cancelled_at = CASE WHEN ? THEN ?::timestamptz ELSE s.cancelled_at END,
         paused_at = CASE WHEN ? THEN ?::timestamptz WHEN ? THEN NULL ELSE s.paused_at END,
         failure_reason = CASE WHEN ? THEN ? WHEN ? THEN NULL ELSE s.failure_reason END,
         current_period_end = CASE WHEN ? THEN GREATEST(s.current_period_end, ?::timestamptz)
                                   ELSE s.current_period_end END
        FROM before
       WHERE s.id = before.id AND before.status IN (${move.from.map(() => '?').join(', ')})
       RETURNING before.status AS previous`,
      [
        id,
        merchantId,
        move.to,
        now,
        action === 'cancel',
        now,
        action === 'pause',
        now,
        action === 'resume',
        // A failed charge says why; so does the end of a subscription the engine completes.
        action === 'chargeFailed' || (action === 'complete' && details.failureReason !== undefined),
        details.failureReason ?? null,
        action === 'resume',
        action === 'resume',
        now,
        ...move.from,
      ],
    );
    const row = await this.findRow(em, merchantId, id); // not found: 404
    if (moved.length === 0) {
      throw new ValidationError(`${move.refusal} (it is ${row.status})`, [
        { field: 'status', message: `is ${row.status}` },
      ]);
    }
    const subscription = toSubscriptionResponse(row);
    if (move.event) {
      await this.events.record(em, merchantId, move.event, subscription, {
        status: moved[0].previous,
      });
    }
    return subscription;
  }

  /**
   * A charge of the subscription succeeded (the billing engine, inside the transaction that
   * settles it; the row is locked, so a pause or cancel committing meanwhile is seen). The money
   * moved whatever the status now, so the charge is always counted (`chargedAmount`,
   * `periodsCharged`, `lastChargeAt`) and the period it paid for always moves on, whatever the
   * status (a charge that lands after a pause committed has still paid its period: a resume must
   * not charge it again). The first charge starts it at `chargedAt` (`currentPeriodEnd =
   * chargedAt + interval`; `subscription.activated` is recorded when it is Active); later ones
   * keep the anchor (`currentPeriodEnd + interval`) unless that is already past (a resume after a
   * long pause: re-anchored at `chargedAt`, nothing billed back).
   * @throws NotFoundError.
   */
  async recordCharge(
    em: SqlTx,
    merchantId: string,
    id: string,
    charge: { chargedAt: Date; amount: bigint; period: number },
  ): Promise<SubscriptionResponse> {
    // The change and the row it made in one round trip (the row with its plan and customer).
    const [updated] = await em.execute<
      (SubscriptionRow & { charge_first: boolean; status_before: SubscriptionStatus })[]
    >(
      `WITH before AS (
         SELECT s.id, s.status, s.last_charge_at IS NULL AS first, s.current_period_end,
                make_interval(secs => p.interval_seconds) AS period
           FROM subscriptions s JOIN plans p ON p.id = s.plan_id
          WHERE s.id = ? AND s.merchant_id = ? FOR UPDATE OF s
       )
       , updated AS (
       UPDATE subscriptions s SET last_charge_at = ?::timestamptz,
         charged_amount = s.charged_amount + ?::bigint,
         periods_charged = GREATEST(s.periods_charged, ?::int),
         current_period_end = CASE
           WHEN NOT before.first AND before.current_period_end + before.period > ?::timestamptz
             THEN before.current_period_end + before.period
           ELSE ?::timestamptz + before.period END,
         failure_reason = CASE WHEN before.status = 'Active' THEN NULL ELSE s.failure_reason END,
         updated_at = ?
        FROM before
       WHERE s.id = before.id
       RETURNING s.*, before.first AS charge_first, before.status AS status_before
       )
       ${subscriptionSelect('updated', 's.charge_first, s.status_before')}`,
      [
        id,
        merchantId,
        charge.chargedAt,
        charge.amount.toString(),
        charge.period,
        charge.chargedAt,
        charge.chargedAt,
        this.clock.now(),
      ],
    );
    if (!updated) throw new NotFoundError('Subscription');
    const subscription = toSubscriptionResponse(updated);
    if (updated.charge_first && updated.status_before === 'Active') {
      await this.events.record(em, merchantId, 'subscription.activated', subscription);
    }
    return subscription;
  }

  /**
   * What an accepted customer signature did, if the service ever accepted it: the subscription
   * it created or changed (any merchant's: a signature is used once, whatever for).
   */
  async signatureUse(
    db: SqlTx,
    signature: string,
  ): Promise<{ subscriptionId: string; planId: string; use: SignatureUse } | null> {
    const [row] = await db.execute<
      { subscription_id: string; plan_id: string; use: SignatureUse }[]
    >(
      `SELECT g.subscription_id, s.plan_id, g.use
         FROM subscription_signatures g JOIN subscriptions s ON s.id = g.subscription_id
        WHERE g.signature = ?`,
      [signature],
    );
    return row ? { subscriptionId: row.subscription_id, planId: row.plan_id, use: row.use } : null;
  }

  /**
   * Records that `signature` created or changed subscription `id` (in the caller's transaction).
   * A signature is used once, ever: @returns false when it was used before (for anything);
   * with `mustBeNew` that is a unique violation instead (the caller's transaction fails).
   */
  async useSignature(
    tx: SqlTx,
    id: string,
    signature: string,
    use: SignatureUse,
    options: { mustBeNew?: boolean } = {},
  ): Promise<boolean> {
    const rows = await tx.execute<{ signature: string }[]>(
      `INSERT INTO subscription_signatures (signature, subscription_id, use, created_at)
       VALUES (?, ?, ?, ?) ${options.mustBeNew ? '' : 'ON CONFLICT (signature) DO NOTHING'}
       RETURNING signature`,
      [signature, id, use, this.clock.now()],
    );
    return rows.length > 0;
  }

  /**
   * A re-authorisation the customer signed (token-delegate scheme): the subscription's share
   * of the approval starts again from what it has been charged. Only a live, unrevoked
   * subscription of the customer is re-authorised; the signature is used once.
   * @returns whether it changed.
   */
  async reauthorize(
    tx: SqlTx,
    owner: { merchantId: string; customerId: string },
    id: string,
    share: bigint,
    signature: string,
  ): Promise<boolean> {
    const rows = await tx.execute<{ id: string }[]>(
      `UPDATE subscriptions SET authorized_amount = charged_amount + ?::bigint, updated_at = ?
        WHERE id = ? AND merchant_id = ? AND customer_id = ? AND status IN ('Active', 'PastDue')
          AND revoked_at IS NULL
        RETURNING id`,
      [share.toString(), this.clock.now(), id, owner.merchantId, owner.customerId],
    );
    if (rows.length === 0) return false;
    return this.useSignature(tx, id, signature, 'reauthorize', { mustBeNew: true });
  }

  /**
   * The customer's revoke of its authorisation, seen on-chain (the portal): never charged again;
   * a `PastDue` one (nothing paid it forward) is `Completed` at once (`authorization_gone`), an
   * `Active` one when the period paid for ends (the charge run). The signature is used once.
   * @returns whether it changed.
   */
  async revoke(
    tx: SqlTx,
    owner: { merchantId: string; customerId: string },
    id: string,
    signature: string,
  ): Promise<boolean> {
    const marked = await tx.execute<{ status: SubscriptionStatus }[]>(
      `UPDATE subscriptions SET revoked_at = ?, updated_at = ?
        WHERE id = ? AND merchant_id = ? AND customer_id = ? AND revoked_at IS NULL
          AND status IN ('Active', 'PastDue')
      RETURNING status`,
      [this.clock.now(), this.clock.now(), id, owner.merchantId, owner.customerId],
    );
    if (marked.length === 0) return false;
    await this.useSignature(tx, id, signature, 'cancel', { mustBeNew: true });
    // The merchant hears of it at once: access ends at the period paid for (Active), or now.
    const cancelled = toSubscriptionResponse(await this.findRow(tx, owner.merchantId, id));
    await this.events.record(tx, owner.merchantId, 'subscription.cancel_requested', cancelled, {
      cancelAtPeriodEnd: false,
      customerCancelledAt: null,
    });
    if (marked[0].status === 'PastDue') {
      await this.transition(tx, owner.merchantId, id, 'complete', {
        failureReason: 'authorization_gone',
      });
    }
    return true;
  }

  private async findRow(em: SqlTx, merchantId: string, id: string): Promise<SubscriptionRow> {
    const [row] = await em.execute<SubscriptionRow[]>(
      `${SUBSCRIPTION_SELECT} WHERE s.id = ? AND s.merchant_id = ?`,
      [id, merchantId],
    );
    if (!row) throw new NotFoundError('Subscription');
    return row;
  }
}
