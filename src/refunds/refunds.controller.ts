import { Body, Controller, Get, HttpCode, HttpStatus, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
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
import { CreateRefundDto, ListRefundsQueryDto } from './dto/refund.dto';
import {
  RefundReissueResponse,
  RefundResponse,
  RefundTransactionResponse,
} from './dto/refund.response';
import { RefundsService } from './refunds.service';

const PAYMENT_NOT_FOUND: [ErrorCode, string] = [ErrorCode.NOT_FOUND, 'Payment not found'];
const REFUND_NOT_FOUND: [ErrorCode, string] = [ErrorCode.NOT_FOUND, 'Refund not found'];
const EXCEEDS: [ErrorCode, string] = [
  ErrorCode.REFUND_EXCEEDS_PAYMENT,
  'At most 4.5 USDC is left to give back of this payment',
];
const NOT_REFUNDABLE: [ErrorCode, string] = [
  ErrorCode.PAYMENT_NOT_REFUNDABLE,
  'This payment is not finalized yet: it can be refunded once it is irreversible (seconds)',
];
const CHAIN_DOWN: [ErrorCode, string] = [
  ErrorCode.SERVICE_UNAVAILABLE,
  'The Solana RPC is unreachable: no recent blockhash for the transaction; retry later',
];

@ApiTags('Refunds')
@ApiAuthenticated()
@Controller('api')
export class RefundsController {
  constructor(private readonly refunds: RefundsService) {}

  /**
   * Refunds a payment, all that is left of it by default or `amount` of it, from the merchant's
   * own wallet: a Pending refund and the unsigned transaction (a transfer from the merchant's
   * receiving account back to the payer's token account) that the merchant signs and sends. The
   * refund is Succeeded once the transfer is finalized on-chain (docs/refunds.md).
   */
  @IdempotentPost('payments/:id/refunds')
  @HttpCode(HttpStatus.CREATED)
  @ApiOperation({ summary: 'Refund a payment' })
  @ApiCreatedResponse({ type: RefundTransactionResponse })
  @ApiJsonBodyErrors(
    [ErrorCode.VALIDATION_ERROR, 'amount: must have at most 6 decimal places'],
    PAYMENT_NOT_FOUND,
    EXCEEDS,
    NOT_REFUNDABLE,
    CHAIN_DOWN,
  )
  create(
    @MerchantId() merchantId: string,
    @IdParam('Payment') paymentId: string,
    @Body() body: CreateRefundDto,
    @Idempotency() claim?: IdempotencyClaim,
  ): Promise<RefundTransactionResponse> {
    return this.refunds.create(merchantId, paymentId, body, claim);
  }

  /**
   * A new transaction for an Expired refund (its last one can no longer land): it is Pending
   * again. When its transfer landed after all, the refund is settled instead and returned
   * Succeeded, without a transaction.
   */
  @IdempotentPost('refunds/:id/transaction')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Issue a new transaction for an Expired refund' })
  @ApiOkResponse({ type: RefundReissueResponse })
  @ApiErrors(REFUND_NOT_FOUND, EXCEEDS, NOT_REFUNDABLE, CHAIN_DOWN)
  reissue(
    @MerchantId() merchantId: string,
    @IdParam('Refund') id: string,
  ): Promise<RefundReissueResponse> {
    return this.refunds.reissue(merchantId, id);
  }

  /** The merchant's refunds, newest first: all of them, or a page (`limit`, `startingAfter`). */
  @Get('refunds')
  @ApiOperation({ summary: 'List refunds' })
  @ApiOkResponse({ type: RefundResponse, isArray: true })
  @ApiErrors([ErrorCode.VALIDATION_ERROR, 'paymentId: must be a UUID'])
  list(
    @MerchantId() merchantId: string,
    @Query() query: ListRefundsQueryDto,
  ): Promise<RefundResponse[]> {
    return this.refunds.list(merchantId, query);
  }

  @Get('refunds/:id')
  @ApiOperation({ summary: 'Retrieve a refund' })
  @ApiOkResponse({ type: RefundResponse })
  @ApiErrors(REFUND_NOT_FOUND)
  get(@MerchantId() merchantId: string, @IdParam('Refund') id: string): Promise<RefundResponse> {
    return this.refunds.get(merchantId, id);
  }
}
