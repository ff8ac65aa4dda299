import { Injectable, OnModuleInit } from '@nestjs/common';
import { Clock } from '../common/clock';
import { secondsSince } from '../metrics/age';
import { Metrics } from '../metrics/metrics';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';

/**
 * The webhook backlog, read when Prometheus scrapes: deliveries not made yet (any merchant's)
 * and the age of the oldest, by the domain clock (`billing_delivery_backlog{channel="webhook"}`,
 * `billing_delivery_oldest_pending_age_seconds`). On every `ROLE`: the backlog is the
 * database's, whoever delivers it.
 */
@Injectable()
export class WebhookMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: Metrics,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.metrics.addSource('webhook_backlog', async () => {
      const { pending, oldest } = await this.deliveries.backlog();
      this.metrics.setDeliveryBacklog('webhook', pending, secondsSince(oldest, this.clock.now()));
    });
  }
}
