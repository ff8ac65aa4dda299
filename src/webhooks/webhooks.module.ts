import { Module } from '@nestjs/common';
import { lookup } from 'node:dns';
import { WebhookDeliveryWorker } from './delivery.worker';
import { DNS_LOOKUP, WebhookSender } from './webhook-sender';

/**
 * Webhook delivery: the worker that claims queued deliveries from the events outbox, signs them
 * and POSTs them with retries, and the URL rules it sends by. It learns of changes only through
 * the outbox; no domain module imports it.
 */
@Module({
  providers: [WebhookSender, WebhookDeliveryWorker, { provide: DNS_LOOKUP, useValue: lookup }],
})
export class WebhooksModule {}
