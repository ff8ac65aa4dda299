import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { AuthContext } from '../common/decorators/current-merchant.decorator';
import { NotFoundError, ValidationError } from '../common/errors/domain-error';
import { ApiKeyCache } from './api-key-cache';
import { ApiKey } from './entities/api-key.entity';
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
    private readonly em: EntityManager,
    private readonly clock: Clock,
    private readonly cache: ApiKeyCache,
    private readonly lastUsed: LastUsedRecorder,
  ) {}

  /**
   * Adds a new key to the caller's unit of work (so a merchant and its first key commit
   * together). The secret is returned here and never again.
   */
  issue(
    em: EntityManager,
    merchantId: string,
    label: string | null,
  ): { apiKey: ApiKey; key: string } {
    const key = generateApiKey();
    const apiKey = new ApiKey({
      merchant: em.getReference<{ id: string }>('Merchant', merchantId, { wrapped: true }),
      label,
      keyHash: hashApiKey(key),
      now: this.clock.now(),
    });
    em.persist(apiKey);
    return { apiKey, key };
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
    return this.em.fork().transactional(async (em) => {
      await em.execute('SELECT id FROM merchants WHERE id = ? FOR UPDATE', [merchantId]);
      const active = await em.count(ApiKey, { merchant: merchantId, revokedAt: null });
      if (active >= MAX_ACTIVE_API_KEYS) {
        throw new ValidationError(
          `A merchant has at most ${MAX_ACTIVE_API_KEYS} active API keys; revoke one first`,
        );
      }
      const { apiKey, key } = this.issue(em, merchantId, label);
      await em.flush();
      return { view: this.view(apiKey), key };
    });
  }

  /** Active (non-revoked) keys, newest first. */
  async list(merchantId: string): Promise<ApiKeyView[]> {
    const keys = await this.em
      .fork()
      .find(
        ApiKey,
        { merchant: merchantId, revokedAt: null },
        { orderBy: { createdAt: 'DESC', id: 'DESC' } },
      );
    return keys.map((k) => this.view(k));
  }

  /**
   * Revokes a key at once and for good. This instance stops accepting it before the call returns;
   * the others hear of it through NOTIFY, sent in the same transaction as the update.
   * @throws NotFoundError when the key is absent, another merchant's, or already revoked.
   */
  async revoke(merchantId: string, id: string): Promise<void> {
    const now = this.clock.now();
    const hash = await this.em.fork().transactional(async (em) => {
      const ctx: unknown = em.getTransactionContext();
      const rows = await em.getConnection().execute<{ key_hash: string }[]>(
        `UPDATE api_keys SET revoked_at = ?, updated_at = ?
            WHERE id = ? AND merchant_id = ? AND revoked_at IS NULL RETURNING key_hash`,
        [now, now, id, merchantId],
        'all',
        ctx,
      );
      const revoked = rows[0]?.key_hash;
      if (revoked) {
        this.cache.evict(revoked);
        await em
          .getConnection()
          .execute('SELECT pg_notify(?, ?)', [REVOCATION_CHANNEL, revoked], 'all', ctx);
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
      const rows = await this.em
        .getConnection()
        .execute<{ id: string; merchant_id: string }[]>(
          'SELECT id, merchant_id FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL',
          [hash],
        );
      const row = rows[0];
      if (!row) return null;
      context = { apiKeyId: row.id, merchantId: row.merchant_id };
      this.cache.set(hash, context, epoch);
    }
    this.lastUsed.record(context.apiKeyId, this.clock.now());
    return context;
  }

  private view(key: ApiKey): ApiKeyView {
    const unflushed = this.lastUsed.unflushed(key.id);
    const stored = key.lastUsedAt;
    const lastUsedAt = unflushed && (!stored || unflushed > stored) ? unflushed : stored;
    return {
      id: key.id,
      label: key.label,
      prefix: key.prefix,
      lastUsedAt,
      createdAt: key.createdAt,
    };
  }
}
