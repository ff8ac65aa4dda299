import { Body, Controller, Get, HttpCode, HttpStatus, Query, Res } from '@nestjs/common';
import { IdempotentPost } from '../idempotency/idempotent-post.decorator';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { MerchantId } from '../common/decorators/current-merchant.decorator';
import { IdParam } from '../common/decorators/id-param.decorator';
import { ErrorCode } from '../common/errors/error-codes';
import {
  ApiAuthenticated,
  ApiErrors,
  ApiJsonBodyErrors,
} from '../common/swagger/api-errors.decorator';
import { UnsignedTxResponse } from '../common/dto/unsigned-tx.response';
import { JsonArrayResponse } from '../common/http/json-array-response';
import { AttachPaymentDto, CreateInvoiceDto, ListInvoicesQueryDto } from './dto/invoice.dto';
import {
  CreateInvoiceResponse,
  InvoiceDetailResponse,
  InvoiceWithCustomerResponse,
} from './dto/invoice.response';
import { Idempotency } from '../idempotency/idempotency-claim.decorator';
import type { IdempotencyClaim } from '../idempotency/idempotency.service';
import { InvoicePaymentsService } from './invoice-payments.service';
import { InvoicesService } from './invoices.service';

const NOT_FOUND: [ErrorCode, string] = [ErrorCode.INVOICE_NOT_FOUND, 'Invoice not found'];
const NOT_OPEN: [ErrorCode, string] = [
  ErrorCode.INVOICE_NOT_OPEN,
  'Invoice is not Open (it is Paid)',
];
const CHAIN_DOWN: [ErrorCode, string] = [
  ErrorCode.SERVICE_UNAVAILABLE,
  'The Solana RPC is unreachable: no recent blockhash for the transaction; retry later',
];

@ApiTags('Invoices')
@ApiAuthenticated()
@Controller('api/invoices')
export class InvoicesController {
  constructor(
    private readonly invoices: InvoicesService,
    private readonly payments: InvoicePaymentsService,
  ) {}

  /**
   * Creates an invoice for the customer with this wallet (created or updated in the same
   * transaction). The response carries the unsigned transaction that registers it on-chain
   * (the merchant signs it) and the hosted checkout URL where the customer pays.
   */
  @IdempotentPost()
  @HttpCode(HttpStatus.CREATED)
  @ApiOperation({ summary: 'Create an invoice' })
  @ApiJsonBodyErrors(
    [ErrorCode.VALIDATION_ERROR, 'lineItems.0.unitAmount: must have at most 6 decimal places'],
    CHAIN_DOWN,
  )
  create(
    @MerchantId() merchantId: string,
    @Body() body: CreateInvoiceDto,
    @Idempotency() claim?: IdempotencyClaim,
  ): Promise<CreateInvoiceResponse> {
    return this.invoices.create(merchantId, body, claim);
  }

  /**
   * The merchant's invoices, newest first, each with its customer: all of them, or a page
   * (`limit`, `startingAfter`).
   */
  @Get()
  @ApiOperation({ summary: 'List invoices' })
  @ApiOkResponse({ type: InvoiceWithCustomerResponse, isArray: true })
  @ApiErrors([ErrorCode.VALIDATION_ERROR, 'startingAfter: no such invoice'])
  async list(
    @MerchantId() merchantId: string,
    @Query() query: ListInvoicesQueryDto,
    @Res() res: Response,
  ): Promise<void> {
    const out = new JsonArrayResponse(res);
    await this.invoices.listJson(merchantId, query, (json) => out.write(json));
    out.end();
  }

  /** One invoice, with its customer and where its e-mail notification stands. */
  @Get(':id')
  @ApiOperation({ summary: 'Get an invoice' })
  @ApiErrors(NOT_FOUND)
  get(
    @MerchantId() merchantId: string,
    @IdParam('Invoice', ErrorCode.INVOICE_NOT_FOUND) id: string,
  ): Promise<InvoiceDetailResponse> {
    return this.invoices.get(merchantId, id);
  }

  /** Voids an Open invoice (`Cancelled`): the customer can no longer pay it. */
  @IdempotentPost(':id/void')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Void an invoice' })
  @ApiErrors(NOT_FOUND, NOT_OPEN)
  void(
    @MerchantId() merchantId: string,
    @IdParam('Invoice', ErrorCode.INVOICE_NOT_FOUND) id: string,
  ): Promise<InvoiceWithCustomerResponse> {
    return this.invoices.void(merchantId, id);
  }

  /**
   * Attaches an unattributed payment (money that reached the merchant's receiving account but
   * paid no invoice by the attribution rule: several invoices' references, none, another mint's
   * invoice) to this Open invoice of the same mint, as if its transfer had carried the invoice's
   * reference: `payment.received`, and `invoice.paid` once finalized payments cover the total.
   * Once: a payment already attached is 409.
   */
  @IdempotentPost(':id/payments')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Attach an unattributed payment to an invoice' })
  @ApiJsonBodyErrors(
    NOT_FOUND,
    [ErrorCode.NOT_FOUND, 'Payment not found'],
    NOT_OPEN,
    [ErrorCode.VALIDATION_ERROR, 'paymentId: the payment is in PYUSD, the invoice in USDC'],
    [ErrorCode.CONFLICT, 'This payment is not unattributed (it was attached already)'],
  )
  @ApiOkResponse({ type: InvoiceWithCustomerResponse })
  attachPayment(
    @MerchantId() merchantId: string,
    @IdParam('Invoice', ErrorCode.INVOICE_NOT_FOUND) id: string,
    @Body() body: AttachPaymentDto,
  ): Promise<InvoiceWithCustomerResponse> {
    return this.payments.attach(merchantId, id, body.paymentId);
  }

  /** A fresh registration transaction for an Open invoice (the first goes stale in a minute). */
  @IdempotentPost(':id/registration-tx')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Get a fresh transaction registering an invoice on-chain' })
  @ApiErrors(NOT_FOUND, NOT_OPEN, CHAIN_DOWN)
  registrationTx(
    @MerchantId() merchantId: string,
    @IdParam('Invoice', ErrorCode.INVOICE_NOT_FOUND) id: string,
  ): Promise<UnsignedTxResponse> {
    return this.invoices.registrationTx(merchantId, id);
  }
}
