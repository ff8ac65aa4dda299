import { MikroORM } from '@mikro-orm/postgresql';
import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { Client } from 'pg';
import { ApiKeyCache } from './api-key-cache';

/** PostgreSQL channel on which revoked key hashes are announced to every instance. */
export const REVOCATION_CHANNEL = 'api_key_revoked';

/**
 * Keeps this instance's key cache honest: LISTENs for revocations made by any instance and evicts
 * them. The cache only serves while the channel is listening; on a dropped connection it is
 * disabled and cleared, then re-enabled once listening again.
 */
@Injectable()
export class RevocationListener implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(RevocationListener.name);
  private client?: Client;
  private stopped = false;
  private retryTimer?: NodeJS.Timeout;
  private retryDelayMs = 250;

  constructor(
    private readonly orm: MikroORM,
    private readonly cache: ApiKeyCache,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.connect();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.cache.disable();
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.orm.config.get('clientUrl') });
    client.on('notification', (message) => {
      if (message.channel === REVOCATION_CHANNEL && message.payload)
        this.cache.evict(message.payload);
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${REVOCATION_CHANNEL}`);
      this.client = client;
      this.retryDelayMs = 250;
      this.cache.enable();
    } catch (error) {
      await client.end().catch(() => undefined);
      this.lost(client, error);
    }
  }

  private lost(client: Client, error?: unknown): void {
    if (this.client && this.client !== client) return; // a stale client; the live one is fine
    this.cache.disable();
    if (this.client === client) this.client = undefined;
    if (this.stopped || this.retryTimer) return;
    this.logger.warn(
      { err: error },
      'Revocation channel lost; API keys are checked in the database until it is back',
    );
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.stopped) void this.connect();
    }, this.retryDelayMs);
    this.retryTimer.unref();
    this.retryDelayMs = Math.min(this.retryDelayMs * 2, 5000);
  }
}
