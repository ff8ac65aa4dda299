import { Body, Controller, Get, HttpCode, HttpStatus, Patch, Query } from '@nestjs/common';
import { IdempotentPost } from '../idempotency/idempotent-post.decorator';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantId } from '../common/decorators/current-merchant.decorator';
import { IdParam } from '../common/decorators/id-param.decorator';
import { ErrorCode } from '../common/errors/error-codes';
import {
  ApiAuthenticated,
  ApiErrors,
  ApiJsonBodyErrors,
} from '../common/swagger/api-errors.decorator';
import { CreatePlanDto, ListPlansQueryDto, UpdatePlanDto } from './dto/plan.dto';
import { CreatePlanResponse, PlanListItemResponse, PlanResponse } from './dto/plan.response';
import { UnsignedTxResponse } from '../common/dto/unsigned-tx.response';
import { Idempotency } from '../idempotency/idempotency-claim.decorator';
import type { IdempotencyClaim } from '../idempotency/idempotency.service';
import { PlansService } from './plans.service';

const CHAIN_DOWN: [ErrorCode, string] = [
  ErrorCode.SERVICE_UNAVAILABLE,
  'The Solana RPC is unreachable: no recent blockhash for the transaction; retry later',
];

@ApiTags('Plans')
@ApiAuthenticated()
@Controller('api/plans')
export class PlansController {
  constructor(private readonly plans: PlansService) {}

  /**
   * Creates a plan. The response carries the unsigned transaction that registers it on-chain
   * (the merchant wallet signs and sends it) and the checkout URL where customers subscribe.
   */
  @IdempotentPost()
  @HttpCode(HttpStatus.CREATED)
  @ApiOperation({ summary: 'Create a plan' })
  @ApiJsonBodyErrors(
    [ErrorCode.VALIDATION_ERROR, 'intervalSeconds: must not be less than 86400'],
    CHAIN_DOWN,
  )
  create(
    @MerchantId() merchantId: string,
    @Body() body: CreatePlanDto,
    @Idempotency() claim?: IdempotencyClaim,
  ): Promise<CreatePlanResponse> {
    return this.plans.create(merchantId, body, claim);
  }

  /**
   * The merchant's plans, newest first, each with its number of subscriptions: all of them, or
   * a page (`limit`, `startingAfter`).
   */
  @Get()
  @ApiOperation({ summary: 'List plans' })
  @ApiErrors([ErrorCode.VALIDATION_ERROR, 'startingAfter: no such plan'])
  list(
    @MerchantId() merchantId: string,
    @Query() query: ListPlansQueryDto,
  ): Promise<PlanListItemResponse[]> {
    return this.plans.list(merchantId, query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get a plan' })
  @ApiErrors([ErrorCode.NOT_FOUND, 'Plan not found'])
  get(@MerchantId() merchantId: string, @IdParam('Plan') id: string): Promise<PlanResponse> {
    return this.plans.get(merchantId, id);
  }

  /**
   * Changes `label`, `description` (`null` clears it) or `active`. The terms (`amount`, `mint`,
   * `intervalSeconds`) never change: sending them is a 400.
   */
  @Patch(':id')
  @ApiOperation({ summary: 'Update a plan' })
  @ApiJsonBodyErrors(
    [ErrorCode.NOT_FOUND, 'Plan not found'],
    [ErrorCode.VALIDATION_ERROR, 'amount: is not an allowed field'],
  )
  update(
    @MerchantId() merchantId: string,
    @IdParam('Plan') id: string,
    @Body() body: UpdatePlanDto,
  ): Promise<PlanResponse> {
    return this.plans.update(merchantId, id, body);
  }

  /** A fresh registration transaction (the one returned at creation goes stale in a minute). */
  @IdempotentPost(':id/registration-tx')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Get a fresh transaction registering a plan on-chain' })
  @ApiErrors([ErrorCode.NOT_FOUND, 'Plan not found'], CHAIN_DOWN)
  registrationTx(
    @MerchantId() merchantId: string,
    @IdParam('Plan') id: string,
  ): Promise<UnsignedTxResponse> {
    return this.plans.registrationTx(merchantId, id);
  }
}
