import { sql } from '../../database/typed-sql';
import type { SubscriptionScheme } from '../../config/app-config';
import type { Db } from '../../database/db';
import type { SqlTx } from '../../database/pg-transaction';
import type { MintSymbol } from '../../solana/mints';
import type { ChargeAttemptState } from '../entities/charge-attempt.entity';
import type { WalletReservation } from './wallet-reservations.repository';
import { type DueWalk, walkOn } from './due-walk';
import type {
  IClaimDueAllQuery,
  IClaimDueAllResult,
  IClaimDueOneAtATimeQuery,
  IClaimDueOneAtATimeResult,
  IClaimDueOneQuery,
  IFailedWithBytesQuery,
  IResumeStaleQuery,
  IResumeStaleResult,
} from './charge-attempt-claims.repository.types';

/*
 * The statements of `charge_attempts` (billing's table, issue 22) that return attempts with
 * everything their charge needs: `ChargeAttemptsRepository` runs them (this file holds them
 * apart only for its length). Typed by pgtyped from the migrated schema (`npm run db:types`).
 *
 * Each ends in the same read of an attempt row `a` (a table or a CTE of attempts): its
 * subscription, plan, customer and merchant (their modules' tables) joined in the same
 * statement. pgtyped takes one static text per statement, so that read is written out in each.
 * Read through a CTE, pgtyped cannot tell a column's nullability: each not-null one is forced
 * (`!`); `signature`, `transaction` and `last_valid_block_height` may be null.
 */

/**
 * An attempt with everything its charge needs, read in one query. `amount` is what the charge
 * pulls (base units): the plan's price, plus the mint's transfer fee under the token-delegate
 * scheme (so that the price arrives whole); recorded with the try. `price` is the plan's price:
 * what the merchant is to receive each period. `s_revoked`: the customer revoked its
 * authorisation at the portal: it ends, it is never charged. `s_created_at` is text, as the pool
 * returns timestamps. Mint and state are the service's (text columns, which the generated type
 * leaves `string`).
 */
export type AttemptRow = Omit<IResumeStaleResult, 'mint' | 'state' | 's_scheme'> & {
  mint: MintSymbol;
  state: ChargeAttemptState;
  /** The scheme the subscription was authorised under: its charge is built under it. */
  s_scheme: SubscriptionScheme;
  /** Its wallet's reservation, as read in the statement that claimed it (token-delegate). */
  seen?: WalletReservation;
};

/**
 * Claims due Active subscriptions under the program scheme and writes (or re-arms) their
 * period's attempt, leased to `owner`, in one statement (see `ChargeClaims.claimDue`). Reads
 * subscriptions (`FOR UPDATE SKIP LOCKED`), plans and customers in the same statement.
 * Oldest due first.
 *
 * The due walk reads `subscriptions` alone, in its due index's order, and looks up each row's
 * plan and open attempt as it goes (scalar subqueries, by key), so it stops at the limit
 * whatever the planner believes about how many are due. Joined in the walk, a wave that fell due
 * since the last ANALYZE was taken for one row: every due subscription was read, and each checked
 * against every open attempt, on every claim (255 ms a claim of 8 among 4 000 due;
 * `test/charge-claim-plan.e2e-spec.ts`).
 */
export const claimDueAll = sql<IClaimDueAllQuery>`
  WITH candidates AS (
    SELECT s.id, s.merchant_id, s.plan_id, s.periods_charged + 1 AS period, s.current_period_end
      FROM subscriptions s
     WHERE s.status = 'Active' AND s.current_period_end <= $now! AND s.scheme = 'program'
       AND (s.current_period_end, s.id) > ($afterDue!::timestamptz, $afterId!::uuid)
       AND (s.periods_charged = 0
            OR s.current_period_end + make_interval(secs => (
                 SELECT p.usage_grace_seconds FROM plans p WHERE p.id = s.plan_id)) <= $now!)
       AND COALESCE((SELECT o.state FROM charge_attempts o
                      WHERE o.subscription_id = s.id AND o.period = s.periods_charged + 1), '')
           NOT IN ('pending', 'sent')
     ORDER BY s.current_period_end, s.id
     LIMIT $limit!
     FOR UPDATE SKIP LOCKED
  ), due AS (
    SELECT k.*, p.amount, p.mint FROM candidates k JOIN plans p ON p.id = k.plan_id
  ), claimed AS (
  INSERT INTO charge_attempts AS a (id, created_at, updated_at, merchant_id, subscription_id,
    period, amount, mint, state, tries, lease_until, lease_owner)
  SELECT gen_random_uuid(), $now!, $now!, due.merchant_id, due.id, due.period, due.amount, due.mint,
         'pending', 1, now() + make_interval(secs => $leaseSeconds!), $owner!
    FROM due
  ON CONFLICT (subscription_id, period) DO UPDATE
     SET state = 'pending', tries = a.tries + 1, lease_until = EXCLUDED.lease_until,
         lease_owner = EXCLUDED.lease_owner, wallet = NULL,
         amount = CASE WHEN a.signature IS NULL THEN EXCLUDED.amount ELSE a.amount END,
         failure_reason = NULL, updated_at = EXCLUDED.updated_at
   WHERE a.state IN ('failed', 'abandoned')
  RETURNING a.*
  )
  SELECT a.id AS "id!", a.merchant_id AS "merchant_id!", a.subscription_id AS "subscription_id!",
         a.period AS "period!", a.amount::text AS "amount!", p.amount::text AS "price!",
         p.meter_name IS NOT NULL AS "metered!",
         a.mint AS "mint!", a.state AS "state!", a.signature, a.transaction,
         a.last_valid_block_height::text AS last_valid_block_height,
         s.status AS "s_status!", s.revoked_at IS NOT NULL AS "s_revoked!",
         s.customer_id AS "s_customer_id!", s.plan_id AS "s_plan_id!",
         s.scheme AS "s_scheme!", s.authorized_amount::text AS "s_authorized_amount!",
         s.charged_amount::text AS "s_charged_amount!", s.created_at AS "s_created_at!",
         c.wallet_address AS "subscriber!", m.wallet_address AS "merchant_wallet!",
         s.current_period_end::text AS "due_at!", (SELECT count(*) FROM candidates)::int AS "walked!"
    FROM claimed a
    JOIN subscriptions s ON s.id = a.subscription_id
    JOIN plans p ON p.id = s.plan_id
    JOIN customers c ON c.id = s.customer_id
    JOIN merchants m ON m.id = a.merchant_id
   ORDER BY s.current_period_end, s.id`;

/**
 * `claimDueAll` for the subscriptions under the token-delegate scheme (a subscription keeps the
 * scheme it was authorised under): at most one charge per wallet and mint, none of those in
 * `busy` (`wallet:mint`) nor of a wallet with a charge open in any instance (its attempt holds
 * the wallet's turn: `wallet`, one probe of `charge_attempts_open_wallet_idx` per candidate),
 * and each attempt claimed holds its wallet's turn. The probe names the wallet alone (only an
 * open attempt has one: `charge_attempts_turn_open`), so no other index can serve it: with the
 * open states in it, a planner that saw few attempts open took the partial index of open
 * attempts and read every one under way again for each candidate. Siblings of one wallet among the
 * candidates are left for later, so it looks further ahead (`candidateLimit`: four times
 * `limit`). A re-armed try whose bytes are kept keeps its amount: it is settled first, for what
 * those bytes pull.
 *
 * Each claimed attempt comes with its wallet's reservation as an upper bound (`r_*`): what the
 * wallet's other live subscriptions in the mint need in all (the wallet's approval row keeps
 * the total and the count, Migration20261207010000: the subscription's own share taken off),
 * the charges of the others in flight (one probe of the turn index; the state tested in the
 * select list, as in `walletReservation`), and the version they are of: one row read by its
 * key, not each sibling's. What all the others need is at least what those created before it
 * need (`walletReservation`'s exact sum, read only when the approval falls short of the bound:
 * `ReservationBound`). Read in the claim's snapshot, it is what a read of its own just before
 * would have seen: the charge is still recorded only while that version is still the wallet's
 * (`recordTries`).
 */
export const claimDueOneAtATime = sql<IClaimDueOneAtATimeQuery>`
  WITH candidates AS (
    SELECT s.id, s.merchant_id, s.plan_id, s.wallet, s.periods_charged + 1 AS period,
           s.current_period_end
      FROM subscriptions s
     WHERE s.status = 'Active' AND s.current_period_end <= $now! AND s.scheme = 'token-delegate'
       AND (s.current_period_end, s.id) > ($afterDue!::timestamptz, $afterId!::uuid)
       AND (s.periods_charged = 0
            OR s.current_period_end + make_interval(secs => (
                 SELECT p.usage_grace_seconds FROM plans p WHERE p.id = s.plan_id)) <= $now!)
       AND COALESCE((SELECT o.state FROM charge_attempts o
                      WHERE o.subscription_id = s.id AND o.period = s.periods_charged + 1), '')
           NOT IN ('pending', 'sent')
       AND NOT (s.wallet || ':' || s.mint = ANY($busy!::text[]))
       AND NOT EXISTS (SELECT 1 FROM charge_attempts w WHERE w.wallet = s.wallet AND w.mint = s.mint)
     ORDER BY s.current_period_end, s.id
     LIMIT $candidateLimit!
     FOR UPDATE SKIP LOCKED
  ), due AS (
    SELECT * FROM (SELECT DISTINCT ON (wallet, mint) * FROM (
        SELECT k.*, p.amount, p.mint FROM candidates k JOIN plans p ON p.id = k.plan_id) j
       ORDER BY wallet, mint, current_period_end, id) one
      ORDER BY current_period_end, id LIMIT $limit!
  ), claimed AS (
  INSERT INTO charge_attempts AS a (id, created_at, updated_at, merchant_id, subscription_id,
    period, amount, mint, state, tries, lease_until, lease_owner, wallet)
  SELECT gen_random_uuid(), $now!, $now!, due.merchant_id, due.id, due.period, due.amount, due.mint,
         'pending', 1, now() + make_interval(secs => $leaseSeconds!), $owner!, due.wallet
    FROM due
  ON CONFLICT (subscription_id, period) DO UPDATE
     SET state = 'pending', tries = a.tries + 1, lease_until = EXCLUDED.lease_until,
         lease_owner = EXCLUDED.lease_owner, wallet = EXCLUDED.wallet,
         amount = CASE WHEN a.signature IS NULL THEN EXCLUDED.amount ELSE a.amount END,
         failure_reason = NULL, updated_at = EXCLUDED.updated_at
   WHERE a.state IN ('failed', 'abandoned')
  RETURNING a.*
  )
  SELECT a.id AS "id!", a.merchant_id AS "merchant_id!", a.subscription_id AS "subscription_id!",
         a.period AS "period!", a.amount::text AS "amount!", p.amount::text AS "price!",
         p.meter_name IS NOT NULL AS "metered!",
         a.mint AS "mint!", a.state AS "state!", a.signature, a.transaction,
         a.last_valid_block_height::text AS last_valid_block_height,
         s.status AS "s_status!", s.revoked_at IS NOT NULL AS "s_revoked!",
         s.customer_id AS "s_customer_id!", s.plan_id AS "s_plan_id!",
         s.scheme AS "s_scheme!", s.authorized_amount::text AS "s_authorized_amount!",
         s.charged_amount::text AS "s_charged_amount!", s.created_at AS "s_created_at!",
         c.wallet_address AS "subscriber!", m.wallet_address AS "merchant_wallet!",
         w."others_need!" AS "r_reserved!", w."in_flight!" AS "r_in_flight!",
         w."siblings!" AS "r_siblings!", w."version!" AS "r_version!",
         s.current_period_end::text AS "due_at!", (SELECT count(*) FROM candidates)::int AS "walked!"
    FROM claimed a
    JOIN subscriptions s ON s.id = a.subscription_id
    JOIN plans p ON p.id = s.plan_id
    JOIN customers c ON c.id = s.customer_id
    JOIN merchants m ON m.id = a.merchant_id
   CROSS JOIN LATERAL (
      SELECT (COALESCE(v.need, 0) - CASE WHEN l.live THEN GREATEST(s.authorized_amount - s.charged_amount, 0) ELSE 0 END)::text AS "others_need!",
             (COALESCE(v.live, 0) - CASE WHEN l.live THEN 1 ELSE 0 END)::int AS "siblings!",
             COALESCE(v.version, 0)::text AS "version!",
             (SELECT count(CASE WHEN ia.subscription_id <> s.id AND (ia.state = 'sent' OR (ia.state = 'pending' AND ia.signature IS NOT NULL)) THEN 1 END)
                FROM charge_attempts ia WHERE ia.wallet = s.wallet AND ia.mint = s.mint)::int AS "in_flight!"
        FROM (SELECT s.scheme = 'token-delegate' AND s.status IN ('Active', 'PastDue') AND s.revoked_at IS NULL AS live) l
        LEFT JOIN wallet_approval_versions v ON v.wallet = s.wallet AND v.mint = s.mint
   ) w
   ORDER BY s.current_period_end, s.id`;

/**
 * `claimDueAll` for one subscription only (a customer's first charge, claimed as it is). Its
 * `busy` is empty unless the claim is one at a time: with one candidate at most, that filter is
 * all `claimDueOneAtATime` would add (DISTINCT ON of one row is that row).
 */
export const claimDueOne = sql<IClaimDueOneQuery>`
  WITH candidates AS (
    SELECT s.id, s.merchant_id, s.periods_charged + 1 AS period, p.amount, p.mint,
           s.current_period_end,
           CASE WHEN s.scheme = 'token-delegate' THEN c.wallet_address END AS wallet
      FROM subscriptions s JOIN plans p ON p.id = s.plan_id
      JOIN customers c ON c.id = s.customer_id
     WHERE s.status = 'Active' AND s.current_period_end <= $now!
       AND (s.periods_charged = 0
            OR s.current_period_end + make_interval(secs => p.usage_grace_seconds) <= $now!)
       AND s.id = $subscriptionId!
       AND NOT EXISTS (
         SELECT 1 FROM charge_attempts o
          WHERE o.subscription_id = s.id AND o.period = s.periods_charged + 1
            AND o.state IN ('pending', 'sent'))
       AND NOT (c.wallet_address || ':' || p.mint = ANY($busy!::text[]))
     ORDER BY s.current_period_end
     LIMIT $limit!
     FOR UPDATE OF s SKIP LOCKED
  ), due AS (
    SELECT * FROM candidates
  ), claimed AS (
  INSERT INTO charge_attempts AS a (id, created_at, updated_at, merchant_id, subscription_id,
    period, amount, mint, state, tries, lease_until, lease_owner, wallet)
  SELECT gen_random_uuid(), $now!, $now!, due.merchant_id, due.id, due.period, due.amount, due.mint,
         'pending', 1, now() + make_interval(secs => $leaseSeconds!), $owner!, due.wallet
    FROM due
  ON CONFLICT (subscription_id, period) DO UPDATE
     SET state = 'pending', tries = a.tries + 1, lease_until = EXCLUDED.lease_until,
         lease_owner = EXCLUDED.lease_owner, wallet = EXCLUDED.wallet,
         amount = CASE WHEN a.signature IS NULL THEN EXCLUDED.amount ELSE a.amount END,
         failure_reason = NULL, updated_at = EXCLUDED.updated_at
   WHERE a.state IN ('failed', 'abandoned')
  RETURNING a.*
  )
  SELECT a.id AS "id!", a.merchant_id AS "merchant_id!", a.subscription_id AS "subscription_id!",
         a.period AS "period!", a.amount::text AS "amount!", p.amount::text AS "price!",
         p.meter_name IS NOT NULL AS "metered!",
         a.mint AS "mint!", a.state AS "state!", a.signature, a.transaction,
         a.last_valid_block_height::text AS last_valid_block_height,
         s.status AS "s_status!", s.revoked_at IS NOT NULL AS "s_revoked!",
         s.customer_id AS "s_customer_id!", s.plan_id AS "s_plan_id!",
         s.scheme AS "s_scheme!", s.authorized_amount::text AS "s_authorized_amount!",
         s.charged_amount::text AS "s_charged_amount!", s.created_at AS "s_created_at!",
         c.wallet_address AS "subscriber!", m.wallet_address AS "merchant_wallet!"
    FROM claimed a
    JOIN subscriptions s ON s.id = a.subscription_id
    JOIN plans p ON p.id = s.plan_id
    JOIN customers c ON c.id = s.customer_id
    JOIN merchants m ON m.id = a.merchant_id`;

/**
 * Takes up attempts whose holder's lease ended, leased to `owner` now (`takeovers` counts
 * them), except those in `inHand`. Each holds its wallet's turn again (`wallet`, token-delegate).
 */
export const resumeStale = sql<IResumeStaleQuery>`
  WITH resumed AS (
    UPDATE charge_attempts SET lease_until = now() + make_interval(secs => $leaseSeconds!),
           lease_owner = $owner!, takeovers = takeovers + 1,
           wallet = (SELECT CASE WHEN s.scheme = 'token-delegate' THEN c.wallet_address END
                       FROM subscriptions s JOIN customers c ON c.id = s.customer_id
                      WHERE s.id = charge_attempts.subscription_id)
     WHERE id IN (
       SELECT id FROM charge_attempts
        WHERE state IN ('pending', 'sent') AND lease_until < now()
          AND NOT (id = ANY($inHand!::uuid[]))
        ORDER BY lease_until
        LIMIT $limit!
        FOR UPDATE SKIP LOCKED)
    RETURNING *
  )
  SELECT a.id AS "id!", a.merchant_id AS "merchant_id!", a.subscription_id AS "subscription_id!",
         a.period AS "period!", a.amount::text AS "amount!", p.amount::text AS "price!",
         p.meter_name IS NOT NULL AS "metered!",
         a.mint AS "mint!", a.state AS "state!", a.signature, a.transaction,
         a.last_valid_block_height::text AS last_valid_block_height,
         s.status AS "s_status!", s.revoked_at IS NOT NULL AS "s_revoked!",
         s.customer_id AS "s_customer_id!", s.plan_id AS "s_plan_id!",
         s.scheme AS "s_scheme!", s.authorized_amount::text AS "s_authorized_amount!",
         s.charged_amount::text AS "s_charged_amount!", s.created_at AS "s_created_at!",
         c.wallet_address AS "subscriber!", m.wallet_address AS "merchant_wallet!"
    FROM resumed a
    JOIN subscriptions s ON s.id = a.subscription_id
    JOIN plans p ON p.id = s.plan_id
    JOIN customers c ON c.id = s.customer_id
    JOIN merchants m ON m.id = a.merchant_id`;

/** Failed attempts whose try's bytes are kept (they may still land), the oldest first. */
export const failedWithBytes = sql<IFailedWithBytesQuery>`
  SELECT a.id AS "id!", a.merchant_id AS "merchant_id!", a.subscription_id AS "subscription_id!",
         a.period AS "period!", a.amount::text AS "amount!", p.amount::text AS "price!",
         p.meter_name IS NOT NULL AS "metered!",
         a.mint AS "mint!", a.state AS "state!", a.signature, a.transaction,
         a.last_valid_block_height::text AS last_valid_block_height,
         s.status AS "s_status!", s.revoked_at IS NOT NULL AS "s_revoked!",
         s.customer_id AS "s_customer_id!", s.plan_id AS "s_plan_id!",
         s.scheme AS "s_scheme!", s.authorized_amount::text AS "s_authorized_amount!",
         s.charged_amount::text AS "s_charged_amount!", s.created_at AS "s_created_at!",
         c.wallet_address AS "subscriber!", m.wallet_address AS "merchant_wallet!"
    FROM charge_attempts a
    JOIN subscriptions s ON s.id = a.subscription_id
    JOIN plans p ON p.id = s.plan_id
    JOIN customers c ON c.id = s.customer_id
    JOIN merchants m ON m.id = a.merchant_id
   WHERE a.state = 'failed' AND a.transaction IS NOT NULL
   ORDER BY a.updated_at LIMIT $limit!`;

/** The claim of due periods (see `ChargeClaims.claimDue`). */
export interface DueClaim {
  /** Domain time: what is due, and the attempts' timestamps. */
  now: Date;
  limit: number;
  /** Only this subscription (a customer's first charge). */
  subscriptionId?: string;
  /**
   * Claim the token-delegate subscriptions too (`claimDueOneAtATime`: at most one charge per
   * wallet and mint, none of those in `busy`, `wallet:mint`), before the program's.
   */
  oneAtATime: boolean;
  busy: string[];
  leaseSeconds: number;
  owner: string;
  /** Where each scheme's walk of the due subscriptions starts; the front when absent. */
  walk?: DueWalk;
}

/**
 * Claims due Active subscriptions and writes (or re-arms) their period's attempt, leased to
 * `owner` (see `ChargeClaims.claimDue` for the rules). Each scheme's due subscriptions are claimed
 * by a statement of their own: a deployment moved from token-delegate to the program holds both
 * until every customer has moved. Each reads subscriptions, plans and customers
 * (`FOR UPDATE OF s SKIP LOCKED`) in the same statement as its writes.
 *
 * They run on their generic plans (`genericPlans`: one transaction, of database work only, so
 * the claims of both schemes commit together and hold their rows until then: milliseconds). Each
 * claim is one statement of five tables, the wallets' reservations and a `LIMIT $n`: PostgreSQL,
 * which cannot see that limit in a generic plan and so estimates it higher, planned it again on
 * every claim (~2 ms, a third of the claim's PostgreSQL time in `npm run bench:engine`), for the
 * same plan (`test/charge-claim-plan.e2e-spec.ts` holds the generic plan's reads).
 */
export async function claimDueRows(db: Db, claim: DueClaim): Promise<AttemptRow[]> {
  // The walk moves only with a committed claim: a transaction run again (a prepared plan gone
  // stale) walks from where the first began, not past rows it never claimed.
  let moved: DueWalk | undefined;
  const rows = await db.transaction(
    (tx) => claimDueIn(tx, { ...claim, walk: (moved = claim.walk?.copy()) }),
    { genericPlans: true },
  );
  if (moved) claim.walk?.adopt(moved);
  return rows;
}

async function claimDueIn(db: SqlTx, claim: DueClaim): Promise<AttemptRow[]> {
  const { now, limit, subscriptionId, oneAtATime, busy, leaseSeconds, owner, walk } = claim;
  // Mint, state and scheme are the service's (text columns: typed `string`).
  if (subscriptionId) {
    const params = { now, subscriptionId, busy: oneAtATime ? busy : [], limit };
    return claimDueOne.run({ ...params, leaseSeconds, owner }, db) as Promise<AttemptRow[]>;
  }
  const delegated = oneAtATime
    ? await walkOn<IClaimDueOneAtATimeResult>(walk, 'token-delegate', limit, async (from, room) => {
        // Siblings of one wallet among the candidates are left for later: look further ahead.
        const candidates = room * 4;
        const params = { now, candidateLimit: candidates, limit: room, leaseSeconds, owner };
        const rows = await claimDueOneAtATime.run(
          {
            ...params,
            busy,
            afterDue: from.due,
            afterId: from.id,
          },
          db,
        );
        return { rows, candidates };
      })
    : [];
  const program =
    delegated.length >= limit
      ? []
      : await walkOn<IClaimDueAllResult>(
          walk,
          'program',
          limit - delegated.length,
          async (from, room) => {
            const rows = await claimDueAll.run(
              { now, limit: room, leaseSeconds, owner, afterDue: from.due, afterId: from.id },
              db,
            );
            return { rows, candidates: room };
          },
        );
  return [
    ...delegated.map(
      ({
        r_reserved,
        r_in_flight,
        r_siblings,
        r_version,
        due_at: _at,
        walked: _walked,
        ...row
      }) => ({
        ...(row as AttemptRow),
        seen: {
          reserved: BigInt(r_reserved),
          upperBound: true,
          inFlight: r_in_flight,
          siblings: r_siblings,
          version: r_version,
        },
      }),
    ),
    ...program.map(({ due_at: _at, walked: _walked, ...row }) => row as AttemptRow),
  ];
}
