import { DynamicModule, Module } from '@nestjs/common';
import { CommonModule } from '../common/common.module';
import { AppConfig } from '../config/app-config';
import { ConfigModule } from '../config/config.module';
import { DatabaseModule } from '../database/database.module';
import { LocalnetModule } from '../dev/localnet.module';
import { MerchantsModule } from '../merchants/merchants.module';

/** The slice of the service the command-line tools need: config, database, merchants. */
@Module({})
export class CliModule {
  static forRoot(config: AppConfig, databaseUrl: string): DynamicModule {
    return {
      module: CliModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(databaseUrl, 2),
        CommonModule.forRoot({
          movableClock: config.isLocalnet,
          runsWorkers: config.runsWorkers,
          shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
        }),
        MerchantsModule,
        // On localnet the CLI takes up the chain's clock, so its rows carry the same domain
        // time as the server's (a moved clock included).
        ...(config.isLocalnet ? [LocalnetModule] : []),
      ],
    };
  }
}
