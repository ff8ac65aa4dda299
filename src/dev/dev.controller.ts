import { Body, Controller, HttpCode, HttpStatus, UseGuards } from '@nestjs/common';
import { SkipThrottle } from '@nestjs/throttler';
import { IdempotentPost } from '../idempotency/idempotent-post.decorator';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/decorators/public.decorator';
import { ErrorCode } from '../common/errors/error-codes';
import { ApiErrors, ApiJsonBodyErrors } from '../common/swagger/api-errors.decorator';
import { DevKeyGuard } from './dev-key.guard';
import { DevService } from './dev.service';
import {
  AdvanceClockDto,
  BillingRunResponse,
  ClockResponse,
  FaucetDto,
  FaucetResponse,
} from './dto/dev.dto';

/**
 * Localnet only: on devnet and mainnet-beta these routes do not exist (404). They act on every
 * merchant at once (the clock, the chain), so they answer the operator's dev key, never a
 * merchant's API key (`DevKeyGuard`); the operator is not rate limited.
 */
@ApiTags('Dev (localnet only)')
@ApiBearerAuth('devKey')
@ApiErrors(ErrorCode.UNAUTHORIZED, ErrorCode.RATE_LIMITED)
@Public()
@SkipThrottle()
@UseGuards(DevKeyGuard)
@Controller('api/dev')
export class DevController {
  constructor(private readonly dev: DevService) {}

  /** Funds a wallet on localnet: 1 SOL for fees and `amount` of the stablecoin. */
  @IdempotentPost('faucet')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Fund a wallet (localnet only)' })
  @ApiJsonBodyErrors(ErrorCode.VALIDATION_ERROR, ErrorCode.SERVICE_UNAVAILABLE)
  faucet(@Body() body: FaucetDto): Promise<FaucetResponse> {
    return this.dev.faucet(body);
  }

  /**
   * Runs the billing engine now, as its schedule does: the reconciling subscribe watcher, a
   * charge run over everything due, then the invoice payment watcher, finality, and the overdue
   * and expiry sweep. Returns what each did.
   */
  @IdempotentPost('billing/run')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Run the billing engine now (localnet only)' })
  @ApiOkResponse({ type: BillingRunResponse })
  @ApiJsonBodyErrors(ErrorCode.SERVICE_UNAVAILABLE)
  runBilling(): Promise<BillingRunResponse> {
    return this.dev.runBilling();
  }

  /** Moves the service clock and the chain clock forward together. */
  @IdempotentPost('clock/advance')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Advance the clocks (localnet only)' })
  @ApiJsonBodyErrors(ErrorCode.VALIDATION_ERROR, ErrorCode.SERVICE_UNAVAILABLE)
  advanceClock(@Body() body: AdvanceClockDto): Promise<ClockResponse> {
    return this.dev.advanceClock(body);
  }
}
