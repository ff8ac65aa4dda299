import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { AuthModule } from '../auth/auth.module';
import { BillingModule } from '../billing/billing.module';
import { LocalnetModule } from './localnet.module';
import { DevController } from './dev.controller';
import { DevKeyGuard } from './dev-key.guard';
import { DevService } from './dev.service';
import { ServiceKeyFunding } from './service-key-funding';

/**
 * The dev endpoints (DESIGN section 9), registered on localnet only: elsewhere `/api/dev/*` is an
 * unknown route. They live apart from `localnet/` so the emulator never imports the domain
 * modules the dev endpoints will drive (`POST /api/dev/billing/run`).
 */
@Module({})
export class DevModule {
  static forRoot(config: AppConfig): DynamicModule {
    if (!config.isLocalnet) return { module: DevModule };
    return {
      module: DevModule,
      imports: [LocalnetModule, BillingModule, AuthModule],
      controllers: [DevController],
      providers: [DevService, ServiceKeyFunding, DevKeyGuard],
    };
  }
}
