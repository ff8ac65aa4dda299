import { Injectable } from '@nestjs/common';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { isoTimestamp } from '../database/sql';
import type { MintSymbol } from '../solana/mints';
import type { SubscriptionStatus } from './subscription-status';

/** A subscription row joined with its plan (`p_*`) and customer (`c_*`). */
export interface SubscriptionRow {
  id: string;
  merchant_id: string;
  plan_id: string;
  customer_id: string;
  status: SubscriptionStatus;
  current_period_end: string | null;
  cancelled_at: string | null;
  revoked_at: string | null;
  paused_at: string | null;
  last_charge_at: string | null;
  failure_reason: string | null;
  onchain_address: string | null;
  created_at: string;
  updated_at: string;
  p_label: string;
  p_amount: string;
  p_mint: MintSymbol;
  p_interval_seconds: number;
  c_wallet_address: string;
  c_label: string | null;
}

/** A new subscription, `Active`, its first charge due at `at`. */
export interface NewSubscriptionRow {
  id: string;
  merchantId: string;
  planId: string;
  customerId: string;
  onchainAddress: string | null;
  /** Base units. */
  authorizedAmount: bigint;
  /** Domain time: created, updated, and the first charge due. */
  at: Date;
}

/** What a move of the transition table changes (see `SubscriptionsService.transition`). */
export interface TransitionChange {
  to: SubscriptionStatus;
  /** The statuses the move is allowed from: the UPDATE checks them under the row's lock. */
  from: readonly SubscriptionStatus[];
  stampCancelled: boolean;
  stampPaused: boolean;
  /** A resume: clears the pause and the failure, and moves the next charge to now if past. */
  resume: boolean;
  /** Whether `failureReason` is written (null clears it). */
  setFailure: boolean;
  failureReason: string | null;
  at: Date;
}

/** A charge that succeeded (see `SubscriptionsService.recordCharge`). */
export interface ChargeChange {
  chargedAt: Date;
  /** Base units. */
  amount: bigint;
  period: number;
  /** Domain time of the change. */
  at: Date;
}

/** The row a charge made, and what it was before. */
export interface ChargedSubscriptionRow extends SubscriptionRow {
  charge_first: boolean;
  status_before: SubscriptionStatus;
}

/** Who a customer's change is for: it only touches that customer's subscription. */
export interface SubscriptionOwner {
  merchantId: string;
  customerId: string;
}

/** A subscription of one customer as the customer portal shows and acts on it. */
export interface CustomerSubscriptionRow {
  id: string;
  plan_id: string;
  status: SubscriptionStatus;
  failure_reason: string | null;
  paused: boolean;
  revoked: boolean;
  current_period_end: string | null;
  last_charge_at: string | null;
  /** When it ended: the cancel (Cancelled), else its last change (Completed); null while live. */
  ended_at: string | null;
  authorized_amount: string;
  charged_amount: string;
  label: string;
  amount: string;
  mint: MintSymbol;
  interval_seconds: number;
  merchant_wallet: string;
  wallet_address: string;
}

/** How the first payment of a new subscription went, as the checkout page shows it. */
export interface ChargeStateRow {
  status: SubscriptionStatus;
  periods_charged: number;
  failure_reason: string | null;
}

/**
 * A subscription as the API returns it (with its plan and customer snapshots), read from `from`:
 * the table, or a CTE of rows an UPDATE just returned (`RETURNING *`), so that a change and
 * the row it made cost one round trip. `extra` adds more columns (`s.x AS y, …`) after them.
 */
const subscriptionSelect = (
  from: string,
  extra = '',
): string => `SELECT s.id, s.merchant_id, s.plan_id, s.customer_id, s.status,
    ${isoTimestamp('s.current_period_end', 'current_period_end')},
    ${isoTimestamp('s.cancelled_at', 'cancelled_at')}, ${isoTimestamp('s.revoked_at', 'revoked_at')},
    ${isoTimestamp('s.paused_at', 'paused_at')},
    ${isoTimestamp('s.last_charge_at', 'last_charge_at')}, s.failure_reason, s.onchain_address,
    ${isoTimestamp('s.created_at', 'created_at')}, ${isoTimestamp('s.updated_at', 'updated_at')},
    p.label AS p_label, p.amount::text AS p_amount, p.mint AS p_mint,
    p.interval_seconds AS p_interval_seconds,
    c.wallet_address AS c_wallet_address, c.label AS c_label${extra ? `, ${extra}` : ''}
  FROM ${from} s
  JOIN plans p ON p.id = s.plan_id
  JOIN customers c ON c.id = s.customer_id`;

const SUBSCRIPTION_SELECT = subscriptionSelect('subscriptions');

/**
 * The subscription list's columns, in the order of the cursor's array rows: each name's
 * expression. The SELECT is built from it, and `LIST_COLUMN` gives each name's position.
 */
const LIST_COLUMNS = {
  id: 's.id',
  planId: 's.plan_id',
  customerId: 's.customer_id',
  status: 's.status',
  currentPeriodEnd: isoTimestamp('s.current_period_end', 'current_period_end'),
  cancelledAt: isoTimestamp('s.cancelled_at', 'cancelled_at'),
  lastChargeAt: isoTimestamp('s.last_charge_at', 'last_charge_at'),
  failureReason: 's.failure_reason',
  onchainAddress: 's.onchain_address',
  planLabel: 'p.label',
  planAmount: 'p.amount::text',
  planMint: 'p.mint',
  planIntervalSeconds: 'p.interval_seconds',
  customerWalletAddress: 'c.wallet_address',
  customerLabel: 'c.label',
  createdAt: isoTimestamp('s.created_at', 'created_at'),
  updatedAt: isoTimestamp('s.updated_at', 'updated_at'),
  revokedAt: isoTimestamp('s.revoked_at', 'revoked_at'),
} as const;

/** Each list column's position in the array rows of `forEachListBatch`. */
export const LIST_COLUMN = Object.fromEntries(
  Object.keys(LIST_COLUMNS).map((name, i) => [name, i]),
) as { readonly [name in keyof typeof LIST_COLUMNS]: number };

const SUBSCRIPTION_LIST_SELECT = `SELECT ${Object.values(LIST_COLUMNS).join(', ')}
  FROM subscriptions s
  JOIN plans p ON p.id = s.plan_id
  JOIN customers c ON c.id = s.customer_id`;

/**
 * Every statement on `subscriptions` (issue 22: the table's one owner). The reads join the
 * subscription's plan, customer or merchant for what is shown with it.
 */
@Injectable()
export class SubscriptionsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Whether the merchant's plan is active, read under a share lock, so a plan deactivated
   * concurrently either lets the caller's subscription in first or refuses it. Undefined when
   * the plan is another merchant's or unknown.
   */
  async lockPlanForSubscribe(
    tx: SqlTx,
    merchantId: string,
    planId: string,
  ): Promise<{ active: boolean } | undefined> {
    const [plan] = await tx.execute<{ active: boolean }[]>(
      'SELECT active FROM plans WHERE id = ? AND merchant_id = ? FOR SHARE',
      [planId, merchantId],
    );
    return plan;
  }

  async insert(tx: SqlTx, row: NewSubscriptionRow): Promise<void> {
    await tx.execute(
      `INSERT INTO subscriptions (id, merchant_id, plan_id, customer_id, status, current_period_end,
         onchain_address, authorized_amount, created_at, updated_at)
       VALUES (?, ?, ?, ?, 'Active', ?, ?, ?, ?, ?)`,
      [
        row.id,
        row.merchantId,
        row.planId,
        row.customerId,
        row.at,
        row.onchainAddress,
        row.authorizedAmount.toString(),
        row.at,
        row.at,
      ],
    );
  }

  /** The subscription with its plan and customer; undefined when absent or another merchant's. */
  async find(ex: SqlTx, merchantId: string, id: string): Promise<SubscriptionRow | undefined> {
    const [row] = await ex.execute<SubscriptionRow[]>(
      `${SUBSCRIPTION_SELECT} WHERE s.id = ? AND s.merchant_id = ?`,
      [id, merchantId],
    );
    return row;
  }

  /** A customer's subscriptions, newest first. */
  listForCustomer(merchantId: string, customerId: string): Promise<SubscriptionRow[]> {
    return this.db.execute<SubscriptionRow[]>(
      `${SUBSCRIPTION_SELECT} WHERE s.merchant_id = ? AND s.customer_id = ?
          ORDER BY s.created_at DESC, s.id DESC`,
      [merchantId, customerId],
    );
  }

  /**
   * The merchant's subscriptions, newest first, `status` filtering, through a cursor: array rows
   * (columns at `LIST_COLUMN`'s positions) handed to `onBatch` a batch at a time (see
   * `Db.forEachRowBatch`); `onBatch` returning false stops.
   */
  forEachListBatch(
    merchantId: string,
    status: SubscriptionStatus | undefined,
    onBatch: (rows: unknown[][]) => Promise<boolean>,
  ): Promise<void> {
    const params: unknown[] = [merchantId];
    let where = 's.merchant_id = ?';
    if (status) {
      where += ' AND s.status = ?';
      params.push(status);
    }
    return this.db.forEachRowBatch(
      `${SUBSCRIPTION_LIST_SELECT} WHERE ${where} ORDER BY s.created_at DESC, s.id DESC`,
      params,
      onBatch,
    );
  }

  /**
   * One move, in the caller's transaction: checks the current status itself, under the row's
   * lock, and stamps what the move changes. @returns the status before, or undefined when the
   * move is not allowed from it (or there is no such subscription).
   */
  async transition(
    tx: SqlTx,
    merchantId: string,
    id: string,
    change: TransitionChange,
  ): Promise<SubscriptionStatus | undefined> {
    const [moved] = await tx.execute<{ previous: SubscriptionStatus }[]>(
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
       WHERE s.id = before.id AND before.status IN (${change.from.map(() => '?').join(', ')})
       RETURNING before.status AS previous`,
      [
        id,
        merchantId,
        change.to,
        change.at,
        change.stampCancelled,
        change.at,
        change.stampPaused,
        change.at,
        change.resume,
        change.setFailure,
        change.failureReason,
        change.resume,
        change.resume,
        change.at,
        ...change.from,
      ],
    );
    return moved?.previous;
  }

  /**
   * Counts a successful charge and moves the period on (see `SubscriptionsService.recordCharge`),
   * under the row's lock: the change and the row it made (with its plan and customer) in one
   * round trip. Undefined when absent or another merchant's.
   */
  async recordCharge(
    tx: SqlTx,
    merchantId: string,
    id: string,
    charge: ChargeChange,
  ): Promise<ChargedSubscriptionRow | undefined> {
    const [updated] = await tx.execute<ChargedSubscriptionRow[]>(
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
        charge.at,
      ],
    );
    return updated;
  }

  /**
   * The customer's share of the approval starts again from what it has been charged, when the
   * subscription is theirs, live and unrevoked. @returns whether it changed.
   */
  async reauthorize(
    tx: SqlTx,
    owner: SubscriptionOwner,
    id: string,
    share: bigint,
    at: Date,
  ): Promise<boolean> {
    const rows = await tx.execute<{ id: string }[]>(
      `UPDATE subscriptions SET authorized_amount = charged_amount + ?::bigint, updated_at = ?
        WHERE id = ? AND merchant_id = ? AND customer_id = ? AND status IN ('Active', 'PastDue')
          AND revoked_at IS NULL
        RETURNING id`,
      [share.toString(), at, id, owner.merchantId, owner.customerId],
    );
    return rows.length > 0;
  }

  /**
   * Marks the customer's live, unrevoked subscription revoked. @returns its status, or
   * undefined when nothing changed.
   */
  async markRevoked(
    tx: SqlTx,
    owner: SubscriptionOwner,
    id: string,
    at: Date,
  ): Promise<SubscriptionStatus | undefined> {
    const [marked] = await tx.execute<{ status: SubscriptionStatus }[]>(
      `UPDATE subscriptions SET revoked_at = ?, updated_at = ?
        WHERE id = ? AND merchant_id = ? AND customer_id = ? AND revoked_at IS NULL
          AND status IN ('Active', 'PastDue')
      RETURNING status`,
      [at, at, id, owner.merchantId, owner.customerId],
    );
    return marked?.status;
  }

  /**
   * The customer's subscriptions (or the one `id`), newest first, with the plan, the merchant's
   * wallet and the customer's wallet.
   */
  listOfCustomer(owner: SubscriptionOwner, id?: string): Promise<CustomerSubscriptionRow[]> {
    return this.db.execute<CustomerSubscriptionRow[]>(
      `SELECT s.id, s.plan_id, s.status, s.failure_reason, s.paused_at IS NOT NULL AS paused,
              s.revoked_at IS NOT NULL AS revoked,
              ${isoTimestamp('s.current_period_end', 'current_period_end')},
              ${isoTimestamp('s.last_charge_at', 'last_charge_at')},
              ${isoTimestamp(
                `(CASE s.status WHEN 'Cancelled' THEN s.cancelled_at WHEN 'Completed' THEN s.updated_at END)`,
                'ended_at',
              )},
              s.authorized_amount::text AS authorized_amount,
              s.charged_amount::text AS charged_amount, p.label, p.amount::text AS amount, p.mint,
              p.interval_seconds, m.wallet_address AS merchant_wallet, c.wallet_address
         FROM subscriptions s JOIN plans p ON p.id = s.plan_id
         JOIN customers c ON c.id = s.customer_id JOIN merchants m ON m.id = s.merchant_id
        WHERE s.merchant_id = ? AND s.customer_id = ? ${id ? 'AND s.id = ?' : ''}
        ORDER BY s.created_at DESC, s.id DESC`,
      [owner.merchantId, owner.customerId, ...(id ? [id] : [])],
    );
  }

  /** Whether the wallet (as a customer of any merchant) has a live subscription to the plan. */
  async hasLiveForWallet(planId: string, walletAddress: string): Promise<boolean> {
    const [live] = await this.db.execute<{ id: string }[]>(
      `SELECT s.id FROM subscriptions s JOIN customers c ON c.id = s.customer_id
        WHERE s.plan_id = ? AND c.wallet_address = ? AND s.status IN ('Active', 'PastDue')`,
      [planId, walletAddress],
    );
    return live !== undefined;
  }

  /** The status and charges of any merchant's subscription `id`; undefined when absent. */
  async chargeState(id: string): Promise<ChargeStateRow | undefined> {
    const [row] = await this.db.execute<ChargeStateRow[]>(
      `SELECT status, periods_charged, failure_reason FROM subscriptions WHERE id = ?`,
      [id],
    );
    return row;
  }
}
