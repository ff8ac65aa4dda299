import { Injectable } from '@nestjs/common';
import { sql } from '../database/typed-sql';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import type {
  IClaimKeyQuery,
  IClaimKeyResult,
  ICompleteKeyQuery,
  IFindKeyQuery,
  IFindKeyResult,
  IPurgeExpiredKeysQuery,
  IReleaseKeyQuery,
} from './idempotency.repository.types';

/** A key's request and, once it finished, its response. */
export type KeyRow = IFindKeyResult;

/** A claim to insert, or to take over an expired or abandoned row with. */
export interface KeyClaimRow {
  id: string;
  merchantId: string;
  key: string;
  fingerprint: string;
  owner: string;
  lockedUntil: Date;
  createdAt: Date;
  expiresAt: Date;
}

/** A finished request's response, stored under the claim's fencing token. */
export interface KeyResponseRow {
  id: string;
  owner: string;
  status: number;
  /** The body as sent (JSON text). */
  body: string;
  /** Domain time: the key is no longer locked from then. */
  at: Date;
}

/**
 * Inserts the key, or takes over a row that expired, or one whose holder's lease ended without
 * a response (same fingerprint only). Returns the row's id and owner as they are now: nothing
 * when the key is held or done by another request (the conflict's row was not updated).
 */
const claimKey = sql<IClaimKeyQuery>`
  INSERT INTO idempotency_keys AS k (id, merchant_id, key, fingerprint, owner, locked_until,
    created_at, expires_at)
  VALUES ($id!, $merchantId!, $key!, $fingerprint!, $owner!, $lockedUntil!, $createdAt!,
    $expiresAt!)
  ON CONFLICT (merchant_id, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,
    owner = EXCLUDED.owner, locked_until = EXCLUDED.locked_until, response_status = NULL,
    response_body = NULL, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
  WHERE k.expires_at <= EXCLUDED.created_at
     OR (k.response_status IS NULL AND k.locked_until <= EXCLUDED.created_at
         AND k.fingerprint = EXCLUDED.fingerprint)
  RETURNING k.id, k.owner`;

/** The merchant's key: its request's fingerprint and, once finished, its response. */
const findKey = sql<IFindKeyQuery>`
  SELECT fingerprint, response_status, response_body FROM idempotency_keys
   WHERE merchant_id = $merchantId! AND key = $key!`;

/** Stores the response under the claim's fencing token (`owner`): nothing when taken over. */
const completeKey = sql<ICompleteKeyQuery>`
  UPDATE idempotency_keys SET response_status = $status!, response_body = $body!,
         locked_until = $at!
   WHERE id = $id! AND owner = $owner! RETURNING id`;

/** Deletes the key unless it holds a response or another request took it over. */
const releaseKey = sql<IReleaseKeyQuery>`
  DELETE FROM idempotency_keys WHERE id = $id! AND owner = $owner! AND response_status IS NULL`;

/**
 * Deletes up to `limit` keys expired at `now` (on the `expires_at` index), skipping keys another
 * instance is deleting or a request is taking over, and returns their ids.
 */
const purgeExpiredKeys = sql<IPurgeExpiredKeysQuery>`
  DELETE FROM idempotency_keys WHERE id IN (
    SELECT id FROM idempotency_keys WHERE expires_at <= $now! LIMIT $limit!
       FOR UPDATE SKIP LOCKED)
  RETURNING id`;

/**
 * Every statement on `idempotency_keys`: the table's one owner (issue 22), typed by pgtyped from
 * the migrated schema (`npm run db:types`).
 */
@Injectable()
export class IdempotencyRepository {
  constructor(private readonly db: Db) {}

  /**
   * Inserts the key, or takes over a row that expired, or one whose holder's lease ended
   * without a response (same fingerprint only). @returns the row's id and owner as they are
   * now: another request's owner when the key is held or done.
   */
  async claim(row: KeyClaimRow): Promise<IClaimKeyResult | undefined> {
    const [claimed] = await claimKey.run(row, this.db);
    return claimed;
  }

  async find(merchantId: string, key: string): Promise<KeyRow | undefined> {
    const [row] = await findKey.run({ merchantId, key }, this.db);
    return row;
  }

  /**
   * Stores the response in the caller's transaction, unless another request took the key over.
   * @returns whether it was stored.
   */
  async completeIn(tx: SqlTx, response: KeyResponseRow): Promise<boolean> {
    const done = await completeKey.run(response, tx);
    return done.length > 0;
  }

  /** `completeIn` on its own (autocommit). */
  complete(response: KeyResponseRow): Promise<boolean> {
    return this.completeIn(this.db, response);
  }

  /** Deletes the key unless it holds a response or another request took it over. */
  async release(id: string, owner: string): Promise<void> {
    await releaseKey.run({ id, owner }, this.db);
  }

  /**
   * Deletes up to `limit` keys expired at `now`, skipping those locked by another instance.
   * @returns how many were deleted.
   */
  async purgeExpired(now: Date, limit: number): Promise<number> {
    const deleted = await purgeExpiredKeys.run({ now, limit }, this.db);
    return deleted.length;
  }
}
