import { Injectable } from '@nestjs/common';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';

/** A key's request and, once it finished, its response. */
export interface KeyRow {
  fingerprint: string;
  response_status: number | null;
  response_body: string | null;
}

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

/** Every statement on `idempotency_keys`: the table's one owner (issue 22). */
@Injectable()
export class IdempotencyRepository {
  constructor(private readonly db: Db) {}

  /**
   * Inserts the key, or takes over a row that expired, or one whose holder's lease ended
   * without a response (same fingerprint only). @returns the row's id and owner as they are
   * now: another request's owner when the key is held or done.
   */
  async claim(row: KeyClaimRow): Promise<{ id: string; owner: string } | undefined> {
    const rows = await this.db.execute<{ id: string; owner: string }[]>(
      `INSERT INTO idempotency_keys AS k (id, merchant_id, key, fingerprint, owner, locked_until,
         created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (merchant_id, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint,
         owner = EXCLUDED.owner, locked_until = EXCLUDED.locked_until, response_status = NULL,
         response_body = NULL, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
       WHERE k.expires_at <= EXCLUDED.created_at
          OR (k.response_status IS NULL AND k.locked_until <= EXCLUDED.created_at
              AND k.fingerprint = EXCLUDED.fingerprint)
       RETURNING k.id, k.owner`,
      [
        row.id,
        row.merchantId,
        row.key,
        row.fingerprint,
        row.owner,
        row.lockedUntil,
        row.createdAt,
        row.expiresAt,
      ],
    );
    return rows[0];
  }

  async find(merchantId: string, key: string): Promise<KeyRow | undefined> {
    const [row] = await this.db.execute<KeyRow[]>(
      `SELECT fingerprint, response_status, response_body FROM idempotency_keys
          WHERE merchant_id = ? AND key = ?`,
      [merchantId, key],
    );
    return row;
  }

  /**
   * Stores the response in the caller's transaction, unless another request took the key over.
   * @returns whether it was stored.
   */
  async completeIn(tx: SqlTx, response: KeyResponseRow): Promise<boolean> {
    const done = await tx.execute<{ id: string }[]>(
      `UPDATE idempotency_keys SET response_status = ?, response_body = ?, locked_until = ?
        WHERE id = ? AND owner = ? RETURNING id`,
      [response.status, response.body, response.at, response.id, response.owner],
    );
    return done.length > 0;
  }

  /** `completeIn` on its own (autocommit). */
  complete(response: KeyResponseRow): Promise<boolean> {
    return this.completeIn(this.db, response);
  }

  /** Deletes the key unless it holds a response or another request took it over. */
  async release(id: string, owner: string): Promise<void> {
    await this.db.execute(
      'DELETE FROM idempotency_keys WHERE id = ? AND owner = ? AND response_status IS NULL',
      [id, owner],
    );
  }

  /** Deletes up to `limit` keys expired at `now`. @returns how many were deleted. */
  async purgeExpired(now: Date, limit: number): Promise<number> {
    const deleted = await this.db.execute<{ id: string }[]>(
      `DELETE FROM idempotency_keys WHERE id IN (
         SELECT id FROM idempotency_keys WHERE expires_at <= ? LIMIT ?)
       RETURNING id`,
      [now, limit],
    );
    return deleted.length;
  }
}
