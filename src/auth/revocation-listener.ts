import { Injectable, OnModuleInit } from '@nestjs/common';
import { PgListener } from '../database/pg-listener';
import { ApiKeyCache } from './api-key-cache';

/** PostgreSQL channel on which revoked key hashes are announced to every instance. */
export const REVOCATION_CHANNEL = 'api_key_revoked';

/**
 * Keeps this instance's key cache honest: hears revocations made by any instance and evicts
 * them. The cache only serves while the channel is listening; when it drops, the cache is
 * disabled and cleared, and re-enabled once listening again.
 */
@Injectable()
export class RevocationListener implements OnModuleInit {
  constructor(
    private readonly listener: PgListener,
    private readonly cache: ApiKeyCache,
  ) {}

  onModuleInit(): void {
    this.listener.subscribe(REVOCATION_CHANNEL, {
      onMessage: (hash) => {
        if (hash) this.cache.evict(hash);
      },
      onUp: () => this.cache.enable(),
      onDown: () => this.cache.disable(),
    });
  }
}
