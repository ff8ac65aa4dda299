import { Module } from '@nestjs/common';
import { lookup } from 'node:dns';
import { WebhookDeliveryWorker } from './delivery.worker';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';
import { DNS_LOOKUP, WebhookSender } from './webhook-sender';

/**
 * Events and webhooks: the transactional outbox (`EventsService.record`, called by the modules
 * whose changes emit events), the events API, and the delivery worker with its signed POSTs.
 */
@Module({
  controllers: [EventsController],
  providers: [
    EventsService,
    WebhookSender,
    WebhookDeliveryWorker,
    { provide: DNS_LOOKUP, useValue: lookup },
  ],
  exports: [EventsService],
})
export class WebhooksModule {}
