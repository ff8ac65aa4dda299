import { Module } from '@nestjs/common';
import { CustomersModule } from '../customers/customers.module';
import { EmailModule } from '../email/email.module';
import { EventsModule } from '../events/events.module';
import { MerchantsModule } from '../merchants/merchants.module';
import { InvoicesController } from './invoices.controller';
import { InvoicesService } from './invoices.service';

@Module({
  imports: [CustomersModule, EmailModule, EventsModule, MerchantsModule],
  controllers: [InvoicesController],
  providers: [InvoicesService],
  exports: [InvoicesService],
})
export class InvoicesModule {}
