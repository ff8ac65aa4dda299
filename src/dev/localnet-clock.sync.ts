import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Clock, OffsetClock } from '../common/clock';
import { LocalnetRpcClient } from './localnet-rpc.client';

/** How often an instance takes up the chain's clock. */
const CLOCK_SYNC_MS = 2000;

/**
 * The service clock follows the localnet chain's: taken up at start (the chain's clock may have
 * been moved before) and every few seconds, so instances sharing a chain agree after another one
 * handled a `clock/advance`, and the merchant CLI writes rows with the same domain time as the
 * server. A sync only ever moves the clock forward (`OffsetClock.syncTo`).
 */
@Injectable()
export class LocalnetClockSync implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(LocalnetClockSync.name);
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly rpc: LocalnetRpcClient,
    private readonly clock: Clock,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!(this.clock instanceof OffsetClock)) return;
    const clock = this.clock;
    await this.sync(clock);
    this.timer = setInterval(() => void this.sync(clock), CLOCK_SYNC_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  private async sync(clock: OffsetClock): Promise<void> {
    try {
      const { unixTimestamp } = await this.rpc.call<{ unixTimestamp: number }>(
        'localnet_getClock',
        [],
      );
      clock.syncTo(unixTimestamp);
    } catch (error) {
      this.logger.warn(
        { err: error },
        'Could not read the localnet clock; keeping the last offset',
      );
    }
  }
}
