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

/** How often the listening connection proves it is alive; a failure disables the cache. */
const HEARTBEAT_MS = 5_000;

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
  private heartbeat?: NodeJS.Timeout;

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
    clearInterval(this.heartbeat);
    this.cache.disable();
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new Client({
      connectionString: this.orm.config.get('clientUrl'),
      keepAlive: true,
      connectionTimeoutMillis: 5_000,
      query_timeout: 5_000,
    });
    client.on('notification', (message) => {
      if (message.channel === REVOCATION_CHANNEL && message.payload)
        this.cache.evict(message.payload);
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${REVOCATION_CHANNEL}`);
      if (this.stopped) {
        await client.end();
        return;
      }
      this.client = client;
      this.retryDelayMs = 250;
      this.cache.enable();
      this.startHeartbeat(client);
    } catch (error) {
      await client.end().catch(() => undefined);
      this.lost(client, error);
    }
  }

  /** A dropped connection may raise no event (NAT, proxy): ask it a question now and then. */
  private startHeartbeat(client: Client): void {
    clearInterval(this.heartbeat);
    this.heartbeat = setInterval(() => {
      client.query('SELECT 1').catch((error: unknown) => {
        void client.end().catch(() => undefined);
        this.lost(client, error);
      });
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private lost(client: Client, error?: unknown): void {
    if (this.client && this.client !== client) return; // a stale client; the live one is fine
    this.cache.disable();
    if (this.client === client) {
      this.client = undefined;
      clearInterval(this.heartbeat);
    }
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
