import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db';
import type { SqlTx } from '../../database/pg-transaction';

/**
 * A wallet's subscriptions (`s`, with their plans `p`), read customers by wallet, then theirs by
 * customer: only the wallet's own, never a walk over every subscription (a plan on created_at
 * once made each charge read all those created earlier). `inflight` is the open attempt's charge.
 */
const WALLET_SUBSCRIPTIONS = `FROM customers c
       JOIN subscriptions s ON s.customer_id = c.id
       JOIN plans p ON p.id = s.plan_id
       LEFT JOIN charge_attempts inflight
         ON inflight.subscription_id = s.id AND inflight.period = s.periods_charged + 1
        AND (inflight.state = 'sent' OR (inflight.state = 'pending' AND inflight.signature IS NOT NULL))`;

/** What a subscription still needs of the shared approval, its charge in flight netted out. */
const STILL_NEEDED = `GREATEST(s.authorized_amount - s.charged_amount - COALESCE(inflight.amount, 0), 0)`;
/** What a subscription still needs of an approval signed now: its charge in flight included. */
const NEEDED_FROM_NOW = `GREATEST(s.authorized_amount - s.charged_amount, 0)`;

/** What a charge of one subscription needs to know of the wallet's others in the same mint. */
export interface WalletReservation {
  /** What the live ones created before it still need (`reservedAllowance` with `before`). */
  reserved: bigint;
  /** Charges of the others sent and not settled: they may land at any moment. */
  inFlight: number;
  /** The wallet's other live subscriptions in the mint. */
  siblings: number;
  /**
   * Changes when another's charge is settled, or one starts or stops being live. `quiet` holds
   * it: a condition for the statement that records the charge.
   */
  fingerprint: string;
}

/** The subscription a charge is for, as its wallet's reservation orders it (oldest first). */
export interface ReservationSelf {
  createdAt: Date;
  id: string;
}

/** What a charge saw of its wallet's subscriptions in a mint (see `unchangedSince`). */
export interface WalletSeen {
  wallet: string;
  mint: string;
  self: ReservationSelf;
  seen: WalletReservation;
}

/**
 * Token-delegate scheme: what a wallet's live subscriptions in one mint (any merchant's) still
 * need of the one approval they share: each one's share less what it has been charged, less its
 * charge in flight (sent, or re-armed with its bytes kept, which are sent again; not settled
 * yet: a landed one has already lowered the on-chain allowance, and counting it twice would make
 * an approval that covers everyone look short).
 *
 * A subscription has at most one open attempt, for its next period (`periods_charged + 1`; the
 * claim opens no other), so it is found by the (subscription, period) key: a point lookup. By
 * state alone the planner took the partial index of open attempts, whose entries for attempts
 * long settled stay until a vacuum, and read all of them for every subscription.
 *
 * Reads customers, subscriptions and plans (their modules' tables) in the same statement as
 * charge_attempts.
 *
 * @param ex the caller's transaction (a confirm reads it under its per-wallet lock), or the `Db`
 *   for a read of its own (a prepared statement of its own).
 * @param exceptPlanId leaves out the wallet's subscription to this plan.
 * @param forApproval what a new approval (subscribe, re-authorise, revoke of another) must leave
 *   for the others: their charges in flight are not netted out. Such a charge still needs the
 *   allowance if it lands after the new approval (which replaces the allowance), and if it expires
 *   it is signed again; netting it out would leave the newest subscription short by it (ended a
 *   period early, or its confirm refused as short). Counting one that landed before the approval
 *   over-approves by that one pull, which no charge can take: each is bounded by its own share.
 */
export async function reservedAllowance(
  ex: SqlTx,
  wallet: string,
  mint: string,
  filter: { exceptPlanId?: string; forApproval?: boolean } = {},
): Promise<bigint> {
  const params: unknown[] = [wallet, mint];
  let where = '';
  if (filter.exceptPlanId) {
    where += ' AND s.plan_id <> ?';
    params.push(filter.exceptPlanId);
  }
  const needed = filter.forApproval ? NEEDED_FROM_NOW : STILL_NEEDED;
  const sql = `SELECT COALESCE(SUM(${needed}), 0)::text AS total
       ${WALLET_SUBSCRIPTIONS}
      WHERE c.wallet_address = ? AND p.mint = ? AND s.status IN ('Active', 'PastDue') AND s.revoked_at IS NULL${where}`;
  const [row] = await ex.execute<{ total: string }[]>(sql, params);
  return BigInt(row.total);
}

/**
 * The wallet's subscriptions in a mint as a charge of `self` sees them: one row (`reserved`,
 * `in_flight`, `siblings`, `fingerprint`), with its parameters.
 */
function siblingsSql(
  wallet: string,
  mint: string,
  self: ReservationSelf,
): { sql: string; params: unknown[] } {
  return {
    sql: `SELECT COALESCE(SUM(${STILL_NEEDED})
              FILTER (WHERE l.live AND (s.created_at, s.id) < (?, ?)), 0)::text AS reserved,
            count(inflight.id) FILTER (WHERE s.id <> ?)::int AS in_flight,
            count(*) FILTER (WHERE l.live AND s.id <> ?)::int AS siblings,
            concat_ws(':', count(*) FILTER (WHERE l.live AND s.id <> ?),
              COALESCE(SUM(s.charged_amount) FILTER (WHERE s.id <> ?), 0),
              COALESCE(SUM(s.authorized_amount) FILTER (WHERE l.live AND s.id <> ?), 0),
              count(inflight.id) FILTER (WHERE s.id <> ?)) AS fingerprint
       ${WALLET_SUBSCRIPTIONS}
       CROSS JOIN LATERAL (SELECT s.status IN ('Active', 'PastDue') AND s.revoked_at IS NULL AS live) l
      WHERE c.wallet_address = ? AND p.mint = ? AND (l.live OR inflight.id IS NOT NULL)`,
    params: [self.createdAt, self.id, ...Array<string>(6).fill(self.id), wallet, mint],
  };
}

/**
 * A condition (SQL and parameters) that holds while the wallet's subscriptions in the mint are
 * as `seen` found them: no charge of theirs in flight, and none settled, started or stopped.
 * For the statement that records a charge (`ChargeAttemptsRepository.recordTry`).
 */
export function unchangedSince({ wallet, mint, self, seen }: WalletSeen): {
  sql: string;
  params: unknown[];
} {
  const { sql, params } = siblingsSql(wallet, mint, self);
  return {
    sql: `(SELECT w.fingerprint FROM (${sql}) w) = ?`,
    params: [...params, seen.fingerprint],
  };
}

/**
 * The token-delegate scheme's reads of what a wallet's subscriptions in one mint still need of
 * the approval they share (`reservedAllowance`), and the reservation a charge is judged on.
 */
@Injectable()
export class WalletReservationsRepository {
  constructor(private readonly db: Db) {}

  /** `reservedAllowance` as a statement of its own. */
  reserved(
    wallet: string,
    mint: string,
    filter: { exceptPlanId?: string; forApproval?: boolean } = {},
  ): Promise<bigint> {
    return reservedAllowance(this.db, wallet, mint, filter);
  }

  /** `reservedAllowance` inside the caller's transaction. */
  reservedIn(
    tx: SqlTx,
    wallet: string,
    mint: string,
    filter: { exceptPlanId?: string; forApproval?: boolean } = {},
  ): Promise<bigint> {
    return reservedAllowance(tx, wallet, mint, filter);
  }

  /**
   * `reservedAllowance` for a charge of `self`, and what tells whether it can be trusted: the
   * allowance read from the chain and the reservation read from the database agree only while
   * no other charge of the wallet in this mint is in flight. A charge sent but not landed when
   * the account was read is still in the allowance, yet netted out here (too lenient: a
   * subscription the approval no longer covers would be charged); not netted, one that has
   * landed counts twice (too strict: a covered one would be ended). So a charge is judged on a
   * reservation read when none was in flight, and recorded only if the same still holds after
   * the account was read (`unchangedSince`, a condition of the recording statement).
   */
  async walletReservation(
    wallet: string,
    mint: string,
    self: ReservationSelf,
  ): Promise<WalletReservation> {
    const { sql, params } = siblingsSql(wallet, mint, self);
    const [row] = await this.db.execute<
      { reserved: string; in_flight: number; siblings: number; fingerprint: string }[]
    >(sql, params);
    return {
      reserved: BigInt(row.reserved),
      inFlight: row.in_flight,
      siblings: row.siblings,
      fingerprint: row.fingerprint,
    };
  }
}
