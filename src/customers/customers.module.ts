import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { CustomerCreditsRepository } from './customer-credits.repository';
import { CustomerCreditsService } from './customer-credits.service';
import { CustomersController } from './customers.controller';
import { CustomersRepository } from './customers.repository';
import { CustomersService } from './customers.service';

@Module({
  imports: [EventsModule],
  controllers: [CustomersController],
  providers: [
    CustomerCreditsRepository,
    CustomerCreditsService,
    CustomersRepository,
    CustomersService,
  ],
  exports: [CustomerCreditsService, CustomersService],
})
export class CustomersModule {}
