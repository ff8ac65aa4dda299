import { Module } from '@nestjs/common';
import { CustomersModule } from '../customers/customers.module';
import { EventsModule } from '../events/events.module';
import { MerchantsModule } from '../merchants/merchants.module';
import { PaymentsModule } from '../payments/payments.module';
import { X402Controller } from './x402.controller';
import { X402Reconciler } from './x402-reconciler';
import { X402Repository } from './x402.repository';
import { X402Service } from './x402.service';

/**
 * Pay per request (docs/x402.md): the x402 v2 facilitator for Solana's `exact` scheme, the
 * owner of `x402_settlements` and `x402_fee_days`, and the reconciler that concludes
 * settlements by signature.
 */
@Module({
  imports: [CustomersModule, EventsModule, MerchantsModule, PaymentsModule],
  controllers: [X402Controller],
  providers: [X402Reconciler, X402Repository, X402Service],
  exports: [X402Service],
})
export class X402Module {}
