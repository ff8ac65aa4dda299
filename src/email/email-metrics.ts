import { Injectable, OnModuleInit } from '@nestjs/common';
import { Metrics } from '../metrics/metrics';
import { EmailOutboxService } from './email-outbox.service';

/**
 * The e-mail backlog, read when Prometheus scrapes (`billing_delivery_backlog{channel="email"}`,
 * `billing_delivery_oldest_pending_age_seconds`). On every `ROLE`: the backlog is the
 * database's, whoever sends it.
 */
@Injectable()
export class EmailMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: Metrics,
    private readonly outbox: EmailOutboxService,
  ) {}

  onModuleInit(): void {
    this.metrics.addSource('email_backlog', async () => {
      const { pending, oldestAgeSeconds } = await this.outbox.backlog();
      this.metrics.setDeliveryBacklog('email', pending, oldestAgeSeconds);
    });
  }
}
