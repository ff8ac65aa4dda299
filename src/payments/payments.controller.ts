import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantId } from '../common/decorators/current-merchant.decorator';
import { ErrorCode } from '../common/errors/error-codes';
import { ApiAuthenticated, ApiErrors } from '../common/swagger/api-errors.decorator';
import { ListPaymentsQueryDto } from './dto/payment.dto';
import { PaymentResponse } from './dto/payment.response';
import { PaymentsService } from './payments.service';

@ApiTags('Payments')
@ApiAuthenticated()
@Controller('api/payments')
export class PaymentsController {
  constructor(private readonly payments: PaymentsService) {}

  /**
   * The payments ledger, newest first: every invoice payment and subscription charge with its
   * amount, mint, signature, payer and status, reconciled to the chain to the base unit. All of
   * it, or a page (`limit`, `startingAfter`).
   */
  @Get()
  @ApiOperation({ summary: 'List payments' })
  @ApiErrors([ErrorCode.VALIDATION_ERROR, 'invoiceId: must be a UUID'])
  @ApiOkResponse({ type: PaymentResponse, isArray: true })
  list(
    @MerchantId() merchantId: string,
    @Query() query: ListPaymentsQueryDto,
  ): Promise<PaymentResponse[]> {
    return this.payments.list(merchantId, query);
  }
}
