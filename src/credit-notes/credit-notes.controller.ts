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
import { CreditNotesService } from './credit-notes.service';
import { CreateCreditNoteDto, ListCreditNotesQueryDto } from './dto/credit-note.dto';
import { CreateCreditNoteResponse, CreditNoteResponse } from './dto/credit-note.response';

@ApiTags('Credit notes')
@ApiAuthenticated()
@Controller('api')
export class CreditNotesController {
  constructor(private readonly notes: CreditNotesService) {}

  /**
   * Issues a credit note against the invoice: `reduce_due` (an Open invoice asks for less),
   * `refund` (the money goes back: the response carries the refund's transaction to sign) or
   * `credit` (the customer's balance, applied to its next invoice). Numbered `CN-000001`, ...
   */
  @IdempotentPost('invoices/:id/credit-notes')
  @HttpCode(HttpStatus.CREATED)
  @ApiOperation({ summary: 'Issue a credit note' })
  @ApiCreatedResponse({ type: CreateCreditNoteResponse })
  @ApiJsonBodyErrors(
    [
      ErrorCode.VALIDATION_ERROR,
      'action: must be one of the following values: reduce_due, refund, credit',
    ],
    [ErrorCode.INVOICE_NOT_FOUND, 'Invoice not found'],
    [ErrorCode.INVOICE_NOT_OPEN, 'Invoice is not Open (it is Paid)'],
    ErrorCode.CREDIT_EXCEEDS_DUE,
    ErrorCode.REFUND_EXCEEDS_PAYMENT,
    ErrorCode.PAYMENT_NOT_REFUNDABLE,
    ErrorCode.SERVICE_UNAVAILABLE,
  )
  create(
    @MerchantId() merchantId: string,
    @IdParam('Invoice', ErrorCode.INVOICE_NOT_FOUND) invoiceId: string,
    @Body() body: CreateCreditNoteDto,
    @Idempotency() claim?: IdempotencyClaim,
  ): Promise<CreateCreditNoteResponse> {
    return this.notes.create(merchantId, invoiceId, body, claim);
  }

  /** The merchant's credit notes, newest first: all of them, or a page. */
  @Get('credit-notes')
  @ApiOperation({ summary: 'List credit notes' })
  @ApiOkResponse({ type: CreditNoteResponse, isArray: true })
  @ApiErrors([ErrorCode.VALIDATION_ERROR, 'invoiceId: must be a UUID'])
  list(
    @MerchantId() merchantId: string,
    @Query() query: ListCreditNotesQueryDto,
  ): Promise<CreditNoteResponse[]> {
    return this.notes.list(merchantId, query);
  }

  @Get('credit-notes/:id')
  @ApiOperation({ summary: 'Retrieve a credit note' })
  @ApiOkResponse({ type: CreditNoteResponse })
  @ApiErrors([ErrorCode.NOT_FOUND, 'Credit note not found'])
  get(
    @MerchantId() merchantId: string,
    @IdParam('Credit note') id: string,
  ): Promise<CreditNoteResponse> {
    return this.notes.get(merchantId, id);
  }
}
