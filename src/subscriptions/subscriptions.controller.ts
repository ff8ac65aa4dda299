import { Controller, Get, HttpCode, HttpStatus, Query, Res } from '@nestjs/common';
import { IdempotentPost } from '../idempotency/idempotent-post.decorator';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { MerchantId } from '../common/decorators/current-merchant.decorator';
import { IdParam } from '../common/decorators/id-param.decorator';
import { ErrorCode } from '../common/errors/error-codes';
import { JsonArrayResponse } from '../common/http/json-array-response';
import { ApiAuthenticated, ApiErrors } from '../common/swagger/api-errors.decorator';
import { ListSubscriptionsQueryDto } from './dto/subscription.dto';
import { SubscriptionResponse } from './dto/subscription.response';
import { SubscriptionsService } from './subscriptions.service';

const NOT_FOUND: [ErrorCode, string] = [ErrorCode.NOT_FOUND, 'Subscription not found'];

@ApiTags('Subscriptions')
@ApiAuthenticated()
@Controller('api/subscriptions')
export class SubscriptionsController {
  constructor(private readonly subscriptions: SubscriptionsService) {}

  /**
   * Subscriptions to all of the merchant's plans, newest first, with plan and customer: all of
   * them, or a page (`limit`, `startingAfter`).
   */
  @Get()
  @ApiOperation({ summary: 'List subscriptions' })
  @ApiErrors([
    ErrorCode.VALIDATION_ERROR,
    'status: must be one of the following values: Active, PastDue, Cancelled, Completed',
  ])
  @ApiOkResponse({ type: SubscriptionResponse, isArray: true })
  async list(
    @MerchantId() merchantId: string,
    @Query() query: ListSubscriptionsQueryDto,
    @Res() res: Response,
  ): Promise<void> {
    const out = new JsonArrayResponse(res);
    await this.subscriptions.listJson(merchantId, query, (json) => out.write(json));
    out.end();
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get a subscription' })
  @ApiErrors(NOT_FOUND)
  get(
    @MerchantId() merchantId: string,
    @IdParam('Subscription') id: string,
  ): Promise<SubscriptionResponse> {
    return this.subscriptions.get(merchantId, id);
  }

  /**
   * Pauses an Active subscription (`PastDue`): no charge is attempted until it is resumed; the
   * customer's on-chain authorisation stays valid.
   */
  @IdempotentPost(':id/pause')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Pause a subscription' })
  @ApiErrors(NOT_FOUND, [
    ErrorCode.VALIDATION_ERROR,
    'Only an Active subscription can be paused (it is PastDue)',
  ])
  pause(
    @MerchantId() merchantId: string,
    @IdParam('Subscription') id: string,
  ): Promise<SubscriptionResponse> {
    return this.subscriptions.act(merchantId, id, 'pause');
  }

  /**
   * Resumes a PastDue subscription (`Active`): the next charge is due at the end of the period
   * already paid for, or at the next charge run if that has passed (paused periods are not
   * billed back).
   */
  @IdempotentPost(':id/resume')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Resume a subscription' })
  @ApiErrors(NOT_FOUND, [
    ErrorCode.VALIDATION_ERROR,
    'Only a PastDue subscription can be resumed (it is Active)',
  ])
  resume(
    @MerchantId() merchantId: string,
    @IdParam('Subscription') id: string,
  ): Promise<SubscriptionResponse> {
    return this.subscriptions.act(merchantId, id, 'resume');
  }

  /**
   * Cancels a subscription (`Cancelled`, `cancelledAt` set): the service never charges it
   * again, from the moment this returns. The on-chain authorisation can only be revoked by the
   * customer's own signature; their self-service page offers that transaction
   * (docs/subscriptions.md).
   */
  @IdempotentPost(':id/cancel')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Cancel a subscription' })
  @ApiErrors(NOT_FOUND, [
    ErrorCode.VALIDATION_ERROR,
    'A Cancelled or Completed subscription cannot be cancelled (it is Cancelled)',
  ])
  cancel(
    @MerchantId() merchantId: string,
    @IdParam('Subscription') id: string,
  ): Promise<SubscriptionResponse> {
    return this.subscriptions.act(merchantId, id, 'cancel');
  }
}
