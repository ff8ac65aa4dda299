import { DynamicModule, Global, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import {
  BACKGROUND_OPTIONS,
  BackgroundOptions,
  BackgroundWork,
} from './background/background-work';
import { Retention } from './background/retention';
import { Clock, OffsetClock, SystemClock } from './clock';

/** What the cross-cutting providers need to know of the process (given by its config). */
export interface CommonOptions extends BackgroundOptions {
  /** A domain clock that can be moved (localnet's dev clock), else the system's. */
  readonly movableClock: boolean;
}

/**
 * Cross-cutting providers: the domain clock (movable on localnet), the background-work switch
 * (`@nestjs/schedule` registered once, here) and the retention job the owners of pruned tables
 * register with. Told what it needs by its caller: `common` reads no
 * config of its own (the floor's rule, test/structure.spec.ts).
 */
@Global()
@Module({})
export class CommonModule {
  static forRoot(options: CommonOptions): DynamicModule {
    return {
      module: CommonModule,
      imports: [ScheduleModule.forRoot()],
      providers: [
        {
          provide: BACKGROUND_OPTIONS,
          useValue: {
            runsWorkers: options.runsWorkers,
            shutdownGraceMs: options.shutdownGraceMs,
          },
        },
        BackgroundWork,
        Retention,
        { provide: Clock, useValue: options.movableClock ? new OffsetClock() : new SystemClock() },
      ],
      exports: [Clock, BackgroundWork, Retention],
    };
  }
}
