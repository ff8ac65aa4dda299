import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock } from '../common/clock';
import { AuthContext } from '../common/decorators/current-merchant.decorator';
import { NotFoundError, ValidationError } from '../common/errors/domain-error';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { ApiKeyCache } from './api-key-cache';
import { ApiKeysRepository } from './api-keys.repository';
import { LastUsedRecorder } from './last-used-recorder';
import { REVOCATION_CHANNEL } from './revocation-listener';
import { generateApiKey, hashApiKey, looksLikeApiKey } from './secrets';

/** A key as listed: the stored record, with this instance's not-yet-written last use. */
export interface ApiKeyView {
  id: string;
  label: string | null;
  prefix: string;
  lastUsedAt: Date | null;
  createdAt: Date;
}

/**
 * Active keys a merchant may hold at once (docs/authentication.md): enough for a key per
 * environment and service, with room to rotate; the rate limit is per merchant anyway.
 */
export const MAX_ACTIVE_API_KEYS = 20;

/** Issues, lists, revokes and authenticates API keys. */
@Injectable()
export class ApiKeysService {
  constructor(
    private readonly db: Db,
    private readonly keys: ApiKeysRepository,
    private readonly clock: Clock,
    private readonly cache: ApiKeyCache,
    private readonly lastUsed: LastUsedRecorder,
  ) {}

  /**
   * Writes a new key in the caller's transaction (so a merchant and its first key commit
   * together). The secret is returned here and never again.
   */
  async issue(
    tx: SqlTx,
    merchantId: string,
    label: string | null,
  ): Promise<{ view: ApiKeyView; key: string }> {
    const key = generateApiKey();
    const keyHash = hashApiKey(key);
    const view: ApiKeyView = {
      id: randomUUID(),
      label,
      prefix: keyHash.slice(0, 8),
      lastUsedAt: null,
      createdAt: this.clock.now(),
    };
    await this.keys.insert(tx, {
      id: view.id,
      merchantId,
      label,
      keyHash,
      prefix: view.prefix,
      at: view.createdAt,
    });
    return { view, key };
  }

  /**
   * A new key, unless the merchant already has {@link MAX_ACTIVE_API_KEYS} active ones. The
   * merchant's row is locked while counting, so two requests racing for the last place cannot
   * both take it.
   * @throws ValidationError at the cap (revoke a key first).
   */
  async create(
    merchantId: string,
    label: string | null,
  ): Promise<{ view: ApiKeyView; key: string }> {
    return this.db.transaction(async (tx) => {
      const active = await this.keys.countActiveLocked(tx, merchantId);
      if (active >= MAX_ACTIVE_API_KEYS) {
        throw new ValidationError(
          `A merchant has at most ${MAX_ACTIVE_API_KEYS} active API keys; revoke one first`,
        );
      }
      return this.issue(tx, merchantId, label);
    });
  }

  /** Active (non-revoked) keys, newest first. */
  async list(merchantId: string): Promise<ApiKeyView[]> {
    const keys = await this.keys.listActive(merchantId);
    return keys.map((k) => this.view(k));
  }

  /**
   * Revokes a key at once and for good. This instance stops accepting it before the call returns;
   * the others hear of it through NOTIFY, sent in the same transaction as the update.
   * @throws NotFoundError when the key is absent, another merchant's, or already revoked.
   */
  async revoke(merchantId: string, id: string): Promise<void> {
    const now = this.clock.now();
    const hash = await this.db.transaction(async (tx) => {
      const revoked = await this.keys.revoke(tx, merchantId, id, now);
      if (revoked) {
        this.cache.evict(revoked);
        await this.keys.notifyRevoked(tx, REVOCATION_CHANNEL, revoked);
      }
      return revoked;
    });
    if (!hash) throw new NotFoundError('API key');
    this.cache.evict(hash);
  }

  /**
   * The merchant a bearer token acts for, or null when the token is not an active key. A known
   * key is answered from the cache; a database failure propagates (a 5xx, never a 401).
   */
  async authenticate(token: string): Promise<AuthContext | null> {
    if (!looksLikeApiKey(token)) return null;
    const hash = hashApiKey(token);
    let context = this.cache.get(hash);
    if (!context) {
      const epoch = this.cache.begin();
      const row = await this.keys.findActive(hash);
      if (!row) return null;
      context = { apiKeyId: row.id, merchantId: row.merchant_id };
      this.cache.set(hash, context, epoch);
    }
    this.lastUsed.record(context.apiKeyId, this.clock.now());
    return context;
  }

  private view(key: ApiKeyView): ApiKeyView {
    const unflushed = this.lastUsed.unflushed(key.id);
    const stored = key.lastUsedAt;
    const lastUsedAt = unflushed && (!stored || unflushed > stored) ? unflushed : stored;
    return { ...key, lastUsedAt };
  }
}
