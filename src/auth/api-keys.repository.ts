import { Injectable } from '@nestjs/common';
import { sql } from '../database/typed-sql';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import type {
  ICountActiveKeysQuery,
  IFindActiveKeyQuery,
  IFindActiveKeyResult,
  IInsertApiKeyQuery,
  IListActiveKeysQuery,
  ILockMerchantQuery,
  INotifyRevokedQuery,
  IRecordLastUsesQuery,
  IRevokeKeyQuery,
} from './api-keys.repository.types';

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
export type ActiveKeyRow = IFindActiveKeyResult;

/** A key's latest authenticated use, as `LastUsedRecorder` buffers it. */
export interface LastUseRow {
  id: string;
  /** ISO 8601. */
  at: string;
}

/** A new key, active and never used. */
const insertApiKey = sql<IInsertApiKeyQuery>`
  INSERT INTO api_keys (id, merchant_id, label, key_hash, prefix, last_used_at, revoked_at,
    created_at, updated_at)
  VALUES ($id!, $merchantId!, $label, $keyHash!, $prefix!, NULL, NULL, $at!, $at!)`;

/**
 * Locks the merchant's row (`FOR UPDATE`) until the transaction ends. Reads `merchants`: auth
 * sits below the merchants module and cannot ask it.
 */
const lockMerchant = sql<ILockMerchantQuery>`
  SELECT id FROM merchants WHERE id = $merchantId! FOR UPDATE`;

/** How many active (non-revoked) keys the merchant has. */
const countActiveKeys = sql<ICountActiveKeysQuery>`
  SELECT count(*)::int AS "count!" FROM api_keys
   WHERE merchant_id = $merchantId! AND revoked_at IS NULL`;

/** The merchant's active keys, newest first (timestamps as the API writes them). */
const listActiveKeys = sql<IListActiveKeysQuery>`
  SELECT id, label, prefix, api_time(last_used_at) AS last_used_at,
         api_time(created_at) AS "created_at!"
    FROM api_keys
   WHERE merchant_id = $merchantId! AND revoked_at IS NULL
   ORDER BY created_at DESC, id DESC`;

/** Revokes an active key of the merchant, returning its hash (nothing when none was). */
const revokeKey = sql<IRevokeKeyQuery>`
  UPDATE api_keys SET revoked_at = $at!, updated_at = $at!
   WHERE id = $id! AND merchant_id = $merchantId! AND revoked_at IS NULL RETURNING key_hash`;

/** Sends `hash` on `channel` once the transaction commits. */
const notifyRevoked = sql<INotifyRevokedQuery>`SELECT pg_notify($channel!, $hash!)`;

/** The active key this hash belongs to. */
const findActiveKey = sql<IFindActiveKeyQuery>`
  SELECT id, merchant_id FROM api_keys WHERE key_hash = $keyHash! AND revoked_at IS NULL`;

/** Writes the uses (a JSON array of `LastUseRow`); never moves `last_used_at` backwards. */
const recordLastUses = sql<IRecordLastUsesQuery>`
  UPDATE api_keys AS k SET last_used_at = GREATEST(k.last_used_at, v.at)
    FROM json_to_recordset($uses!::json) AS v(id uuid, at timestamptz)
   WHERE k.id = v.id`;

/**
 * Every statement on `api_keys`: the table's one owner (issue 22), typed by pgtyped from the
 * migrated schema (`npm run db:types`).
 */
@Injectable()
export class ApiKeysRepository {
  constructor(private readonly db: Db) {}

  async insert(tx: SqlTx, row: NewApiKeyRow): Promise<void> {
    await insertApiKey.run(row, tx);
  }

  /**
   * The merchant's active keys, counted with the merchant's row locked (`FOR UPDATE`) until the
   * transaction ends, so two transactions racing for the last place cannot both take it. Reads
   * (and locks) `merchants`: auth sits below the merchants module and cannot ask it.
   */
  async countActiveLocked(tx: SqlTx, merchantId: string): Promise<number> {
    await lockMerchant.run({ merchantId }, tx);
    const [row] = await countActiveKeys.run({ merchantId }, tx);
    return row.count;
  }

  /** Active (non-revoked) keys, newest first. */
  async listActive(merchantId: string): Promise<ApiKeyRow[]> {
    const rows = await listActiveKeys.run({ merchantId }, this.db);
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
    const [row] = await revokeKey.run({ merchantId, id, at }, tx);
    return row?.key_hash;
  }

  /** Tells every instance (on `channel`, once the transaction commits) that `hash` is revoked. */
  async notifyRevoked(tx: SqlTx, channel: string, hash: string): Promise<void> {
    await notifyRevoked.run({ channel, hash }, tx);
  }

  async findActive(keyHash: string): Promise<ActiveKeyRow | undefined> {
    const [row] = await findActiveKey.run({ keyHash }, this.db);
    return row;
  }

  /** Writes the uses in one statement; never moves `last_used_at` backwards. */
  async recordLastUses(uses: readonly LastUseRow[]): Promise<void> {
    await recordLastUses.run({ uses: JSON.stringify(uses) }, this.db);
  }
}
