import { Injectable, OnModuleInit } from '@nestjs/common';
import { Retention } from '../common/background/retention';
import { Clock } from '../common/clock';
import { AppConfig } from '../config/app-config';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';

/**
 * The deliveries' retention: a final delivery (delivered, failed, skipped) is deleted
 * `WEBHOOK_RETENTION_DAYS` after its last change, by the retention job; a pending one never.
 * The event itself is kept (the events API lists it, and it can be redelivered); its `delivery`
 * shows the latest delivery left, or null once every delivery of it was deleted.
 */
@Injectable()
export class WebhookDeliveriesService implements OnModuleInit {
  private readonly retentionMs: number;

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly clock: Clock,
    private readonly retention: Retention,
    config: AppConfig,
  ) {
    this.retentionMs = config.WEBHOOK_RETENTION_DAYS * 86_400_000;
  }

  onModuleInit(): void {
    this.retention.register({
      table: 'webhook_deliveries',
      pruneBatch: (limit) => this.pruneFinished(limit),
    });
  }

  /**
   * Deletes up to `limit` final deliveries whose last change is older than
   * `WEBHOOK_RETENTION_DAYS` (one batch of the retention job). @returns how many were deleted.
   */
  pruneFinished(limit: number): Promise<number> {
    const before = new Date(this.clock.now().getTime() - this.retentionMs);
    return this.deliveries.pruneFinished(before, limit);
  }
}
