import { Injectable } from '@nestjs/common';
import { sql } from '../database/typed-sql';
import type { ListPage } from '../common/pagination';
import { Db } from '../database/db';
import type { SubscriptionScheme } from '../config/app-config';
import type { SqlTx } from '../database/pg-transaction';
import type { MintSymbol } from '../solana/mints';
import {
  findSubscriptionCreatedAt,
  streamSubscriptionList,
  type SubscriptionListRow,
} from './subscription-list.repository';
import type { SubscriptionStatus } from './subscription-status';
import type {
  IAtOnchainAddressesQuery,
  IChargeStateQuery,
  IChargeStateResult,
  IFindSubscriptionQuery,
  IFindSubscriptionResult,
  IInsertSubscriptionQuery,
  IListCustomerSubscriptionsQuery,
  IListCustomerSubscriptionsResult,
  IListSubscriptionsOfCustomerQuery,
  ILiveForWalletQuery,
  ILockPlanForSubscribeQuery,
  IMarkRevokedQuery,
  IReauthorizeQuery,
  IRecordChargesQuery,
  IRecordChargesResult,
  ITransitionQuery,
} from './subscriptions.repository.types';

/*
 * The generated row types leave a text column `string`: where one holds a subscription status or
 * a mint symbol (checked by the table, or the service's own), the rows below narrow it.
 */

/** A subscription row joined with its plan (`p_*`) and customer (`c_*`). */
export type SubscriptionRow = Omit<IFindSubscriptionResult, 'status' | 'p_mint'> & {
  status: SubscriptionStatus;
  p_mint: MintSymbol;
};

export type { SubscriptionListRow } from './subscription-list.repository';

/** The row a charge made, and what it was before. */
export type ChargedSubscriptionRow = Omit<
  IRecordChargesResult,
  'status' | 'p_mint' | 'status_before'
> & {
  status: SubscriptionStatus;
  p_mint: MintSymbol;
  status_before: SubscriptionStatus;
};

/** A new subscription, `Active`, its first charge due at `at`. */
export interface NewSubscriptionRow {
  id: string;
  merchantId: string;
  planId: string;
  customerId: string;
  onchainAddress: string | null;
  /** Base units. */
  authorizedAmount: bigint;
  /** The scheme its customer authorised it under. */
  scheme: SubscriptionScheme;
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

/** A charge that succeeded (see `SubscriptionsService.recordCharges`). */
export interface ChargeChange {
  chargedAt: Date;
  /** Base units. */
  amount: bigint;
  period: number;
  /** Domain time of the change. */
  at: Date;
}

/** Who a customer's change is for: it only touches that customer's subscription. */
export interface SubscriptionOwner {
  merchantId: string;
  customerId: string;
}

/**
 * A subscription of one customer as the customer portal shows and acts on it: `ended_at` is when
 * it ended (the cancel when Cancelled, else its last change when Completed; null while live).
 */
export type CustomerSubscriptionRow = Omit<
  IListCustomerSubscriptionsResult,
  'status' | 'mint' | 'scheme'
> & {
  status: SubscriptionStatus;
  mint: MintSymbol;
  scheme: SubscriptionScheme;
};

/** How the first payment of a new subscription went, as the checkout page shows it. */
export type ChargeStateRow = Omit<IChargeStateResult, 'status'> & { status: SubscriptionStatus };

/**
 * Whether the merchant's plan is active, read under a share lock, so a plan deactivated
 * concurrently either lets the caller's subscription in first or refuses it.
 */
const lockPlanForSubscribe = sql<ILockPlanForSubscribeQuery>`
  SELECT active FROM plans WHERE id = $planId! AND merchant_id = $merchantId! FOR SHARE`;

/** A new subscription, `Active`, its first charge due at `at`. */
const insertSubscription = sql<IInsertSubscriptionQuery>`
  INSERT INTO subscriptions (id, merchant_id, plan_id, customer_id, status, current_period_end,
    onchain_address, authorized_amount, scheme, created_at, updated_at)
  VALUES ($id!, $merchantId!, $planId!, $customerId!, 'Active', $at!, $onchainAddress,
    $authorizedAmount!, $scheme!, $at!, $at!)`;

/**
 * The merchant's subscription as the API returns it, with its plan and customer snapshots
 * (`SubscriptionRow`: its columns written out in each statement that returns one).
 */
const findSubscription = sql<IFindSubscriptionQuery>`
  SELECT s.id, s.merchant_id, s.plan_id, s.customer_id, s.status,
         api_time(s.current_period_end) AS current_period_end,
         api_time(s.cancelled_at) AS cancelled_at, api_time(s.revoked_at) AS revoked_at,
         api_time(s.paused_at) AS paused_at, api_time(s.last_charge_at) AS last_charge_at,
         s.failure_reason, s.onchain_address, api_time(s.created_at) AS "created_at!",
         api_time(s.updated_at) AS "updated_at!", p.label AS p_label, (p.amount - COALESCE(p.meter_cap, 0))::text AS "p_amount!",
         p.mint AS p_mint, p.interval_seconds AS p_interval_seconds,
         c.wallet_address AS c_wallet_address, c.label AS c_label
    FROM subscriptions s JOIN plans p ON p.id = s.plan_id JOIN customers c ON c.id = s.customer_id
   WHERE s.id = $id! AND s.merchant_id = $merchantId!`;

/** A customer's subscriptions, newest first. */
const listSubscriptionsOfCustomer = sql<IListSubscriptionsOfCustomerQuery>`
  SELECT s.id, s.merchant_id, s.plan_id, s.customer_id, s.status,
         api_time(s.current_period_end) AS current_period_end,
         api_time(s.cancelled_at) AS cancelled_at, api_time(s.revoked_at) AS revoked_at,
         api_time(s.paused_at) AS paused_at, api_time(s.last_charge_at) AS last_charge_at,
         s.failure_reason, s.onchain_address, api_time(s.created_at) AS "created_at!",
         api_time(s.updated_at) AS "updated_at!", p.label AS p_label, (p.amount - COALESCE(p.meter_cap, 0))::text AS "p_amount!",
         p.mint AS p_mint, p.interval_seconds AS p_interval_seconds,
         c.wallet_address AS c_wallet_address, c.label AS c_label
    FROM subscriptions s JOIN plans p ON p.id = s.plan_id JOIN customers c ON c.id = s.customer_id
   WHERE s.merchant_id = $merchantId! AND s.customer_id = $customerId!
   ORDER BY s.created_at DESC, s.id DESC`;

/**
 * One move: the current status read under the row's lock, checked against the statuses the move
 * is allowed from, and what the move changes stamped. Returns the status before, or nothing.
 */
const transition = sql<ITransitionQuery>`
  WITH before AS (
    SELECT id, status FROM subscriptions WHERE id = $id! AND merchant_id = $merchantId! FOR UPDATE
  )
  UPDATE subscriptions s SET status = $to!, updated_at = $at!,
    cancelled_at = CASE WHEN $stampCancelled!::boolean THEN $at!::timestamptz
                        ELSE s.cancelled_at END,
    paused_at = CASE WHEN $stampPaused!::boolean THEN $at!::timestamptz
                     WHEN $resume!::boolean THEN NULL ELSE s.paused_at END,
    failure_reason = CASE WHEN $setFailure!::boolean THEN $failureReason
                          WHEN $resume!::boolean THEN NULL ELSE s.failure_reason END,
    current_period_end = CASE WHEN $resume!::boolean
                              THEN GREATEST(s.current_period_end, $at!::timestamptz)
                              ELSE s.current_period_end END
   FROM before
  WHERE s.id = before.id AND before.status = ANY($from!::text[])
  RETURNING before.status AS "previous!"`;

/**
 * Counts successful charges and moves their periods on, under their rows' locks (taken in id
 * order, as any other multi-row writer of them must), each subscription its merchant's, and
 * returns the rows they made (`SubscriptionRow`'s columns, read from the UPDATE's `RETURNING
 * s.*`: the changes and their rows in one round trip), whether each was the first charge, and
 * the status before. Several at once (a group of charges settled together): one statement. The
 * rows are found by their ids as an array (`= ANY(ARRAY(…))`, an index scan): joined to the
 * function's rows alone, the planner, which takes a function for 100 rows, read the whole table.
 */
const recordCharges = sql<IRecordChargesQuery>`
  WITH charge AS (
    SELECT * FROM jsonb_to_recordset($charges!::jsonb)
        AS c(id uuid, merchant_id uuid, charged_at timestamptz, amount bigint, period int)
  ), before AS (
    SELECT s.id, s.status, s.last_charge_at IS NULL AS first, s.current_period_end,
           make_interval(secs => p.interval_seconds) AS period, c.charged_at, c.amount,
           c.period AS charged_period
      FROM subscriptions s JOIN charge c ON c.id = s.id AND c.merchant_id = s.merchant_id
      JOIN plans p ON p.id = s.plan_id
     WHERE s.id = ANY(ARRAY(SELECT id FROM charge))
     ORDER BY s.id FOR UPDATE OF s
  ), updated AS (
    UPDATE subscriptions s SET last_charge_at = before.charged_at,
      charged_amount = s.charged_amount + before.amount,
      periods_charged = GREATEST(s.periods_charged, before.charged_period),
      current_period_end = CASE
        WHEN NOT before.first AND before.current_period_end + before.period > before.charged_at
          THEN before.current_period_end + before.period
        ELSE before.charged_at + before.period END,
      failure_reason = CASE WHEN before.status = 'Active' THEN NULL ELSE s.failure_reason END,
      updated_at = $at!
     FROM before
    WHERE s.id = before.id
    RETURNING s.*, before.first AS charge_first, before.status AS status_before
  )
  SELECT s.id AS "id!", s.merchant_id AS "merchant_id!", s.plan_id AS "plan_id!",
         s.customer_id AS "customer_id!", s.status AS "status!",
         api_time(s.current_period_end) AS current_period_end,
         api_time(s.cancelled_at) AS cancelled_at, api_time(s.revoked_at) AS revoked_at,
         api_time(s.paused_at) AS paused_at, api_time(s.last_charge_at) AS last_charge_at,
         s.failure_reason, s.onchain_address, api_time(s.created_at) AS "created_at!",
         api_time(s.updated_at) AS "updated_at!", p.label AS p_label, (p.amount - COALESCE(p.meter_cap, 0))::text AS "p_amount!",
         p.mint AS p_mint, p.interval_seconds AS p_interval_seconds,
         c.wallet_address AS c_wallet_address, c.label AS c_label,
         s.charge_first AS "charge_first!", s.status_before AS "status_before!"
    FROM updated s JOIN plans p ON p.id = s.plan_id JOIN customers c ON c.id = s.customer_id`;

/**
 * The customer's share of the approval starts again from what it has been charged, when the
 * subscription is theirs, live and unrevoked.
 */
const reauthorize = sql<IReauthorizeQuery>`
  UPDATE subscriptions SET authorized_amount = charged_amount + $share!::bigint, updated_at = $at!
   WHERE id = $id! AND merchant_id = $merchantId! AND customer_id = $customerId!
     AND status IN ('Active', 'PastDue') AND revoked_at IS NULL
  RETURNING id`;

/** Marks the customer's live, unrevoked subscription revoked: returns its status. */
const markRevoked = sql<IMarkRevokedQuery>`
  UPDATE subscriptions SET revoked_at = $at!, updated_at = $at!
   WHERE id = $id! AND merchant_id = $merchantId! AND customer_id = $customerId!
     AND revoked_at IS NULL AND status IN ('Active', 'PastDue')
  RETURNING status`;

/**
 * The customer's subscriptions (or the one `id`), newest first, with the plan, the merchant's
 * wallet and the customer's wallet (`CustomerSubscriptionRow`). The portal's read of one
 * customer's few rows: an optional filter's generic plan costs nothing here.
 */
const listCustomerSubscriptions = sql<IListCustomerSubscriptionsQuery>`
  SELECT s.id, s.plan_id, s.status, s.failure_reason, s.paused_at IS NOT NULL AS "paused!",
         s.revoked_at IS NOT NULL AS "revoked!",
         api_time(s.current_period_end) AS current_period_end,
         api_time(s.last_charge_at) AS last_charge_at,
         api_time(CASE s.status WHEN 'Cancelled' THEN s.cancelled_at
                                WHEN 'Completed' THEN s.updated_at END) AS ended_at,
         s.authorized_amount::text AS "authorized_amount!",
         s.charged_amount::text AS "charged_amount!", p.label, p.amount::text AS "amount!", p.mint,
         p.interval_seconds, m.wallet_address AS merchant_wallet, c.wallet_address, s.scheme
    FROM subscriptions s JOIN plans p ON p.id = s.plan_id
    JOIN customers c ON c.id = s.customer_id JOIN merchants m ON m.id = s.merchant_id
   WHERE s.merchant_id = $merchantId! AND s.customer_id = $customerId!
     AND ($id::uuid IS NULL OR s.id = $id)
   ORDER BY s.created_at DESC, s.id DESC`;

/** A live subscription to the plan of the wallet, as a customer of any merchant. */
const liveForWallet = sql<ILiveForWalletQuery>`
  SELECT s.id FROM subscriptions s JOIN customers c ON c.id = s.customer_id
   WHERE s.plan_id = $planId! AND c.wallet_address = $walletAddress!
     AND s.status IN ('Active', 'PastDue')`;

/**
 * The merchant's subscriptions at these on-chain addresses (the program's subscription PDAs), the
 * newest first (a customer who subscribes to a plan again gets the same PDA).
 */
const atOnchainAddresses = sql<IAtOnchainAddressesQuery>`
  SELECT id, customer_id, onchain_address AS "onchain_address!" FROM subscriptions
   WHERE merchant_id = $merchantId! AND onchain_address = ANY($addresses!)
   ORDER BY created_at DESC, id DESC`;

/** The status and charges of any merchant's subscription. */
const chargeState = sql<IChargeStateQuery>`
  SELECT status, periods_charged, failure_reason FROM subscriptions WHERE id = $id!`;

/**
 * Every statement on `subscriptions` (issue 22: the table's one owner), typed by pgtyped from the
 * migrated schema (`npm run db:types`). The reads join the subscription's plan, customer or
 * merchant for what is shown with it.
 */
@Injectable()
export class SubscriptionsRepository {
  constructor(private readonly db: Db) {}

  /** See `lockPlanForSubscribe`: undefined when the plan is another merchant's or unknown. */
  async lockPlanForSubscribe(
    tx: SqlTx,
    merchantId: string,
    planId: string,
  ): Promise<{ active: boolean } | undefined> {
    const [plan] = await lockPlanForSubscribe.run({ planId, merchantId }, tx);
    return plan;
  }

  async insert(tx: SqlTx, row: NewSubscriptionRow): Promise<void> {
    await insertSubscription.run(
      {
        id: row.id,
        merchantId: row.merchantId,
        planId: row.planId,
        customerId: row.customerId,
        onchainAddress: row.onchainAddress,
        authorizedAmount: row.authorizedAmount.toString(),
        scheme: row.scheme,
        at: row.at,
      },
      tx,
    );
  }

  /** The subscription with its plan and customer; undefined when absent or another merchant's. */
  async find(ex: SqlTx, merchantId: string, id: string): Promise<SubscriptionRow | undefined> {
    const [row] = await findSubscription.run({ id, merchantId }, ex);
    return row as SubscriptionRow | undefined;
  }

  /** A customer's subscriptions, newest first. */
  listForCustomer(ex: SqlTx, merchantId: string, customerId: string): Promise<SubscriptionRow[]> {
    const rows = listSubscriptionsOfCustomer.run({ merchantId, customerId }, ex);
    return rows as Promise<SubscriptionRow[]>;
  }

  /**
   * The merchant's subscriptions, newest first, `status` filtering, one `page` of them
   * (`WHOLE_LIST`: all), through a cursor: rows handed to `onBatch` a batch at a time (see
   * `Db.forEachBatch`); `onBatch` returning false stops.
   */
  forEachListBatch(
    merchantId: string,
    status: SubscriptionStatus | undefined,
    page: ListPage,
    onBatch: (rows: SubscriptionListRow[]) => Promise<boolean>,
  ): Promise<void> {
    return streamSubscriptionList(this.db, merchantId, status, page, onBatch);
  }

  /** When the merchant's subscription was created (a page's cursor); undefined when none. */
  createdAt(merchantId: string, id: string): Promise<string | undefined> {
    return findSubscriptionCreatedAt(this.db, merchantId, id);
  }

  /**
   * One move, in the caller's transaction (see `transition`). @returns the status before, or
   * undefined when the move is not allowed from it (or there is no such subscription).
   */
  async transition(
    tx: SqlTx,
    merchantId: string,
    id: string,
    change: TransitionChange,
  ): Promise<SubscriptionStatus | undefined> {
    const [moved] = await transition.run({ ...change, id, merchantId, from: [...change.from] }, tx);
    return moved?.previous as SubscriptionStatus | undefined;
  }

  /**
   * Counts successful charges (see `SubscriptionsService.recordCharges`), each subscription its
   * merchant's, in one statement: the rows they made, in the order of `charges`; undefined for
   * one absent or another merchant's.
   */
  async recordCharges(
    tx: SqlTx,
    charges: readonly ({ merchantId: string; id: string } & Omit<ChargeChange, 'at'>)[],
    at: Date,
  ): Promise<(ChargedSubscriptionRow | undefined)[]> {
    const rows = await recordCharges.run(
      {
        charges: JSON.stringify(
          charges.map((c) => ({
            id: c.id,
            merchant_id: c.merchantId,
            charged_at: c.chargedAt.toISOString(),
            amount: c.amount.toString(),
            period: c.period,
          })),
        ),
        at,
      },
      tx,
    );
    const byId = new Map(rows.map((row) => [row.id, row as ChargedSubscriptionRow]));
    return charges.map((c) => byId.get(c.id));
  }

  /** See `reauthorize`. @returns whether it changed. */
  async reauthorize(
    tx: SqlTx,
    owner: SubscriptionOwner,
    id: string,
    share: bigint,
    at: Date,
  ): Promise<boolean> {
    const { merchantId, customerId } = owner;
    const rows = await reauthorize.run(
      { share: share.toString(), at, id, merchantId, customerId },
      tx,
    );
    return rows.length > 0;
  }

  /** See `markRevoked`. @returns its status, or undefined when nothing changed. */
  async markRevoked(
    tx: SqlTx,
    owner: SubscriptionOwner,
    id: string,
    at: Date,
  ): Promise<SubscriptionStatus | undefined> {
    const { merchantId, customerId } = owner;
    const [marked] = await markRevoked.run({ at, id, merchantId, customerId }, tx);
    return marked?.status as SubscriptionStatus | undefined;
  }

  /** See `listCustomerSubscriptions`. */
  async listOfCustomer(owner: SubscriptionOwner, id?: string): Promise<CustomerSubscriptionRow[]> {
    const { merchantId, customerId } = owner;
    const rows = await listCustomerSubscriptions.run({ merchantId, customerId, id }, this.db);
    return rows as CustomerSubscriptionRow[];
  }

  /** Whether the wallet (as a customer of any merchant) has a live subscription to the plan. */
  async hasLiveForWallet(planId: string, walletAddress: string): Promise<boolean> {
    const [live] = await liveForWallet.run({ planId, walletAddress }, this.db);
    return live !== undefined;
  }

  /** The status and charges of any merchant's subscription `id`; undefined when absent. */
  async chargeState(id: string): Promise<ChargeStateRow | undefined> {
    const [row] = await chargeState.run({ id }, this.db);
    return row as ChargeStateRow | undefined;
  }

  /** See `atOnchainAddresses`. */
  atOnchainAddresses(merchantId: string, addresses: string[]) {
    return atOnchainAddresses.run({ merchantId, addresses }, this.db);
  }
}
