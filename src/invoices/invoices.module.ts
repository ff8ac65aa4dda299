import { Module } from '@nestjs/common';
import { CustomersModule } from '../customers/customers.module';
import { EmailModule } from '../email/email.module';
import { EventsModule } from '../events/events.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { MerchantsModule } from '../merchants/merchants.module';
import { PaymentsModule } from '../payments/payments.module';
import { InvoiceCreditsService } from './invoice-credits.service';
import { InvoicePaymentsService } from './invoice-payments.service';
import { InvoicesController } from './invoices.controller';
import { InvoicesRepository } from './invoices.repository';
import { InvoiceViewsRepository } from './invoice-views.repository';
import { InvoicesService } from './invoices.service';

@Module({
  imports: [
    CustomersModule,
    EmailModule,
    EventsModule,
    IdempotencyModule,
    MerchantsModule,
    PaymentsModule,
  ],
  controllers: [InvoicesController],
  providers: [
    InvoiceCreditsService,
    InvoicesRepository,
    InvoiceViewsRepository,
    InvoicesService,
    InvoicePaymentsService,
  ],
  exports: [InvoiceCreditsService, InvoicesService, InvoicePaymentsService],
})
export class InvoicesModule {}
