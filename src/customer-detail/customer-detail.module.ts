import { Module } from '@nestjs/common';
import { CustomersModule } from '../customers/customers.module';
import { InvoicesModule } from '../invoices/invoices.module';
import { SubscriptionsModule } from '../subscriptions/subscriptions.module';
import { CustomerDetailController } from './customer-detail.controller';
import { CustomerDetailService } from './customer-detail.service';

/** `GET /api/customers/:id`: the read side above customers, invoices and subscriptions. */
@Module({
  imports: [CustomersModule, InvoicesModule, SubscriptionsModule],
  controllers: [CustomerDetailController],
  providers: [CustomerDetailService],
})
export class CustomerDetailModule {}
