import { Injectable } from '@nestjs/common';
import { BillingRunResult, BillingService } from '../billing/billing.service';
import { Clock, CLOCK_CEILING, isAdjustable } from '../common/clock';
import { ServiceUnavailableError, ValidationError } from '../common/errors/domain-error';
import { formatAmount, parseAmount } from '../common/money';
import { ChainPort } from '../solana/chain.port';
import { AdvanceClockDto, ClockResponse, FaucetDto, FaucetResponse } from './dto/dev.dto';
import { LocalnetRpcClient } from './localnet-rpc.client';

/** SOL sent with every faucet call, for transaction fees and account rent. */
const FAUCET_LAMPORTS = 1_000_000_000n;

/** The localnet-only dev affordances (DESIGN section 9): a faucet and a movable clock. */
@Injectable()
export class DevService {
  constructor(
    private readonly rpc: LocalnetRpcClient,
    private readonly chain: ChainPort,
    private readonly clock: Clock,
    private readonly billing: BillingService,
  ) {}

  /** The charge run and the watchers, now (what the schedule does every minute). */
  runBilling(): Promise<BillingRunResult> {
    return this.billing.runNow();
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

  /**
   * Moves the chain's clock, then the service's by the same amount; never past
   * {@link CLOCK_CEILING} (the chain refuses too, so neither moves alone).
   */
  async advanceClock(body: AdvanceClockDto): Promise<ClockResponse> {
    const room = Math.floor((CLOCK_CEILING.getTime() - this.clock.now().getTime()) / 1000);
    if (body.seconds > room) {
      throw new ValidationError(
        `seconds: would take the clock past ${CLOCK_CEILING.toISOString()} (at most ${Math.max(0, room)} from now)`,
        [
          {
            field: 'seconds',
            message: `must not take the clock past ${CLOCK_CEILING.toISOString()}`,
          },
        ],
      );
    }
    const { unixTimestamp } = await this.rpc.call<{ unixTimestamp: number }>(
      'localnet_advanceClock',
      [{ seconds: body.seconds }],
    );
    if (isAdjustable(this.clock)) this.clock.advance(body.seconds * 1000);
    return { now: this.clock.now().toISOString(), chainUnixTimestamp: unixTimestamp };
  }
}
