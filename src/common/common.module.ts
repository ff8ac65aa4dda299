import { Global, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { AppConfig } from '../config/app-config';
import { BackgroundWork } from './background/background-work';
import { Clock, OffsetClock, SystemClock } from './clock';

/**
 * Cross-cutting providers: the domain clock (movable on localnet) and the background-work switch
 * (`@nestjs/schedule` registered once, here).
 */
@Global()
@Module({
  imports: [ScheduleModule.forRoot()],
  providers: [
    BackgroundWork,
    {
      provide: Clock,
      inject: [AppConfig],
      useFactory: (config: AppConfig) =>
        config.isLocalnet ? new OffsetClock() : new SystemClock(),
    },
  ],
  exports: [Clock, BackgroundWork],
})
export class CommonModule {}
