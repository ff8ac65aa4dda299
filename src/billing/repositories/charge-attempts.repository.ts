import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db';
import type { SqlTx } from '../../database/pg-transaction';
import type { MintSymbol } from '../../solana/mints';
import type { ChargeAttemptState } from '../entities/charge-attempt.entity';
import { unchangedSince, WalletSeen } from './wallet-reservations.repository';

/** An attempt with everything its charge needs, read in one query. */
export interface AttemptRow {
  id: string;
  merchant_id: string;
  subscription_id: string;
  period: number;
  /**
   * What the charge pulls (base units): the plan's price, plus the mint's transfer fee under the
   * token-delegate scheme (so that the price arrives whole); recorded with the try.
   */
  amount: string;
  /** The plan's price: what the merchant is to receive each period. */
  price: string;
  mint: MintSymbol;
  state: ChargeAttemptState;
  signature: string | null;
  transaction: string | null;
  last_valid_block_height: string | null;
  s_status: string;
  /** The customer revoked its authorisation at the portal: it ends, it is never charged. */
  s_revoked: boolean;
  s_customer_id: string;
  s_plan_id: string;
  s_authorized_amount: string;
  s_charged_amount: string;
  s_created_at: Date;
  subscriber: string;
  merchant_wallet: string;
}

/**
 * An attempt row with what charging it needs, read from `a` (a table or a CTE of attempts):
 * its subscription, plan, customer and merchant (their modules' tables) joined in the same
 * statement.
 */
const attemptSelect = (from: string): string =>
  `SELECT a.id, a.merchant_id, a.subscription_id, a.period, a.amount::text AS amount,
    p.amount::text AS price,
    a.mint, a.state, a.signature, a.transaction, a.last_valid_block_height::text AS last_valid_block_height,
    s.status AS s_status, s.revoked_at IS NOT NULL AS s_revoked, s.customer_id AS s_customer_id, s.plan_id AS s_plan_id,
    s.authorized_amount::text AS s_authorized_amount, s.charged_amount::text AS s_charged_amount,
    s.created_at AS s_created_at, c.wallet_address AS subscriber, m.wallet_address AS merchant_wallet
  FROM ${from} a
  JOIN subscriptions s ON s.id = a.subscription_id
  JOIN plans p ON p.id = s.plan_id
  JOIN customers c ON c.id = s.customer_id
  JOIN merchants m ON m.id = a.merchant_id`;

/** The claim of due periods (see `ChargeClaims.claimDue`). */
export interface DueClaim {
  /** Domain time: what is due, and the attempts' timestamps. */
  now: Date;
  limit: number;
  /** Only this subscription (a customer's first charge). */
  subscriptionId?: string;
  /** At most one charge per wallet and mint, none of those in `busy` (`wallet:mint`). */
  oneAtATime: boolean;
  busy: string[];
  leaseSeconds: number;
  owner: string;
}

/** A signed try, recorded before it is sent (see `ChargeAttemptsRepository.recordTry`). */
export interface RecordedTry {
  id: string;
  subscriptionId: string;
  signature: string;
  transaction: string;
  lastValidBlockHeight: number;
  amount: string;
  leaseSeconds: number;
  owner: string;
  now: Date;
  /** Token-delegate: recorded only while the wallet's other charges are as the charge saw them. */
  unchanged?: WalletSeen;
}

/** What the network fees the service key paid for one merchant's charges add up to. */
export interface NetworkFeeRow {
  merchant_id: string;
  name: string;
  landed: string;
  lamports: string;
}

/**
 * The network fees the service key paid, per merchant (`charge_attempts.network_fee`, with the
 * merchant's name: a read of `merchants` in the same statement), the merchants who cost most
 * first. A function of its own, for the operator's command (`serviceKeySpend`).
 */
export function networkFeesByMerchant(ex: SqlTx): Promise<NetworkFeeRow[]> {
  return ex.execute<NetworkFeeRow[]>(
    `SELECT a.merchant_id, m.name, count(*) FILTER (WHERE a.network_fee > 0)::text AS landed,
            sum(a.network_fee)::text AS lamports
       FROM charge_attempts a JOIN merchants m ON m.id = a.merchant_id
      GROUP BY a.merchant_id, m.name
     HAVING sum(a.network_fee) > 0
      ORDER BY sum(a.network_fee) DESC, a.merchant_id`,
  );
}

/**
 * Every statement on `charge_attempts`: the table's one owner (issue 22). An attempt moves only
 * from the state its caller read (compare-and-set): each write that can race answers whether it
 * won.
 */
@Injectable()
export class ChargeAttemptsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Claims due Active subscriptions and writes (or re-arms) their period's attempt, leased to
   * `owner`, in one statement (see `ChargeClaims.claimDue` for the rules). Reads subscriptions,
   * plans and customers (`FOR UPDATE OF s SKIP LOCKED`) in the same statement.
   */
  claimDue(claim: DueClaim): Promise<AttemptRow[]> {
    const { now, limit, subscriptionId, oneAtATime, busy } = claim;
    return this.db.execute<AttemptRow[]>(
      `WITH candidates AS (
         SELECT s.id, s.merchant_id, s.periods_charged + 1 AS period, p.amount, p.mint,
                s.current_period_end, c.wallet_address AS wallet
           FROM subscriptions s JOIN plans p ON p.id = s.plan_id
           JOIN customers c ON c.id = s.customer_id
          WHERE s.status = 'Active' AND s.current_period_end <= ?
            ${subscriptionId ? 'AND s.id = ?' : ''}
            AND NOT EXISTS (
              SELECT 1 FROM charge_attempts o
               WHERE o.subscription_id = s.id AND o.period = s.periods_charged + 1
                 AND o.state IN ('pending', 'sent'))
            ${oneAtATime ? `AND NOT (c.wallet_address || ':' || p.mint = ANY(?::text[]))` : ''}
          ORDER BY s.current_period_end
          LIMIT ?
          FOR UPDATE OF s SKIP LOCKED
       ), due AS (
         ${
           oneAtATime
             ? `SELECT * FROM (SELECT DISTINCT ON (wallet, mint) * FROM candidates
                  ORDER BY wallet, mint, current_period_end, id) one
                 ORDER BY current_period_end LIMIT ?`
             : 'SELECT * FROM candidates'
         }
       ), claimed AS (
       INSERT INTO charge_attempts AS a (id, created_at, updated_at, merchant_id, subscription_id,
         period, amount, mint, state, tries, lease_until, lease_owner)
       SELECT gen_random_uuid(), ?, ?, due.merchant_id, due.id, due.period, due.amount, due.mint,
              'pending', 1, now() + make_interval(secs => ?), ?
         FROM due
       ON CONFLICT (subscription_id, period) DO UPDATE
          SET state = 'pending', tries = a.tries + 1, lease_until = EXCLUDED.lease_until,
              lease_owner = EXCLUDED.lease_owner,
              amount = CASE WHEN a.signature IS NULL THEN EXCLUDED.amount ELSE a.amount END,
              failure_reason = NULL, updated_at = EXCLUDED.updated_at
        WHERE a.state IN ('failed', 'abandoned')
       RETURNING a.*
       )
       ${attemptSelect('claimed')}`,
      [
        now,
        ...(subscriptionId ? [subscriptionId] : []),
        ...(oneAtATime ? [busy] : []),
        // Siblings of one wallet among the candidates are left for later: look further ahead.
        // (A re-armed try whose bytes are kept keeps its amount: it is settled first, for what
        // those bytes pull.)
        oneAtATime ? limit * 4 : limit,
        ...(oneAtATime ? [limit] : []),
        now,
        now,
        claim.leaseSeconds,
        claim.owner,
      ],
    );
  }

  /**
   * Takes up attempts whose holder's lease ended, leased to `owner` now (`takeovers` counts
   * them), except those in `inHand`.
   */
  resumeStale(
    limit: number,
    inHand: string[],
    leaseSeconds: number,
    owner: string,
  ): Promise<AttemptRow[]> {
    return this.db.execute<AttemptRow[]>(
      `WITH resumed AS (
         UPDATE charge_attempts SET lease_until = now() + make_interval(secs => ?),
                lease_owner = ?, takeovers = takeovers + 1
          WHERE id IN (
            SELECT id FROM charge_attempts
             WHERE state IN ('pending', 'sent') AND lease_until < now()
               AND NOT (id = ANY(?::uuid[]))
             ORDER BY lease_until
             LIMIT ?
             FOR UPDATE SKIP LOCKED)
         RETURNING *
       )
       ${attemptSelect('resumed')}`,
      [leaseSeconds, owner, inHand, limit],
    );
  }

  /**
   * Clears an expired try (it can never land) so that a new one may be signed, unless another
   * instance has settled the attempt or recorded a try of its own meanwhile.
   * @returns whether it cleared it.
   */
  async clearExpiredTry(id: string, signature: string, now: Date): Promise<boolean> {
    const cleared = await this.db.execute<{ id: string }[]>(
      `UPDATE charge_attempts SET state = 'pending', signature = NULL, transaction = NULL,
          last_valid_block_height = NULL, updated_at = ?
        WHERE id = ? AND state IN ('pending', 'sent') AND signature = ? RETURNING id`,
      [now, id, signature],
    );
    return cleared.length > 0;
  }

  /**
   * Records a signed try before it is sent: compare-and-set on an attempt with no signature,
   * while the subscription is still Active (under its row lock, `FOR SHARE` on `subscriptions`
   * in the same statement, so a pause or cancel that commits first stops the charge), and, under
   * the token-delegate scheme, while the wallet's other charges are as the charge saw them.
   * @returns whether it recorded it.
   */
  async recordTry(t: RecordedTry): Promise<boolean> {
    const unchanged = t.unchanged ? unchangedSince(t.unchanged) : undefined;
    const recorded = await this.db.execute<{ id: string }[]>(
      `WITH s AS (
         SELECT id FROM subscriptions
          WHERE id = ? AND status = 'Active' AND revoked_at IS NULL FOR SHARE
       )
       UPDATE charge_attempts a SET state = 'sent', signature = ?, transaction = ?,
              last_valid_block_height = ?, amount = ?::bigint,
              lease_until = now() + make_interval(secs => ?), lease_owner = ?, updated_at = ?
         FROM s
        WHERE a.id = ? AND a.state = 'pending' AND a.signature IS NULL
          ${unchanged ? `AND ${unchanged.sql}` : ''}
        RETURNING a.id`,
      [
        t.subscriptionId,
        t.signature,
        t.transaction,
        t.lastValidBlockHeight,
        t.amount,
        t.leaseSeconds,
        t.owner,
        t.now,
        t.id,
        ...(unchanged?.params ?? []),
      ],
    );
    return recorded.length > 0;
  }

  /**
   * Where an attempt whose try was not recorded stands: its subscription's status (a read of
   * `subscriptions`, joined) and whether the attempt is still open with nothing recorded.
   */
  async standing(
    subscriptionId: string,
    id: string,
  ): Promise<{ status: string; revoked: boolean; open: boolean } | undefined> {
    const [now] = await this.db.execute<{ status: string; revoked: boolean; open: boolean }[]>(
      `SELECT s.status, s.revoked_at IS NOT NULL AS revoked,
              a.state = 'pending' AND a.signature IS NULL AS open
         FROM subscriptions s JOIN charge_attempts a ON a.subscription_id = s.id
        WHERE s.id = ? AND a.id = ?`,
      [subscriptionId, id],
    );
    return now;
  }

  /**
   * The money moved: only the try that landed settles it (compare-and-set on its signature,
   * from an open state, or from `failed` for a try given up whose bytes landed after all).
   * @returns whether it won (false: another instance settled it).
   */
  async markSucceeded(
    tx: SqlTx,
    s: { id: string; signature: string; from: 'open' | 'failed'; networkFee: bigint; now: Date },
  ): Promise<boolean> {
    const won = await tx.execute<{ id: string }[]>(
      `UPDATE charge_attempts SET state = 'succeeded', lease_until = NULL, last_error = NULL,
          failure_reason = NULL, network_fee = network_fee + ?::bigint, updated_at = ?
        WHERE id = ? AND ${s.from === 'open' ? `state IN ('pending', 'sent')` : `state = 'failed'`}
          AND signature = ? RETURNING id`,
      [s.networkFee.toString(), s.now, s.id, s.signature],
    );
    return won.length > 0;
  }

  /**
   * A final failure of the try `tried` (null: nothing was signed), from an open state.
   * `landed`: the transaction landed and failed, so it can never land again and is not kept.
   * @returns whether it won.
   */
  async markFailed(
    tx: SqlTx,
    f: {
      id: string;
      tried: string | null;
      reason: string;
      message: string;
      networkFee: bigint;
      landed: boolean;
      now: Date;
    },
  ): Promise<boolean> {
    const won = await tx.execute<{ id: string }[]>(
      `UPDATE charge_attempts SET state = 'failed', failure_reason = ?, last_error = ?,
          lease_until = NULL, updated_at = ?, network_fee = network_fee + ?::bigint
          ${f.landed ? ', signature = NULL, transaction = NULL, last_valid_block_height = NULL' : ''}
        WHERE id = ? AND state IN ('pending', 'sent') AND signature IS NOT DISTINCT FROM ?
        RETURNING id`,
      [f.reason, f.message, f.now, f.networkFee.toString(), f.id, f.tried],
    );
    return won.length > 0;
  }

  /**
   * Abandons a pending attempt with nothing recorded, for `reason` (its authorised term used
   * up), in the caller's transaction. @returns whether it won.
   */
  async markCompleted(tx: SqlTx, id: string, reason: string, now: Date): Promise<boolean> {
    const won = await tx.execute<{ id: string }[]>(
      `UPDATE charge_attempts SET state = 'abandoned', failure_reason = ?, lease_until = NULL,
          updated_at = ?
        WHERE id = ? AND state = 'pending' AND signature IS NULL RETURNING id`,
      [reason, now, id],
    );
    return won.length > 0;
  }

  /** Abandons a pending attempt with nothing recorded (its subscription stopped being Active). */
  async abandon(id: string, now: Date): Promise<void> {
    await this.db.execute(
      `UPDATE charge_attempts SET state = 'abandoned', lease_until = NULL, updated_at = ?
          WHERE id = ? AND state = 'pending' AND signature IS NULL`,
      [now, id],
    );
  }

  /**
   * Leaves the attempt for `retrySeconds`, compare-and-set on the try the caller read; `clear`
   * forgets that try (see `ChargeSettlement.defer`). @returns whether it wrote.
   */
  async defer(d: {
    id: string;
    signature: string | null;
    message: string;
    retrySeconds: number;
    clear: boolean;
    now: Date;
  }): Promise<boolean> {
    const rows = await this.db.execute<{ id: string }[]>(
      `UPDATE charge_attempts SET last_error = ?, updated_at = ?,
          lease_until = now() + make_interval(secs => ?)
          ${d.clear ? `, state = 'pending', signature = NULL, transaction = NULL, last_valid_block_height = NULL` : ''}
        WHERE id = ? AND state IN ('pending', 'sent') AND signature IS NOT DISTINCT FROM ?
        RETURNING id`,
      [d.message, d.now, d.retrySeconds, d.id, d.signature],
    );
    return rows.length > 0;
  }

  /** Adds a network fee the service key paid for the open try `signature`. */
  async addNetworkFee(id: string, signature: string, fee: bigint, now: Date): Promise<void> {
    await this.db.execute(
      `UPDATE charge_attempts SET network_fee = network_fee + ?::bigint, updated_at = ?
        WHERE id = ? AND state IN ('pending', 'sent') AND signature = ?`,
      [fee.toString(), now, id, signature],
    );
  }

  /**
   * Extends the lease of an open attempt, compare-and-set on its try and its holder.
   * @returns whether the lease is still `owner`'s.
   */
  async renewLease(
    id: string,
    signature: string,
    owner: string,
    seconds: number,
  ): Promise<boolean> {
    const rows = await this.db.execute<{ id: string }[]>(
      `UPDATE charge_attempts SET lease_until = now() + make_interval(secs => ?)
        WHERE id = ? AND state IN ('pending', 'sent') AND signature = ? AND lease_owner = ?
        RETURNING id`,
      [seconds, id, signature, owner],
    );
    return rows.length > 0;
  }

  /** Failed attempts whose try's bytes are kept (they may still land), the oldest first. */
  failedWithBytes(limit: number): Promise<AttemptRow[]> {
    return this.db.execute<AttemptRow[]>(
      `${attemptSelect('charge_attempts')}
        WHERE a.state = 'failed' AND a.transaction IS NOT NULL
        ORDER BY a.updated_at LIMIT ?`,
      [limit],
    );
  }

  /** Lets go of a failed attempt's try (it can never move money), if it is still that try. */
  async forgetFailedTry(id: string, signature: string, now: Date): Promise<void> {
    await this.db.execute(
      `UPDATE charge_attempts SET signature = NULL, transaction = NULL,
          last_valid_block_height = NULL, updated_at = ?
        WHERE id = ? AND state = 'failed' AND signature = ?`,
      [now, id, signature],
    );
  }

  /** Which of these signatures are charges' tries (recorded before they were sent). */
  async chargeSignatures(signatures: string[]): Promise<Set<string>> {
    const rows = await this.db.execute<{ signature: string }[]>(
      `SELECT signature FROM charge_attempts WHERE signature = ANY(?)`,
      [signatures],
    );
    return new Set(rows.map((r) => r.signature));
  }
}
