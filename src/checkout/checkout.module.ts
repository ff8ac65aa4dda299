import { Module } from '@nestjs/common';
import { BillingModule } from '../billing/billing.module';
import { CheckoutController } from './checkout.controller';
import { CheckoutService } from './checkout.service';

/** The public checkout API (no API key): views and Solana Pay transaction requests. */
@Module({
  imports: [BillingModule],
  controllers: [CheckoutController],
  providers: [CheckoutService],
})
export class CheckoutModule {}
