import { Injectable } from '@nestjs/common';
import { sql } from '../../database/typed-sql';
import type { SubscriptionScheme } from '../../config/app-config';
import { Db } from '../../database/db';
import type { BatchStatement } from '../../database/group-commit';
import type { SqlTx } from '../../database/pg-transaction';
import {
  type AttemptRow,
  claimDueRows,
  type DueClaim,
  failedWithBytes,
  resumeStale,
} from './charge-attempt-claims.repository';
import {
  addNetworkFee,
  recordTries,
  clearExpiredTry,
  defer,
  deferClearing,
  handBack,
  renewLease,
  standing,
  triesThatMayLand,
} from './charge-attempt-leases.repository';
import type {
  IAbandonQuery,
  IChargeSignaturesQuery,
  IForgetFailedTryQuery,
  IMarkCompletedQuery,
  IMarkFailedLandedQuery,
  IMarkFailedQuery,
  IMarkSucceededFromFailedQuery,
  IMarkSucceededManyQuery,
  INetworkFeesQuery,
  INetworkFeesResult,
} from './charge-attempts.repository.types';
import type { WalletSeen } from './wallet-reservations.repository';

export type { AttemptRow } from './charge-attempt-claims.repository';

export type { DueClaim } from './charge-attempt-claims.repository';
export { DueWalk } from './due-walk';

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
  /** The scheme the try was built under: recorded only while the subscription is still under it. */
  scheme: SubscriptionScheme;
  /** Token-delegate: recorded only while the wallet's other charges are as the charge saw them. */
  unchanged?: WalletSeen;
}

/** What the network fees the service key paid for one merchant's charges add up to. */
export type NetworkFeeRow = INetworkFeesResult;

/*
 * The statements below are typed by pgtyped from the migrated schema (`npm run db:types`); those
 * that return attempts with what their charge needs are in charge-attempt-claims.repository.ts,
 * those that move an open attempt's lease or try without settling it in
 * charge-attempt-leases.repository.ts. A write whose text depended on an argument (a guard or a
 * SET list) is two statements, each written out whole; the method picks one.
 *
 * Every write of an open attempt is fenced on its lease holder (`lease_owner = $owner`) as well
 * as on the state and try its caller read: an instance whose lease was taken over (it stalled
 * past it) or that handed it back (it is shutting down) writes nothing more to it, so a holder
 * that resumed the attempt is never undone by the one it replaced.
 */

/**
 * The network fees the service key paid, per merchant, the merchants who cost most first (a
 * count and a sum over a group that HAVING keeps: never null, forced).
 */
const networkFees = sql<INetworkFeesQuery>`
  SELECT a.merchant_id, m.name, count(*) FILTER (WHERE a.network_fee > 0)::text AS "landed!",
         sum(a.network_fee)::text AS "lamports!"
    FROM charge_attempts a JOIN merchants m ON m.id = a.merchant_id
   GROUP BY a.merchant_id, m.name
  HAVING sum(a.network_fee) > 0
   ORDER BY sum(a.network_fee) DESC, a.merchant_id`;

/**
 * Settles tries that landed (several at once: the successes settled together), each a
 * compare-and-set on its signature, from an open state its `owner` holds; found by their ids as
 * an array (an index scan, whatever the planner takes the function's rows for).
 */
const markSucceededMany = sql<IMarkSucceededManyQuery>`
  WITH t AS (
    SELECT * FROM jsonb_to_recordset($tries!::jsonb) AS t(id uuid, signature text, network_fee bigint)
  )
  UPDATE charge_attempts a SET state = 'succeeded', lease_until = NULL, last_error = NULL,
         failure_reason = NULL, network_fee = a.network_fee + t.network_fee, updated_at = $now!
    FROM t
   WHERE a.id = ANY(ARRAY(SELECT t.id FROM t)) AND a.id = t.id AND a.state IN ('pending', 'sent')
     AND a.signature = t.signature AND a.lease_owner = $owner! RETURNING a.id`;

/**
 * `markSucceededMany` of one attempt from `failed`: a try given up whose bytes landed after all
 * (a failed attempt is held by no one: no lease fence).
 */
const markSucceededFromFailed = sql<IMarkSucceededFromFailedQuery>`
  UPDATE charge_attempts SET state = 'succeeded', lease_until = NULL, last_error = NULL,
         failure_reason = NULL, network_fee = network_fee + $networkFee!::bigint, updated_at = $now!
   WHERE id = $id! AND state = 'failed'
     AND signature = $signature! RETURNING id`;

/**
 * A final failure of the try `tried` (null: nothing was signed), from an open state its
 * `owner` holds.
 */
const markFailed = sql<IMarkFailedQuery>`
  UPDATE charge_attempts SET state = 'failed', failure_reason = $reason!, last_error = $message!,
         lease_until = NULL, updated_at = $now!, network_fee = network_fee + $networkFee!::bigint
   WHERE id = $id! AND state IN ('pending', 'sent') AND signature IS NOT DISTINCT FROM $tried
     AND lease_owner = $owner!
   RETURNING id`;

/** `markFailed` of a try that landed and failed: it can never land again, and is not kept. */
const markFailedLanded = sql<IMarkFailedLandedQuery>`
  UPDATE charge_attempts SET state = 'failed', failure_reason = $reason!, last_error = $message!,
         lease_until = NULL, updated_at = $now!, network_fee = network_fee + $networkFee!::bigint
         , signature = NULL, transaction = NULL, last_valid_block_height = NULL
   WHERE id = $id! AND state IN ('pending', 'sent') AND signature IS NOT DISTINCT FROM $tried
     AND lease_owner = $owner!
   RETURNING id`;

/** Abandons a pending attempt with nothing recorded that `owner` holds, for a reason. */
const markCompleted = sql<IMarkCompletedQuery>`
  UPDATE charge_attempts SET state = 'abandoned', failure_reason = $reason!, lease_until = NULL,
         updated_at = $now!
   WHERE id = $id! AND state = 'pending' AND signature IS NULL AND lease_owner = $owner!
  RETURNING id`;

/** Abandons a pending attempt with nothing recorded that `owner` holds. */
const abandon = sql<IAbandonQuery>`
  UPDATE charge_attempts SET state = 'abandoned', lease_until = NULL, updated_at = $now!
   WHERE id = $id! AND state = 'pending' AND signature IS NULL AND lease_owner = $owner!
  RETURNING id`;

/** Lets go of a failed attempt's try, if it is still that try. */
const forgetFailedTry = sql<IForgetFailedTryQuery>`
  UPDATE charge_attempts SET signature = NULL, transaction = NULL,
         last_valid_block_height = NULL, updated_at = $now!
   WHERE id = $id! AND state = 'failed' AND signature = $signature!`;

/** Which of these signatures are charges' tries (a match is never null: forced). */
const chargeSignatures = sql<IChargeSignaturesQuery>`
  SELECT signature AS "signature!" FROM charge_attempts WHERE signature = ANY($signatures!)`;

/**
 * The network fees the service key paid, per merchant (`charge_attempts.network_fee`, with the
 * merchant's name: a read of `merchants` in the same statement), the merchants who cost most
 * first. A function of its own, for the operator's command (`serviceKeySpend`).
 */
export function networkFeesByMerchant(ex: SqlTx): Promise<NetworkFeeRow[]> {
  return networkFees.run(undefined, ex);
}

/**
 * Every statement on `charge_attempts`: the table's one owner (issue 22). An attempt moves only
 * from the state its caller read (compare-and-set): each write that can race answers whether it
 * won.
 */
@Injectable()
export class ChargeAttemptsRepository {
  /** The tries being recorded at the moment, one statement for all (`recordTry`). */
  private readonly tries: BatchStatement<RecordedTry, boolean>;

  constructor(private readonly db: Db) {
    this.tries = db.batchStatement((ex, tries) => this.writeTries(ex, tries));
  }

  /**
   * Claims due Active subscriptions and writes (or re-arms) their period's attempt, leased to
   * `owner` (`claimDueRows`; see `ChargeClaims.claimDue` for the rules).
   */
  claimDue(claim: DueClaim): Promise<AttemptRow[]> {
    return claimDueRows(this.db, claim);
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
    return resumeStale.run({ leaseSeconds, owner, inHand, limit }, this.db) as Promise<
      AttemptRow[]
    >;
  }

  /**
   * Clears an expired try (it can never land) so that a new one may be signed, unless another
   * instance has settled the attempt, recorded a try of its own or taken it over meanwhile.
   * @returns whether it cleared it.
   */
  async clearExpiredTry(
    t: { id: string; signature: string; owner: string },
    now: Date,
  ): Promise<boolean> {
    return (await clearExpiredTry.run({ ...t, now }, this.db)).length > 0;
  }

  /**
   * Records a signed try before it is sent: compare-and-set on an attempt with no signature
   * that `owner` still holds, while the subscription is still Active (under its row lock, `FOR
   * SHARE` on `subscriptions` in the same statement, so a pause or cancel that commits first
   * stops the charge), and, under the token-delegate scheme, while the wallet's other charges
   * are as the charge saw them. The tries recorded at the same moment go in one statement
   * (`recordTries`: one round trip and one commit for all), each on its own conditions.
   * @returns whether it recorded it.
   */
  recordTry(t: RecordedTry): Promise<boolean> {
    return this.tries.run(t);
  }

  /** `recordTry` of each of `tries`, in one statement: whether each was recorded. */
  private async writeTries(ex: SqlTx, tries: RecordedTry[]): Promise<boolean[]> {
    const rows = tries.map((t) => ({
      id: t.id,
      subscription_id: t.subscriptionId,
      signature: t.signature,
      transaction: t.transaction,
      last_valid_block_height: t.lastValidBlockHeight,
      amount: t.amount,
      lease_seconds: t.leaseSeconds,
      owner: t.owner,
      now: t.now.toISOString(),
      wallet: t.unchanged?.wallet ?? null,
      mint: t.unchanged?.mint ?? null,
      version: t.unchanged?.seen.version ?? null,
      scheme: t.scheme,
    }));
    const recorded = await recordTries.run({ tries: JSON.stringify(rows) }, ex);
    const ids = new Set(recorded.map((row) => row.id));
    return tries.map((t) => ids.has(t.id));
  }

  /**
   * Where an attempt whose try was not recorded stands: its subscription's status and whether
   * it left `scheme` (a read of `subscriptions`, joined), whether the attempt is still open with
   * nothing recorded, and whether `owner` still holds it.
   */
  async standing(
    attempt: { subscriptionId: string; id: string; scheme: SubscriptionScheme },
    owner: string,
  ): Promise<
    { status: string; moved: boolean; revoked: boolean; open: boolean; held: boolean } | undefined
  > {
    const [now] = await standing.run({ ...attempt, owner }, this.db);
    return now;
  }

  /** See `triesThatMayLand`: read in the caller's transaction (a move, under its row locks). */
  async triesThatMayLand(tx: SqlTx, subscriptionIds: string[]): Promise<string[]> {
    const rows = await triesThatMayLand.run({ ids: subscriptionIds }, tx);
    return rows.map((row) => row.subscription_id);
  }

  /**
   * A try given up as failed whose bytes landed after all: the money moved. Compare-and-set on
   * its signature, from `failed` (a failed attempt is held by no one: no lease fence).
   * @returns whether it won (false: another instance settled it).
   */
  async markSucceededFromFailed(
    tx: SqlTx,
    s: { id: string; signature: string; networkFee: bigint; now: Date },
  ): Promise<boolean> {
    const params = { ...s, networkFee: s.networkFee.toString() };
    return (await markSucceededFromFailed.run(params, tx)).length > 0;
  }

  /**
   * The money moved: only the try that landed settles its attempt (compare-and-set on its
   * signature, from an open state `owner` holds), for several attempts in one statement (the
   * successes settled together). @returns the ids of those it won (one it did not: another
   * instance settled it, or holds it now).
   */
  async markSucceededMany(
    tx: SqlTx,
    tries: readonly { id: string; signature: string; networkFee: bigint }[],
    owner: string,
    now: Date,
  ): Promise<Set<string>> {
    const rows = tries.map((t) => ({
      id: t.id,
      signature: t.signature,
      network_fee: t.networkFee.toString(),
    }));
    const won = await markSucceededMany.run({ tries: JSON.stringify(rows), owner, now }, tx);
    return new Set(won.map((row) => row.id));
  }

  /**
   * A final failure of the try `tried` (null: nothing was signed), from an open state `owner`
   * holds. `landed`: the transaction landed and failed, so it can never land again and is not
   * kept. @returns whether it won.
   */
  async markFailed(
    tx: SqlTx,
    f: {
      id: string;
      owner: string;
      tried: string | null;
      reason: string;
      message: string;
      networkFee: bigint;
      landed: boolean;
      now: Date;
    },
  ): Promise<boolean> {
    const params = { ...f, networkFee: f.networkFee.toString() };
    const won = await (f.landed ? markFailedLanded : markFailed).run(params, tx);
    return won.length > 0;
  }

  /**
   * Abandons a pending attempt with nothing recorded that `owner` holds, for `reason` (its
   * authorised term used up), in the caller's transaction. @returns whether it won.
   */
  async markCompleted(
    tx: SqlTx,
    a: { id: string; owner: string; reason: string; now: Date },
  ): Promise<boolean> {
    const won = await markCompleted.run(a, tx);
    return won.length > 0;
  }

  /**
   * Abandons a pending attempt with nothing recorded that `owner` holds (its subscription
   * stopped being Active). @returns whether it won.
   */
  async abandon(id: string, owner: string, now: Date): Promise<boolean> {
    const won = await abandon.run({ now, id, owner }, this.db);
    return won.length > 0;
  }

  /**
   * Leaves the attempt for `retrySeconds`, compare-and-set on the try the caller read and its
   * holder; `clear` forgets that try (see `ChargeSettlement.defer`). @returns whether it wrote.
   */
  async defer(d: {
    id: string;
    owner: string;
    signature: string | null;
    message: string;
    retrySeconds: number;
    clear: boolean;
    now: Date;
  }): Promise<boolean> {
    const rows = await (d.clear ? deferClearing : defer).run(d, this.db);
    return rows.length > 0;
  }

  /** Adds a network fee the service key paid for the open try `signature` `owner` holds. */
  async addNetworkFee(
    a: { id: string; owner: string; signature: string; fee: bigint },
    now: Date,
  ): Promise<void> {
    await addNetworkFee.run({ ...a, fee: a.fee.toString(), now }, this.db);
  }

  /**
   * Hands back the open attempts of `ids` that `owner` holds: their leases end now, held by no
   * one, so any instance resumes them at once; every later write of `owner` to them is refused.
   * @returns the ids handed back.
   */
  async handBack(ids: readonly string[], owner: string, now: Date): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await handBack.run({ ids: [...ids], owner, now }, this.db);
    return rows.map((row) => row.id);
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
    const rows = await renewLease.run({ seconds, id, signature, owner }, this.db);
    return rows.length > 0;
  }

  /** Failed attempts whose try's bytes are kept (they may still land), the oldest first. */
  failedWithBytes(limit: number): Promise<AttemptRow[]> {
    return failedWithBytes.run({ limit }, this.db) as Promise<AttemptRow[]>;
  }

  /** Lets go of a failed attempt's try (it can never move money), if it is still that try. */
  async forgetFailedTry(id: string, signature: string, now: Date): Promise<void> {
    await forgetFailedTry.run({ now, id, signature }, this.db);
  }

  /** Which of these signatures are charges' tries (recorded before they were sent). */
  async chargeSignatures(signatures: string[]): Promise<Set<string>> {
    const rows = await chargeSignatures.run({ signatures }, this.db);
    return new Set(rows.map((r) => r.signature));
  }
}
