import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { DevController } from './dev.controller';
import { DevService } from './dev.service';
import { LocalnetRpcClient } from './localnet-rpc.client';

/**
 * The dev endpoints, registered on localnet only: elsewhere `/api/dev/*` is an unknown route.
 * The chain itself is not started here: `main.ts` starts it before the app (or `npm run localnet`
 * runs it for several instances).
 */
@Module({})
export class LocalnetModule {
  static forRoot(config: AppConfig): DynamicModule {
    if (!config.isLocalnet) return { module: LocalnetModule };
    return {
      module: LocalnetModule,
      controllers: [DevController],
      providers: [LocalnetRpcClient, DevService],
    };
  }
}
