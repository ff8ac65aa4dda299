import { DynamicModule, Injectable, Module, OnModuleInit } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { LoggerModule } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import { ApiKeyGuard } from './auth/api-key.guard';
import { AuthModule } from './auth/auth.module';
import { BillingModule } from './billing/billing.module';
import { CheckoutModule } from './checkout/checkout.module';
import { PortalModule } from './portal/portal.module';
import { CommonModule } from './common/common.module';
import { AllExceptionsFilter } from './common/filters/all-exceptions.filter';
import { createRootLogger, loggerModuleParams, ROOT_LOGGER } from './common/logging';
import { UndeclaredInputGuard } from './common/pipes/undeclared-input.guard';
import { AppValidationPipe } from './common/pipes/validation.pipe';
import { RateLimitGuard } from './common/rate-limit.guard';
import { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { CustomerDetailModule } from './customer-detail/customer-detail.module';
import { CustomersModule } from './customers/customers.module';
import { DatabaseModule } from './database/database.module';
import { DevModule } from './dev/dev.module';
import { EmailModule } from './email/email.module';
import { EventsModule } from './events/events.module';
import { HealthModule } from './health/health.module';
import { IdempotencyModule } from './idempotency/idempotency.module';
import { InvoicesModule } from './invoices/invoices.module';
import { MerchantsModule } from './merchants/merchants.module';
import { Metrics } from './metrics/metrics';
import { MetricsModule } from './metrics/metrics.module';
import { PaymentsModule } from './payments/payments.module';
import { RefundsModule } from './refunds/refunds.module';
import { UsageModule } from './usage/usage.module';
import { X402Module } from './x402/x402.module';
import { DocumentsModule } from './documents/documents.module';
import { CreditNotesModule } from './credit-notes/credit-notes.module';
import { PlansModule } from './plans/plans.module';
import { SettingsModule } from './settings/settings.module';
import { SubscriptionsModule } from './subscriptions/subscriptions.module';
import { RpcTransport } from './solana/rpc-transport';
import { SolanaModule } from './solana/solana.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import { TokenBucketStorage } from './common/rate-limit.storage';

export interface AppModuleOptions {
  /** Where log lines go (default: stdout, written asynchronously). Tests capture them. */
  logDestination?: DestinationStream;
}

/**
 * Every JSON-RPC request counted in the metrics (`solana_rpc_*`), by method and outcome: the
 * chain layer's transport reports to the metrics here, where both are known (neither imports
 * the other).
 */
@Injectable()
export class RpcMetrics implements OnModuleInit {
  constructor(
    private readonly transport: RpcTransport,
    private readonly metrics: Metrics,
  ) {}

  onModuleInit(): void {
    this.transport.observe(this.metrics.recordRpcRequest);
  }
}

/** The whole service, built from a validated config and a database URL. */
@Module({})
export class AppModule {
  static forRoot(
    config: AppConfig,
    databaseUrl: string,
    options: AppModuleOptions = {},
  ): DynamicModule {
    const logger = createRootLogger(config.LOG_LEVEL, options.logDestination);
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggerModule.forRoot(loggerModuleParams(logger)),
        DatabaseModule.forRoot(databaseUrl, config.DATABASE_POOL_SIZE),
        ThrottlerModule.forRoot({
          throttlers: [{ ttl: 60_000, limit: config.RATE_LIMIT_PER_MINUTE }],
          storage: new TokenBucketStorage(),
        }),
        CommonModule.forRoot({
          movableClock: config.isLocalnet,
          runsWorkers: config.runsWorkers,
          shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
        }),
        MetricsModule,
        AuthModule,
        IdempotencyModule,
        MerchantsModule,
        CustomersModule,
        PlansModule,
        InvoicesModule,
        SubscriptionsModule,
        PaymentsModule,
        RefundsModule,
        UsageModule,
        X402Module,
        DocumentsModule,
        CreditNotesModule,
        BillingModule,
        CheckoutModule,
        PortalModule,
        CustomerDetailModule,
        SettingsModule,
        EventsModule,
        WebhooksModule,
        EmailModule,
        SolanaModule,
        DevModule.forRoot(config),
        HealthModule,
      ],
      providers: [
        { provide: ROOT_LOGGER, useValue: logger },
        RpcMetrics,
        // Guards run in this order: authenticate, rate-limit per key, refuse undeclared input.
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        { provide: APP_GUARD, useClass: RateLimitGuard },
        { provide: APP_GUARD, useClass: UndeclaredInputGuard },
        { provide: APP_PIPE, useClass: AppValidationPipe },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
      ],
    };
  }
}
