import { Body, Controller, Get, Header, HttpCode, HttpStatus } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/decorators/public.decorator';
import { IdParam } from '../common/decorators/id-param.decorator';
import { ErrorCode } from '../common/errors/error-codes';
import { ApiErrors, ApiJsonBodyErrors } from '../common/swagger/api-errors.decorator';
import { IdempotentPost } from '../idempotency/idempotent-post.decorator';
import { CheckoutService } from './checkout.service';
import { ConfirmSubscribeDto, TransactionRequestDto } from './dto/checkout.dto';
import {
  CheckoutInvoiceResponse,
  CheckoutPlanResponse,
  CheckoutSubscriptionResponse,
  TransactionRequestMetaResponse,
  PlanTransactionRequestResponse,
  TransactionRequestResponse,
} from './dto/checkout.response';

const INVOICE_NOT_FOUND: [ErrorCode, string] = [ErrorCode.INVOICE_NOT_FOUND, 'Invoice not found'];
const PLAN_NOT_FOUND: [ErrorCode, string] = [ErrorCode.NOT_FOUND, 'Plan not found'];

/**
 * The public checkout API: no API key, rate limited per client address, and nothing a customer
 * should not see. The transaction requests follow the Solana Pay specification: `GET` answers
 * `{label, icon}`, `POST {account}` answers `{transaction, message}` (base64, unsigned, the
 * account as fee payer); errors are 4xx with the service's error body.
 */
@ApiTags('Checkout (public)')
@Public()
@ApiErrors(ErrorCode.RATE_LIMITED)
@Controller()
export class CheckoutController {
  constructor(private readonly checkout: CheckoutService) {}

  @Get('api/checkout/invoices/:id')
  @ApiOperation({ summary: 'An invoice as its payer sees it' })
  @ApiErrors(INVOICE_NOT_FOUND)
  @ApiOkResponse({ type: CheckoutInvoiceResponse })
  invoice(@IdParam('Invoice', ErrorCode.INVOICE_NOT_FOUND) id: string) {
    return this.checkout.invoice(id);
  }

  @Get('api/checkout/invoices/:id/transaction')
  @ApiOperation({ summary: 'Solana Pay transaction request: label and icon (invoice)' })
  @ApiErrors(INVOICE_NOT_FOUND)
  @ApiOkResponse({ type: TransactionRequestMetaResponse })
  invoiceMeta(@IdParam('Invoice', ErrorCode.INVOICE_NOT_FOUND) id: string) {
    return this.checkout.invoiceMeta(id);
  }

  /** The payment of what is still due, for the wallet `account` to sign. */
  @IdempotentPost('api/checkout/invoices/:id/transaction')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Solana Pay transaction request: the payment (invoice)' })
  @ApiJsonBodyErrors(
    INVOICE_NOT_FOUND,
    [ErrorCode.INVOICE_NOT_OPEN, 'Invoice is not Open (it is Paid)'],
    [ErrorCode.VALIDATION_ERROR, 'account: must be a base58 Solana address'],
    [
      ErrorCode.CONFLICT,
      'The merchant cannot receive USDC yet: its receiving account does not exist',
    ],
    ErrorCode.SERVICE_UNAVAILABLE,
  )
  @ApiOkResponse({ type: TransactionRequestResponse })
  invoiceTransaction(
    @IdParam('Invoice', ErrorCode.INVOICE_NOT_FOUND) id: string,
    @Body() body: TransactionRequestDto,
  ): Promise<TransactionRequestResponse> {
    return this.checkout.invoiceTransaction(id, body.account);
  }

  @Get('api/checkout/plans/:id')
  @ApiOperation({ summary: 'A plan as a prospective subscriber sees it' })
  @ApiErrors(PLAN_NOT_FOUND)
  @ApiOkResponse({ type: CheckoutPlanResponse })
  plan(@IdParam('Plan') id: string) {
    return this.checkout.plan(id);
  }

  @Get('api/checkout/plans/:id/transaction')
  @ApiOperation({ summary: 'Solana Pay transaction request: label and icon (plan)' })
  @ApiErrors(PLAN_NOT_FOUND)
  @ApiOkResponse({ type: TransactionRequestMetaResponse })
  planMeta(@IdParam('Plan') id: string) {
    return this.checkout.planMeta(id);
  }

  /** The subscribe (the authorisation of the service's pulls), for `account` to sign. */
  @IdempotentPost('api/checkout/plans/:id/transaction')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Solana Pay transaction request: the subscribe (plan)' })
  @ApiJsonBodyErrors(
    PLAN_NOT_FOUND,
    [ErrorCode.VALIDATION_ERROR, 'Plan is not active: it accepts no new subscribers'],
    [ErrorCode.CONFLICT, 'This wallet already has a live subscription to the plan'],
    ErrorCode.SERVICE_UNAVAILABLE,
  )
  @ApiOkResponse({ type: PlanTransactionRequestResponse })
  planTransaction(
    @IdParam('Plan') id: string,
    @Body() body: TransactionRequestDto,
  ): Promise<PlanTransactionRequestResponse> {
    return this.checkout.planTransaction(id, body.account);
  }

  /**
   * After the wallet sent the subscribe: verifies it on-chain, creates the subscription
   * `Active` and charges the first period at once. Idempotent per signature and per plan and
   * wallet (200 with `created: false` the second time).
   */
  @IdempotentPost('api/checkout/plans/:id/confirm')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Confirm a signed subscribe' })
  @ApiJsonBodyErrors(
    PLAN_NOT_FOUND,
    [
      ErrorCode.VALIDATION_ERROR,
      'signature is not confirmed on-chain (yet); retry in a few seconds',
    ],
    ErrorCode.SERVICE_UNAVAILABLE,
  )
  @ApiOkResponse({ type: CheckoutSubscriptionResponse })
  confirm(
    @IdParam('Plan') id: string,
    @Body() body: ConfirmSubscribeDto,
  ): Promise<CheckoutSubscriptionResponse> {
    return this.checkout.confirm(id, body.signature);
  }

  /** The icon Solana Pay wallets show (a plain SVG, served by the service itself). */
  @Get('checkout/icon.svg')
  @Header('Content-Type', 'image/svg+xml')
  @Header('Cache-Control', 'public, max-age=86400')
  @ApiOperation({ summary: 'Checkout icon (SVG)' })
  icon(): string {
    return ICON_SVG;
  }
}

const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64">' +
  '<rect width="64" height="64" rx="14" fill="#1b4d3e"/>' +
  '<path d="M20 40c0 4 4 6 12 6s12-3 12-8-5-7-12-8-11-3-11-7 4-6 11-6 11 2 11 6" ' +
  'fill="none" stroke="#fff" stroke-width="5" stroke-linecap="round"/></svg>';
