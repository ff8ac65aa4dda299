import { Module } from '@nestjs/common';
import { CustomersModule } from '../customers/customers.module';
import { EventsModule } from '../events/events.module';
import { SubscriptionsController } from './subscriptions.controller';
import { SubscriptionMovesRepository } from './subscription-moves.repository';
import { SubscriptionSignaturesRepository } from './subscription-signatures.repository';
import { SubscriptionsRepository } from './subscriptions.repository';
import { SubscriptionsService } from './subscriptions.service';

@Module({
  imports: [CustomersModule, EventsModule],
  controllers: [SubscriptionsController],
  providers: [
    SubscriptionsRepository,
    SubscriptionMovesRepository,
    SubscriptionSignaturesRepository,
    SubscriptionsService,
  ],
  exports: [SubscriptionsService],
})
export class SubscriptionsModule {}
