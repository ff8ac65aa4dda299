import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Clock, isAdjustable, OffsetClock } from '../common/clock';
import { ServiceUnavailableError } from '../common/errors/domain-error';
import { formatAmount, parseAmount } from '../common/money';
import { ChainPort } from '../solana/chain.port';
import { AdvanceClockDto, ClockResponse, FaucetDto, FaucetResponse } from './dto/dev.dto';
import { LocalnetRpcClient } from '../localnet/localnet-rpc.client';

/** SOL sent with every faucet call, for transaction fees and account rent. */
const FAUCET_LAMPORTS = 1_000_000_000n;

/** How often an instance takes up the chain's clock. */
const CLOCK_SYNC_MS = 2000;

/** The localnet-only dev affordances (DESIGN section 9): a faucet and a movable clock. */
@Injectable()
export class DevService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DevService.name);
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly rpc: LocalnetRpcClient,
    private readonly chain: ChainPort,
    private readonly clock: Clock,
  ) {}

  /**
   * The service clock follows the chain's: taken up at start (the chain's clock may have been
   * moved before) and every few seconds, so instances sharing a chain agree after another one
   * handled a `clock/advance`.
   */
  async onApplicationBootstrap(): Promise<void> {
    if (!(this.clock instanceof OffsetClock)) return;
    await this.syncClock(this.clock);
    const clock = this.clock;
    this.timer = setInterval(() => void this.syncClock(clock), CLOCK_SYNC_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  private async syncClock(clock: OffsetClock): Promise<void> {
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

  async faucet(body: FaucetDto): Promise<FaucetResponse> {
    const mint = await this.chain.mint(body.mint).catch(() => {
      throw new ServiceUnavailableError('The localnet chain is not reachable; retry later');
    });
    const units = parseAmount(body.amount);
    const { signatures } = await this.rpc.call<{ signatures: string[] }>('localnet_faucet', [
      {
        walletAddress: body.walletAddress,
        lamports: FAUCET_LAMPORTS.toString(),
        mint: mint.address,
        amount: units.toString(),
      },
    ]);
    return {
      walletAddress: body.walletAddress,
      mint: body.mint,
      amount: formatAmount(units),
      lamports: FAUCET_LAMPORTS.toString(),
      signatures,
    };
  }

  /** Moves the chain's clock, then the service's by the same amount. */
  async advanceClock(body: AdvanceClockDto): Promise<ClockResponse> {
    const { unixTimestamp } = await this.rpc.call<{ unixTimestamp: number }>(
      'localnet_advanceClock',
      [{ seconds: body.seconds }],
    );
    if (isAdjustable(this.clock)) this.clock.advance(body.seconds * 1000);
    return { now: this.clock.now().toISOString(), chainUnixTimestamp: unixTimestamp };
  }
}
