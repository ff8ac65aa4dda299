import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { UsageController } from './usage.controller';
import { UsageRepository } from './usage.repository';
import { UsageService } from './usage.service';

/**
 * Metered usage (docs/usage.md): ingestion, the periods' close by the charge engine
 * (`UsageService.chargeOf`), the running total, and the owner of `usage_events` and
 * `usage_periods`.
 */
@Module({
  imports: [EventsModule, IdempotencyModule],
  controllers: [UsageController],
  providers: [UsageRepository, UsageService],
  exports: [UsageService],
})
export class UsageModule {}
