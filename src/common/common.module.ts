import { Global, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { Clock, OffsetClock, SystemClock } from './clock';

/** Cross-cutting providers: the domain clock (movable on localnet). */
@Global()
@Module({
  providers: [
    {
      provide: Clock,
      inject: [AppConfig],
      useFactory: (config: AppConfig) =>
        config.isLocalnet ? new OffsetClock() : new SystemClock(),
    },
  ],
  exports: [Clock],
})
export class CommonModule {}
