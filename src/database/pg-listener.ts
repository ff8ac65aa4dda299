import { MikroORM } from '@mikro-orm/postgresql';
import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { Client } from 'pg';

/** What a subscriber of a PostgreSQL notification channel is told. */
export interface ChannelHandlers {
  /** A `NOTIFY channel, payload` from any instance, delivered after its transaction committed. */
  onMessage(payload: string): void;
  /** The channel is listening (again): notifications from now on arrive. */
  onUp?(): void;
  /** The channel dropped: notifications may be missed until `onUp`. */
  onDown?(): void;
}

/** How often the listening connection proves it is alive; a failure counts as a drop. */
const HEARTBEAT_MS = 5_000;
const CHANNEL_NAME = /^[a-z_][a-z0-9_]*$/;

/**
 * One dedicated PostgreSQL connection per instance that LISTENs on every channel a module
 * subscribes to (API-key revocations, webhook deliveries). It reconnects with backoff, and a
 * heartbeat catches a connection that died without an event (NAT, proxy). Subscribers learn when
 * the channel is down, because whatever they cache or wait for may then be missed.
 */
@Injectable()
export class PgListener implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(PgListener.name);
  private readonly channels = new Map<string, ChannelHandlers[]>();
  /** The client being connected or listening; events from any other (stale) client are ignored. */
  private current?: Client;
  private listeningNow = false;
  private stopped = false;
  private retryTimer?: NodeJS.Timeout;
  private retryDelayMs = 250;
  private heartbeat?: NodeJS.Timeout;

  constructor(private readonly orm: MikroORM) {}

  /** Subscribes to a channel. Call it while modules initialise, before the app bootstraps. */
  subscribe(channel: string, handlers: ChannelHandlers): void {
    if (!CHANNEL_NAME.test(channel)) throw new Error(`Invalid channel name: ${channel}`);
    if (this.current) throw new Error('PgListener: subscribe before the application bootstraps');
    this.channels.set(channel, [...(this.channels.get(channel) ?? []), handlers]);
  }

  get listening(): boolean {
    return this.listeningNow;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.channels.size > 0) await this.connect();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.heartbeat);
    const client = this.current;
    this.current = undefined;
    this.listeningNow = false;
    this.each((h) => h.onDown?.());
    await client?.end().catch(() => undefined);
  }

  private each(call: (handlers: ChannelHandlers) => void): void {
    for (const list of this.channels.values()) list.forEach(call);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new Client({
      connectionString: this.orm.config.get('clientUrl'),
      keepAlive: true,
      connectionTimeoutMillis: 5_000,
      query_timeout: 5_000,
    });
    client.on('notification', (message) => {
      for (const handlers of this.channels.get(message.channel) ?? [])
        handlers.onMessage(message.payload ?? '');
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    this.current = client;
    try {
      await client.connect();
      for (const channel of this.channels.keys()) await client.query(`LISTEN ${channel}`);
      if (this.stopped || this.current !== client) {
        await client.end();
        return;
      }
      this.listeningNow = true;
      this.retryDelayMs = 250;
      this.startHeartbeat(client);
      this.each((h) => h.onUp?.());
    } catch (error) {
      this.lost(client, error);
    }
  }

  private startHeartbeat(client: Client): void {
    clearInterval(this.heartbeat);
    this.heartbeat = setInterval(() => {
      client.query('SELECT 1').catch((error: unknown) => this.lost(client, error));
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private lost(client: Client, error?: unknown): void {
    if (client !== this.current) return; // a stale client; it was already replaced
    this.current = undefined;
    this.listeningNow = false;
    clearInterval(this.heartbeat);
    void client.end().catch(() => undefined);
    this.each((h) => h.onDown?.());
    if (this.stopped || this.retryTimer) return;
    this.logger.warn({ err: error }, 'Notification channel lost; reconnecting');
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, this.retryDelayMs);
    this.retryTimer.unref();
    this.retryDelayMs = Math.min(this.retryDelayMs * 2, 5000);
  }
}
