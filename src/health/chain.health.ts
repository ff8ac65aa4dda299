import { Injectable } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { Connection } from '@solana/web3.js';
import { withTimeout } from '../common/with-timeout';

/** The chain RPC answers `getSlot` within the timeout. */
@Injectable()
export class ChainHealthIndicator {
  constructor(
    private readonly connection: Connection,
    private readonly indicators: HealthIndicatorService,
  ) {}

  async pingCheck(key: 'chain', timeoutMs: number): Promise<HealthIndicatorResult<'chain'>> {
    const indicator = this.indicators.check(key);
    try {
      const slot = await withTimeout(
        this.connection.getSlot(),
        timeoutMs,
        `timeout of ${timeoutMs}ms exceeded`,
      );
      return indicator.up({ slot });
    } catch (error) {
      return indicator.down({ message: (error as Error).message });
    }
  }
}
