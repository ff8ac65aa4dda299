import { Injectable } from '@nestjs/common';
import { sql } from '../../database/typed-sql';
import { Db } from '../../database/db';
import type { ReservationBound } from '../../solana/chain.port';
import type { SqlTx } from '../../database/pg-transaction';
import type {
  IReservedForApprovalExceptQuery,
  IReservedForApprovalQuery,
  IReservedStillNeededExceptQuery,
  IReservedStillNeededQuery,
  IWalletReservationQuery,
} from './wallet-reservations.repository.types';

/*
 * Every statement below reads a wallet's token-delegate subscriptions in a mint (`s`) by their
 * own copy of the payer's wallet and the plan's mint (`subscriptions_wallet_idx`, one index
 * range; Migration20261203010000): only the wallet's own, never a walk over every subscription
 * (a plan on created_at once made each charge read all those created earlier), nor the wallet's
 * customers, their subscriptions and each one's plan, as before. `inflight` is the open
 * attempt's charge (see `reservedAllowance`). What a subscription still needs of the shared
 * approval, its charge in flight netted out, is `GREATEST(s.authorized_amount - s.charged_amount -
 * COALESCE(inflight.amount, 0), 0)`; what it needs of an approval signed now, its charge in
 * flight included, `GREATEST(s.authorized_amount - s.charged_amount, 0)`. pgtyped takes one
 * static text per statement, so each variant (`reservedAllowance`'s filter) is written out
 * whole; a sum is never null (COALESCE): forced.
 */

/** What the wallet's live subscriptions in a mint still need, charges in flight netted out. */
const reservedStillNeeded = sql<IReservedStillNeededQuery>`
  SELECT COALESCE(SUM(GREATEST(s.authorized_amount - s.charged_amount - COALESCE(inflight.amount, 0), 0)), 0)::text AS "total!"
    FROM subscriptions s
    LEFT JOIN (
      SELECT CASE WHEN ia.state = 'sent' OR (ia.state = 'pending' AND ia.signature IS NOT NULL) THEN ia.id END AS id,
             CASE WHEN ia.state = 'sent' OR (ia.state = 'pending' AND ia.signature IS NOT NULL) THEN ia.amount END AS amount,
             ia.subscription_id, ia.period
        FROM charge_attempts ia WHERE ia.wallet = $wallet! AND ia.mint = $mint!
      OFFSET 0) inflight ON inflight.subscription_id = s.id AND inflight.period = s.periods_charged + 1
   WHERE s.wallet = $wallet! AND s.mint = $mint! AND s.scheme = 'token-delegate' AND s.status IN ('Active', 'PastDue') AND s.revoked_at IS NULL`;

/** `reservedStillNeeded`, leaving out the wallet's subscription to one plan. */
const reservedStillNeededExcept = sql<IReservedStillNeededExceptQuery>`
  SELECT COALESCE(SUM(GREATEST(s.authorized_amount - s.charged_amount - COALESCE(inflight.amount, 0), 0)), 0)::text AS "total!"
    FROM subscriptions s
    LEFT JOIN (
      SELECT CASE WHEN ia.state = 'sent' OR (ia.state = 'pending' AND ia.signature IS NOT NULL) THEN ia.id END AS id,
             CASE WHEN ia.state = 'sent' OR (ia.state = 'pending' AND ia.signature IS NOT NULL) THEN ia.amount END AS amount,
             ia.subscription_id, ia.period
        FROM charge_attempts ia WHERE ia.wallet = $wallet! AND ia.mint = $mint!
      OFFSET 0) inflight ON inflight.subscription_id = s.id AND inflight.period = s.periods_charged + 1
   WHERE s.wallet = $wallet! AND s.mint = $mint! AND s.scheme = 'token-delegate' AND s.status IN ('Active', 'PastDue') AND s.revoked_at IS NULL
     AND s.plan_id <> $exceptPlanId!`;

/** What the wallet's live subscriptions in a mint need of an approval signed now. */
const reservedForApproval = sql<IReservedForApprovalQuery>`
  SELECT COALESCE(SUM(GREATEST(s.authorized_amount - s.charged_amount, 0)), 0)::text AS "total!"
    FROM subscriptions s
   WHERE s.wallet = $wallet! AND s.mint = $mint! AND s.scheme = 'token-delegate' AND s.status IN ('Active', 'PastDue') AND s.revoked_at IS NULL`;

/** `reservedForApproval`, leaving out the wallet's subscription to one plan. */
const reservedForApprovalExcept = sql<IReservedForApprovalExceptQuery>`
  SELECT COALESCE(SUM(GREATEST(s.authorized_amount - s.charged_amount, 0)), 0)::text AS "total!"
    FROM subscriptions s
   WHERE s.wallet = $wallet! AND s.mint = $mint! AND s.scheme = 'token-delegate' AND s.status IN ('Active', 'PastDue') AND s.revoked_at IS NULL
     AND s.plan_id <> $exceptPlanId!`;

/**
 * The wallet's subscriptions in a mint as a charge of subscription `selfId` (created at
 * `selfCreatedAt`) sees them: one row, with the version of the wallet's approval it read them
 * at (in the same snapshot). The token-delegate claim reads it with each attempt it claims
 * (`claimDueOneAtATime`), its parameters as columns: the two must stay word for word the same
 * (wallet-reservation-statements.spec.ts holds them so). A charge is recorded only while that
 * version is still the wallet's (`recordTries` in charge-attempt-leases.repository.ts).
 */
export const walletReservation = sql<IWalletReservationQuery>`
  SELECT COALESCE(SUM(GREATEST(s.authorized_amount - s.charged_amount - COALESCE(inflight.amount, 0), 0))
           FILTER (WHERE l.live AND (s.created_at, s.id) < ($selfCreatedAt!, $selfId!)), 0)::text AS "reserved!",
         count(inflight.id) FILTER (WHERE s.id <> $selfId!)::int AS "in_flight!",
         count(*) FILTER (WHERE l.live AND s.id <> $selfId!)::int AS "siblings!",
         COALESCE((SELECT v.version FROM wallet_approval_versions v
                    WHERE v.wallet = $wallet! AND v.mint = $mint!), 0)::text AS "version!"
    FROM subscriptions s
    LEFT JOIN (
      SELECT CASE WHEN ia.state = 'sent' OR (ia.state = 'pending' AND ia.signature IS NOT NULL) THEN ia.id END AS id,
             CASE WHEN ia.state = 'sent' OR (ia.state = 'pending' AND ia.signature IS NOT NULL) THEN ia.amount END AS amount,
             ia.subscription_id, ia.period
        FROM charge_attempts ia WHERE ia.wallet = $wallet! AND ia.mint = $mint!
      OFFSET 0) inflight ON inflight.subscription_id = s.id AND inflight.period = s.periods_charged + 1
   CROSS JOIN LATERAL (SELECT s.status IN ('Active', 'PastDue') AND s.revoked_at IS NULL AS live) l
   WHERE s.wallet = $wallet! AND s.mint = $mint! AND s.scheme = 'token-delegate' AND (l.live OR inflight.id IS NOT NULL)`;

/** What a charge of one subscription needs to know of the wallet's others in the same mint. */
export interface WalletReservation {
  /** What the live ones created before it still need (`reservedAllowance` with `before`). */
  reserved: bigint;
  /**
   * `reserved` is what all the others need (an upper bound of what the earlier ones need: the
   * totals kept with the wallet's approval, as a claim reads them), not the exact sum.
   */
  upperBound?: boolean;
  /** Charges of the others sent and not settled: they may land at any moment. */
  inFlight: number;
  /** The wallet's other live subscriptions in the mint. */
  siblings: number;
  /**
   * The version of the wallet's approval in the mint (`wallet_approval_versions`): one more
   * whenever anything this reading reads changes (a charge goes in flight or is settled, a
   * subscription starts, stops or is re-authorised), written by triggers in the same
   * transaction. A condition of the statement that records the charge.
   */
  version: string;
}

/** The subscription a charge is for, as its wallet's reservation orders it (oldest first). */
export interface ReservationSelf {
  /** As the pool returns a timestamp (text: `AttemptRow.s_created_at`), or a `Date`. */
  createdAt: Date | string;
  id: string;
}

/**
 * What a charge saw of its wallet's subscriptions in a mint: the recording statement's condition
 * (`ChargeAttemptsRepository.recordTry`) that they are still so (the same version).
 */
export interface WalletSeen {
  wallet: string;
  mint: string;
  seen: WalletReservation;
}

/**
 * Token-delegate scheme: what a wallet's live subscriptions in one mint (any merchant's) still
 * need of the one approval they share: each one's share less what it has been charged, less its
 * charge in flight (sent, or re-armed with its bytes kept, which are sent again; not settled
 * yet: a landed one has already lowered the on-chain allowance, and counting it twice would make
 * an approval that covers everyone look short).
 *
 * The charges in flight are found by the wallet's turn: an attempt holds `wallet` exactly while
 * it is open (`charge_attempts_turn_open`, and a trigger clears it when the attempt ends), the
 * claim and a resume write it, a put-off with nothing sent clears it, and a trigger gives it to
 * any open attempt given a signature without one (`charge_attempts_turn_held`,
 * Migration20261206010000: so no try that may land lacks it). So the wallet's attempts in the
 * mint are one probe of the turn index (`charge_attempts_open_wallet_idx`), read once
 * (`OFFSET 0`: not re-read per sibling) and joined to each subscription's next period
 * (`periods_charged + 1`; a subscription has at most one open attempt, for that period). Before,
 * each sibling's attempt was looked up by its (subscription, period) key: 20 index look-ups a
 * charge for a wallet with 20 subscriptions in `npm run bench:engine`. The state is tested in the
 * select list (`CASE`), not in the condition, and the probe names the wallet alone: with the
 * state in the condition, the planner could take the partial index of open attempts instead (the
 * state test implies its predicate) and read every open attempt again
 * (`test/charge-claim-plan.e2e-spec.ts` saw it; `test/wallet-reservation.e2e-spec.ts` holds what
 * is counted).
 *
 * Reads subscriptions (its module's table) in the same statement as charge_attempts.
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
  const { exceptPlanId, forApproval } = filter;
  const [row] = exceptPlanId
    ? await (forApproval ? reservedForApprovalExcept : reservedStillNeededExcept).run(
        { wallet, mint, exceptPlanId },
        ex,
      )
    : await (forApproval ? reservedForApproval : reservedStillNeeded).run({ wallet, mint }, ex);
  return BigInt(row.total);
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
   * the account was read (`WalletSeen`, a condition of the recording statement).
   */
  async walletReservation(
    wallet: string,
    mint: string,
    self: ReservationSelf,
  ): Promise<WalletReservation> {
    const [row] = await walletReservation.run(
      { wallet, mint, selfCreatedAt: self.createdAt, selfId: self.id },
      this.db,
    );
    return {
      reserved: BigInt(row.reserved),
      inFlight: row.in_flight,
      siblings: row.siblings,
      version: row.version,
    };
  }

  /**
   * What a charge judged on `seen` holds back for the earlier ones
   * (`ChargeInput.reservedForEarlier`): a claim's upper bound (`upperBound`), with their exact
   * sum read only should the approval fall short of it; else the exact sum read.
   */
  judged(
    seen: WalletReservation,
    wallet: string,
    mint: string,
    self: ReservationSelf,
  ): bigint | ReservationBound | (() => Promise<bigint>) {
    if (!seen.upperBound) return seen.reserved;
    const exactly = () => this.earlier(wallet, mint, self);
    // Below 0 the kept totals are not the subscriptions' (they never should be): no bound.
    return seen.reserved < 0n ? exactly : { atMost: seen.reserved, exactly };
  }

  /** What the live ones created before `self` still need: `walletReservation`'s, read now. */
  async earlier(wallet: string, mint: string, self: ReservationSelf): Promise<bigint> {
    return (await this.walletReservation(wallet, mint, self)).reserved;
  }
}
