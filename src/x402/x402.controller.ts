import { Body, Controller, Get, HttpCode, HttpStatus } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantId } from '../common/decorators/current-merchant.decorator';
import { ErrorCode } from '../common/errors/error-codes';
import {
  ApiAuthenticated,
  ApiErrors,
  ApiJsonBodyErrors,
} from '../common/swagger/api-errors.decorator';
import { IdempotentPost } from '../idempotency/idempotent-post.decorator';
import { X402RequestDto } from './dto/x402.dto';
import {
  X402FeeBudgetResponse,
  X402SettleResponse,
  X402SupportedResponse,
  X402VerifyResponse,
} from './dto/x402.response';
import { X402Service } from './x402.service';

const CHAIN_DOWN: [ErrorCode, string] = [
  ErrorCode.SERVICE_UNAVAILABLE,
  'The Solana RPC is unreachable: no recent blockhash for the transaction; retry later',
];

/**
 * The x402 v2 facilitator (docs/x402.md): point `@x402/express` (or any x402 resource server)
 * at `<base>/x402` with the merchant's API key, and it verifies and settles payments to the
 * merchant's wallet here. A payment that does not hold is a 200 with `isValid: false` or
 * `success: false` and x402's reason, as the protocol has it; a malformed body is a 400.
 */
@ApiTags('x402')
@ApiAuthenticated()
@Controller('x402')
export class X402Controller {
  constructor(private readonly x402: X402Service) {}

  /** The scheme and network served, and the fee payer a client's transaction must name. */
  @Get('supported')
  @ApiOperation({ summary: 'x402: supported payment kinds' })
  @ApiOkResponse({ type: X402SupportedResponse })
  supported(): X402SupportedResponse {
    return this.x402.supported();
  }

  /** Checks a payment strictly (and simulates it) without sending anything. */
  @IdempotentPost('verify')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'x402: verify a payment' })
  @ApiOkResponse({ type: X402VerifyResponse })
  @ApiJsonBodyErrors(
    [
      ErrorCode.VALIDATION_ERROR,
      'paymentRequirements.amount: must be a positive integer of base units',
    ],
    CHAIN_DOWN,
  )
  verify(
    @MerchantId() merchantId: string,
    @Body() body: X402RequestDto,
  ): Promise<X402VerifyResponse> {
    return this.x402.verify(merchantId, body);
  }

  /**
   * Verifies, co-signs as fee payer, sends, and answers with the signature once the transfer
   * is confirmed. Each payment settles once (`duplicate_settlement` after), within the
   * merchant's daily fee budget (`fee_budget_exceeded` past it).
   */
  @IdempotentPost('settle')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'x402: settle a payment' })
  @ApiOkResponse({ type: X402SettleResponse })
  @ApiJsonBodyErrors(
    [ErrorCode.VALIDATION_ERROR, 'paymentPayload.payload.transaction: must be base64'],
    CHAIN_DOWN,
  )
  settle(
    @MerchantId() merchantId: string,
    @Body() body: X402RequestDto,
  ): Promise<X402SettleResponse> {
    return this.x402.settle(merchantId, body);
  }

  /** What the service key may still spend today on this merchant's x402 payments. */
  @Get('fee-budget')
  @ApiOperation({ summary: "x402: today's network-fee budget" })
  @ApiOkResponse({ type: X402FeeBudgetResponse })
  @ApiErrors()
  feeBudget(@MerchantId() merchantId: string): Promise<X402FeeBudgetResponse> {
    return this.x402.feeBudget(merchantId);
  }
}
