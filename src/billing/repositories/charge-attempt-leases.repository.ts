import { sql } from '../../database/typed-sql';
import type {
  IAddNetworkFeeQuery,
  IClearExpiredTryQuery,
  IDeferClearingQuery,
  IDeferQuery,
  IHandBackQuery,
  IRecordTriesQuery,
  IRenewLeaseQuery,
  IStandingQuery,
  ITriesThatMayLandQuery,
} from './charge-attempt-leases.repository.types';

/*
 * The statements of `charge_attempts` (billing's table) that move an open attempt's lease or
 * its try without settling it, or read whether it is still held: `ChargeAttemptsRepository` runs them (this file holds them apart
 * only for its length). Typed by pgtyped from the migrated schema (`npm run db:types`).
 *
 * Each is fenced on the attempt's lease holder (`lease_owner = $owner`), as every write of an
 * open attempt is (see charge-attempts.repository.ts).
 */

/**
 * Clears an expired try, unless the attempt was settled, has another try or another holder
 * meanwhile.
 */
export const clearExpiredTry = sql<IClearExpiredTryQuery>`
  UPDATE charge_attempts SET state = 'pending', signature = NULL, transaction = NULL,
         last_valid_block_height = NULL, updated_at = $now!
   WHERE id = $id! AND state IN ('pending', 'sent') AND signature = $signature!
     AND lease_owner = $owner! RETURNING id`;

/**
 * Leaves the attempt for a while, compare-and-set on the try the caller read and its holder.
 * With nothing recorded it is no longer in hand: it stops holding its wallet's turn (`wallet`
 * cleared; a resume writes it again), so the wallet's charges at other merchants go on.
 */
export const defer = sql<IDeferQuery>`
  UPDATE charge_attempts SET last_error = $message!, updated_at = $now!,
         lease_until = now() + make_interval(secs => $retrySeconds!),
         wallet = CASE WHEN signature IS NULL THEN NULL ELSE wallet END
   WHERE id = $id! AND state IN ('pending', 'sent') AND signature IS NOT DISTINCT FROM $signature
     AND lease_owner = $owner!
   RETURNING id`;

/** `defer`, forgetting the try the caller read. */
export const deferClearing = sql<IDeferClearingQuery>`
  UPDATE charge_attempts SET last_error = $message!, updated_at = $now!,
         lease_until = now() + make_interval(secs => $retrySeconds!)
         , state = 'pending', signature = NULL, transaction = NULL, last_valid_block_height = NULL,
         wallet = NULL
   WHERE id = $id! AND state IN ('pending', 'sent') AND signature IS NOT DISTINCT FROM $signature
     AND lease_owner = $owner!
   RETURNING id`;

/** Adds a network fee the service key paid for an open try its `owner` holds. */
export const addNetworkFee = sql<IAddNetworkFeeQuery>`
  UPDATE charge_attempts SET network_fee = network_fee + $fee!::bigint, updated_at = $now!
   WHERE id = $id! AND state IN ('pending', 'sent') AND signature = $signature!
     AND lease_owner = $owner!`;

/** Extends the lease of an open attempt, compare-and-set on its try and its holder. */
export const renewLease = sql<IRenewLeaseQuery>`
  UPDATE charge_attempts SET lease_until = now() + make_interval(secs => $seconds!)
   WHERE id = $id! AND state IN ('pending', 'sent') AND signature = $signature!
     AND lease_owner = $owner!
   RETURNING id`;

/**
 * Hands back open attempts `owner` holds (it is shutting down): the lease ends now, held by no
 * one, so any instance resumes them at once (`resumeStale`: a recorded try is settled by its
 * signature first, never signed again while it may land). It ends a millisecond in the past:
 * the column keeps milliseconds, and a lease that ended in the same millisecond as a resume's
 * `now()` would not count as ended yet. Every later write of the old holder is refused by its
 * lease fence.
 */
export const handBack = sql<IHandBackQuery>`
  UPDATE charge_attempts SET lease_until = now() - interval '1 millisecond', lease_owner = NULL,
         updated_at = $now!
   WHERE id = ANY($ids!::uuid[]) AND state IN ('pending', 'sent') AND lease_owner = $owner!
  RETURNING id`;

/**
 * Where an attempt whose try was not recorded stands (the flags never null: forced): `moved`,
 * whether its subscription left `scheme` (its customer moved it meanwhile); `held`, whether
 * `owner` still holds its lease.
 */
export const standing = sql<IStandingQuery>`
  SELECT s.status, s.scheme <> $scheme! AS "moved!", s.revoked_at IS NOT NULL AS "revoked!",
         a.state = 'pending' AND a.signature IS NULL AS "open!",
         a.lease_owner IS NOT DISTINCT FROM $owner! AS "held!"
    FROM subscriptions s JOIN charge_attempts a ON a.subscription_id = s.id
   WHERE s.id = $subscriptionId! AND a.id = $id!`;

/**
 * Records signed tries (several at once: the tries signed at the same moment), each a
 * compare-and-set on an attempt with no signature that its `owner` still holds, while its
 * subscription is still Active and under the scheme the try was built for (the subscriptions'
 * rows locked `FOR SHARE`, in id order: a customer's move to the program, which takes the same
 * rows `FOR UPDATE`, commits either before, and the try is not recorded, or after, and the move
 * finds it in flight and waits).
 *
 * A try with a `version` (token-delegate, a wallet with other live subscriptions in the mint)
 * is recorded only while the wallet's subscriptions in the mint are as its charge saw them: no
 * charge of theirs in flight, and none settled, started or stopped. That is the version of the
 * wallet's approval its reading returned (`walletReservation`, wallet-reservations.repository.ts;
 * `wallet_approval_versions`, moved by triggers with every such change), still the wallet's:
 * one row read by its key (wallet-reservation-statements.spec.ts holds the two reads alike).
 * Two tries of one wallet in one statement are each checked against what was committed before
 * it, as two statements running at once would be: both were judged on readings with neither in
 * flight, and each one's account read came before either was recorded, so before either could
 * be sent. Rows are found by their ids as arrays (`= ANY(ARRAY(…))`, index scans): joined to the
 * function's rows alone, the planner, which takes a function for 100 rows, read whole tables.
 * The versions are read once per try, in a materialized CTE (`checked`): as a condition of the
 * update, the check was a filter of the tries' scan, which the planner rescanned for every open
 * attempt.
 */
export const recordTries = sql<IRecordTriesQuery>`
  WITH t AS (
    SELECT * FROM jsonb_to_recordset($tries!::jsonb) AS t(id uuid, subscription_id uuid,
           signature text, transaction text, last_valid_block_height bigint, amount bigint,
           lease_seconds int, owner text, now timestamptz, wallet text, mint text,
           version bigint, scheme text)
  ), checked AS MATERIALIZED (
    SELECT t.id, t.version IS NULL OR COALESCE((SELECT v.version FROM wallet_approval_versions v
                                                 WHERE v.wallet = t.wallet AND v.mint = t.mint), 0) = t.version AS unchanged
      FROM t
  ), s AS (
    SELECT s.id, s.scheme FROM subscriptions s
     WHERE s.id = ANY(ARRAY(SELECT t.subscription_id FROM t)) AND s.status = 'Active'
       AND s.revoked_at IS NULL
     ORDER BY s.id FOR SHARE
  )
  UPDATE charge_attempts a SET state = 'sent', signature = t.signature,
         transaction = t.transaction, last_valid_block_height = t.last_valid_block_height,
         amount = t.amount, lease_until = now() + make_interval(secs => t.lease_seconds),
         lease_owner = t.owner, updated_at = t.now
    FROM t JOIN checked k ON k.id = t.id JOIN s ON s.id = t.subscription_id
   WHERE a.id = ANY(ARRAY(SELECT t.id FROM t)) AND a.id = t.id AND a.state = 'pending'
     AND a.signature IS NULL AND a.lease_owner = t.owner AND k.unchanged AND s.scheme = t.scheme
   RETURNING a.id`;

/**
 * The subscriptions among `ids` with a try whose bytes may still land: recorded and not settled
 * (`pending` or `sent` with a signature), or failed with its bytes kept (`failedWithBytes`).
 */
export const triesThatMayLand = sql<ITriesThatMayLandQuery>`
  SELECT DISTINCT a.subscription_id FROM charge_attempts a
   WHERE a.subscription_id = ANY($ids!::uuid[]) AND a.signature IS NOT NULL
     AND (a.state IN ('pending', 'sent') OR (a.state = 'failed' AND a.transaction IS NOT NULL))`;
