import { Module } from '@nestjs/common';
import { EventsController } from './events.controller';
import { EventsRepository } from './events.repository';
import { EventsService } from './events.service';

/**
 * Events: the catalog, the transactional outbox (`EventsService.record`, called by every module
 * whose changes emit events, inside the change's own transaction) and the events API. Domain
 * modules depend on this module only; delivery (`webhooks/`) provides the outbox's fan-out
 * (`EVENT_FAN_OUT`: the deliveries written with each event) and reads the outbox's queue.
 */
@Module({
  controllers: [EventsController],
  providers: [EventsRepository, EventsService],
  exports: [EventsService],
})
export class EventsModule {}
