import { Injectable } from '@nestjs/common';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { isoTimestamp } from '../database/sql';

/** A key as it is stored (the secret's hash only). */
export interface NewApiKeyRow {
  id: string;
  merchantId: string;
  label: string | null;
  keyHash: string;
  prefix: string;
  /** Domain time: created and updated. */
  at: Date;
}

/** A key as listed. */
export interface ApiKeyRow {
  id: string;
  label: string | null;
  prefix: string;
  lastUsedAt: Date | null;
  createdAt: Date;
}

/** The key an active hash belongs to. */
export interface ActiveKeyRow {
  id: string;
  merchant_id: string;
}

/** A key's latest authenticated use, as `LastUsedRecorder` buffers it. */
export interface LastUseRow {
  id: string;
  /** ISO 8601. */
  at: string;
}

/** Every statement on `api_keys`: the table's one owner (issue 22). */
@Injectable()
export class ApiKeysRepository {
  constructor(private readonly db: Db) {}

  async insert(tx: SqlTx, row: NewApiKeyRow): Promise<void> {
    await tx.execute(
      `INSERT INTO api_keys (id, merchant_id, label, key_hash, prefix, last_used_at, revoked_at,
         created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, NULL, NULL, ?, ?)`,
      [row.id, row.merchantId, row.label, row.keyHash, row.prefix, row.at, row.at],
    );
  }

  /**
   * The merchant's active keys, counted with the merchant's row locked (`FOR UPDATE`) until the
   * transaction ends, so two transactions racing for the last place cannot both take it. Reads
   * (and locks) `merchants`: auth sits below the merchants module and cannot ask it.
   */
  async countActiveLocked(tx: SqlTx, merchantId: string): Promise<number> {
    await tx.execute('SELECT id FROM merchants WHERE id = ? FOR UPDATE', [merchantId]);
    const rows = await tx.execute<{ count: number }[]>(
      'SELECT count(*)::int AS count FROM api_keys WHERE merchant_id = ? AND revoked_at IS NULL',
      [merchantId],
    );
    return rows[0].count;
  }

  /** Active (non-revoked) keys, newest first. */
  async listActive(merchantId: string): Promise<ApiKeyRow[]> {
    const rows = await this.db.execute<
      {
        id: string;
        label: string | null;
        prefix: string;
        last_used_at: string | null;
        created_at: string;
      }[]
    >(
      `SELECT id, label, prefix, ${isoTimestamp('last_used_at')}, ${isoTimestamp('created_at')}
         FROM api_keys
        WHERE merchant_id = ? AND revoked_at IS NULL
        ORDER BY created_at DESC, id DESC`,
      [merchantId],
    );
    return rows.map((row) => ({
      id: row.id,
      label: row.label,
      prefix: row.prefix,
      lastUsedAt: row.last_used_at === null ? null : new Date(row.last_used_at),
      createdAt: new Date(row.created_at),
    }));
  }

  /** Revokes an active key of the merchant. @returns its hash, or undefined when none was. */
  async revoke(tx: SqlTx, merchantId: string, id: string, at: Date): Promise<string | undefined> {
    const rows = await tx.execute<{ key_hash: string }[]>(
      `UPDATE api_keys SET revoked_at = ?, updated_at = ?
          WHERE id = ? AND merchant_id = ? AND revoked_at IS NULL RETURNING key_hash`,
      [at, at, id, merchantId],
    );
    return rows[0]?.key_hash;
  }

  /** Tells every instance (on `channel`, once the transaction commits) that `hash` is revoked. */
  async notifyRevoked(tx: SqlTx, channel: string, hash: string): Promise<void> {
    await tx.execute('SELECT pg_notify(?, ?)', [channel, hash]);
  }

  async findActive(keyHash: string): Promise<ActiveKeyRow | undefined> {
    const rows = await this.db.execute<ActiveKeyRow[]>(
      'SELECT id, merchant_id FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL',
      [keyHash],
    );
    return rows[0];
  }

  /** Writes the uses in one statement; never moves `last_used_at` backwards. */
  async recordLastUses(uses: readonly LastUseRow[]): Promise<void> {
    await this.db.execute(
      `UPDATE api_keys AS k SET last_used_at = GREATEST(k.last_used_at, v.at)
         FROM json_to_recordset(?::json) AS v(id uuid, at timestamptz)
        WHERE k.id = v.id`,
      [JSON.stringify(uses)],
    );
  }
}
