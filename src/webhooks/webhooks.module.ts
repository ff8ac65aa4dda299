import { Global, Module } from '@nestjs/common';
import { lookup } from 'node:dns';
import { EVENT_FAN_OUT } from '../events/event-fan-out';
import { WebhookDeliveryWorker } from './delivery.worker';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhookMetrics } from './webhook-metrics';
import { WebhookDeliveriesService } from './webhook-deliveries.service';
import { DNS_LOOKUP, WebhookSender } from './webhook-sender';

/**
 * Webhook delivery: the worker that claims queued deliveries from the events outbox, signs them
 * and POSTs them with retries, and the URL rules it sends by. It learns of changes only through
 * the outbox; no domain module imports it. It prunes delivered, failed and skipped deliveries
 * after `WEBHOOK_RETENTION_DAYS` (the retention job). It provides the outbox's fan-out (`EVENT_FAN_OUT`:
 * the deliveries written in each event's statement), the one thing it exports, globally, so that
 * the events module gets it without importing delivery.
 */
@Global()
@Module({
  providers: [
    WebhookDeliveriesRepository,
    WebhookDeliveriesService,
    { provide: EVENT_FAN_OUT, useExisting: WebhookDeliveriesRepository },
    WebhookSender,
    WebhookDeliveryWorker,
    WebhookMetrics,
    { provide: DNS_LOOKUP, useValue: lookup },
  ],
  exports: [EVENT_FAN_OUT],
})
export class WebhooksModule {}
