import { BeforeApplicationShutdown, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { ApiKeysRepository } from './api-keys.repository';

/**
 * Records each key's latest authenticated use without a write per request: uses are buffered in
 * memory and written in one statement every `API_KEY_LAST_USED_FLUSH_MS` (1 s by default), so a
 * use is visible in the database within about a second.
 */
@Injectable()
export class LastUsedRecorder implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger(LastUsedRecorder.name);
  private pending = new Map<string, Date>();
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;

  constructor(
    private readonly keys: ApiKeysRepository,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.flush(), this.config.API_KEY_LAST_USED_FLUSH_MS);
    this.timer.unref();
  }

  /** Before the ORM closes (its own shutdown hook), so the last uses are written. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    // A flush already under way does not carry uses recorded after it began: go until empty.
    for (let attempt = 0; attempt < 5 && (this.flushing || this.pending.size > 0); attempt++) {
      await this.flushing;
      await this.flush();
    }
  }

  record(apiKeyId: string, at: Date): void {
    this.pending.set(apiKeyId, at);
  }

  /** A use not written yet, so this instance never shows an older value than it knows. */
  unflushed(apiKeyId: string): Date | undefined {
    return this.pending.get(apiKeyId);
  }

  /** Writes the buffered uses; never moves `lastUsedAt` backwards. */
  async flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const rows = [...batch].map(([id, at]) => ({ id, at: at.toISOString() }));
    this.flushing = this.keys
      .recordLastUses(rows)
      .catch((error: unknown) => {
        this.logger.warn({ err: error }, 'Could not record API key use; will retry');
        for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
      })
      .finally(() => {
        this.flushing = undefined;
      });
    return this.flushing;
  }
}
