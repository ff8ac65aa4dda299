import { Body, Controller, Get, HttpCode, HttpStatus } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantId } from '../common/decorators/current-merchant.decorator';
import { IdParam } from '../common/decorators/id-param.decorator';
import { ErrorCode } from '../common/errors/error-codes';
import {
  ApiAuthenticated,
  ApiErrors,
  ApiJsonBodyErrors,
} from '../common/swagger/api-errors.decorator';
import { Idempotency } from '../idempotency/idempotency-claim.decorator';
import { IdempotentPost } from '../idempotency/idempotent-post.decorator';
import type { IdempotencyClaim } from '../idempotency/idempotency.service';
import { IngestUsageDto } from './dto/usage.dto';
import { IngestUsageResponse, SubscriptionUsageResponse } from './dto/usage.response';
import { UsageBatch, UsageBatchPipe } from './usage-batch';
import { UsageService } from './usage.service';

@ApiTags('Usage')
@ApiAuthenticated()
@Controller('api')
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  /**
   * Reports usage of metered subscriptions (docs/usage.md): up to 1,000 events, written together
   * or not at all. An event whose `id` was taken before is a duplicate: skipped and counted once.
   * Each counts toward the period its timestamp falls in; one past that period's grace, or of a
   * period already charged, refuses the batch (`USAGE_PERIOD_CLOSED`, the events named).
   */
  @IdempotentPost('usage-events')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Report usage events' })
  @ApiBody({ type: IngestUsageDto })
  @ApiOkResponse({ type: IngestUsageResponse })
  @ApiJsonBodyErrors(
    [ErrorCode.VALIDATION_ERROR, "events[0]: u1: the subscription's meter is api_calls"],
    [ErrorCode.NOT_FOUND, 'Subscription not found'],
    ErrorCode.USAGE_PERIOD_CLOSED,
  )
  ingest(
    @MerchantId() merchantId: string,
    @Body(UsageBatchPipe) body: UsageBatch,
    @Idempotency() claim?: IdempotencyClaim,
  ): Promise<IngestUsageResponse> {
    return this.usage.ingest(merchantId, body, claim);
  }

  /** The running total of a metered subscription's current period. */
  @Get('subscriptions/:id/usage')
  @ApiOperation({ summary: "A metered subscription's current usage" })
  @ApiOkResponse({ type: SubscriptionUsageResponse })
  @ApiErrors([ErrorCode.NOT_FOUND, 'Metered subscription not found'])
  current(
    @MerchantId() merchantId: string,
    @IdParam('Metered subscription') subscriptionId: string,
  ): Promise<SubscriptionUsageResponse> {
    return this.usage.current(merchantId, subscriptionId);
  }
}
