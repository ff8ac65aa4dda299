import { Injectable } from '@nestjs/common';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { Connection } from '@solana/web3.js';

/** The chain RPC answers `getSlot` within the timeout. */
@Injectable()
export class ChainHealthIndicator {
  constructor(
    private readonly connection: Connection,
    private readonly indicators: HealthIndicatorService,
  ) {}

  async pingCheck(key: 'chain', timeoutMs: number): Promise<HealthIndicatorResult<'chain'>> {
    const indicator = this.indicators.check(key);
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`timeout of ${timeoutMs}ms exceeded`)),
          timeoutMs,
        );
      });
      const slot = await Promise.race([this.connection.getSlot(), timeout]);
      return indicator.up({ slot });
    } catch (error) {
      return indicator.down({ message: (error as Error).message });
    } finally {
      clearTimeout(timer);
    }
  }
}
