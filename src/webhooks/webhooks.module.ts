import { Module } from '@nestjs/common';
import { WebhookDeliveryWorker } from './delivery.worker';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';
import { WebhookSender } from './webhook-sender';

/**
 * Events and webhooks: the transactional outbox (`EventsService.record`, called by the modules
 * whose changes emit events), the events API, and the delivery worker with its signed POSTs.
 */
@Module({
  controllers: [EventsController],
  providers: [EventsService, WebhookSender, WebhookDeliveryWorker],
  exports: [EventsService],
})
export class WebhooksModule {}
