import { sql } from '@pgtyped/runtime';
import type {
  IAddNetworkFeeQuery,
  IClearExpiredTryQuery,
  IDeferClearingQuery,
  IDeferQuery,
  IHandBackQuery,
  IRenewLeaseQuery,
  IStandingQuery,
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

/** Leaves the attempt for a while, compare-and-set on the try the caller read and its holder. */
export const defer = sql<IDeferQuery>`
  UPDATE charge_attempts SET last_error = $message!, updated_at = $now!,
         lease_until = now() + make_interval(secs => $retrySeconds!)
   WHERE id = $id! AND state IN ('pending', 'sent') AND signature IS NOT DISTINCT FROM $signature
     AND lease_owner = $owner!
   RETURNING id`;

/** `defer`, forgetting the try the caller read. */
export const deferClearing = sql<IDeferClearingQuery>`
  UPDATE charge_attempts SET last_error = $message!, updated_at = $now!,
         lease_until = now() + make_interval(secs => $retrySeconds!)
         , state = 'pending', signature = NULL, transaction = NULL, last_valid_block_height = NULL
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
 * Where an attempt whose try was not recorded stands (the flags never null: forced): `held`,
 * whether `owner` still holds its lease.
 */
export const standing = sql<IStandingQuery>`
  SELECT s.status, s.revoked_at IS NOT NULL AS "revoked!",
         a.state = 'pending' AND a.signature IS NULL AS "open!",
         a.lease_owner IS NOT DISTINCT FROM $owner! AS "held!"
    FROM subscriptions s JOIN charge_attempts a ON a.subscription_id = s.id
   WHERE s.id = $subscriptionId! AND a.id = $id!`;
