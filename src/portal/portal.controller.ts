import { Body, Controller, Get, Header, HttpCode, HttpStatus, UseGuards } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MerchantId } from '../common/decorators/current-merchant.decorator';
import { IdParam } from '../common/decorators/id-param.decorator';
import { Public } from '../common/decorators/public.decorator';
import { ErrorCode } from '../common/errors/error-codes';
import {
  ApiAuthenticated,
  ApiErrors,
  ApiJsonBodyErrors,
} from '../common/swagger/api-errors.decorator';
import { CustomersService } from '../customers/customers.service';
import { IdempotentPost } from '../idempotency/idempotent-post.decorator';
import { TransactionRequestDto } from '../checkout/dto/checkout.dto';
import {
  PlanTransactionRequestResponse,
  TransactionRequestResponse,
} from '../checkout/dto/checkout.response';
import { ConfirmSignatureDto } from './dto/portal.dto';
import {
  PortalResponse,
  PortalSessionResponse,
  PortalSubscriptionResponse,
} from './dto/portal.response';
import { Portal, PortalSessionGuard } from './portal-session.guard';
import { PORTAL_SESSION_HEADER, PortalSessions } from '../auth/portal-sessions.service';
import { PortalService } from './portal.service';
import type { PortalGrant } from '../auth/portal-token';

/** The merchant's side: a portal link for one of its customers. */
@ApiTags('Customers')
@ApiAuthenticated()
@Controller('api/customers')
export class PortalSessionsController {
  constructor(
    private readonly customers: CustomersService,
    private readonly sessions: PortalSessions,
  ) {}

  /**
   * A short-lived signed URL (`PORTAL_SESSION_TTL_SECONDS`, default 1 hour) to the customer's
   * portal page: their subscriptions and invoices with this merchant, where they pay, settle a
   * subscription a failed charge paused, re-authorise and cancel. Nothing is stored.
   */
  @IdempotentPost(':id/portal-session')
  @HttpCode(HttpStatus.CREATED)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ summary: 'Create a customer portal session' })
  @ApiJsonBodyErrors(ErrorCode.NOT_FOUND)
  async create(
    @MerchantId() merchantId: string,
    @IdParam('Customer') id: string,
  ): Promise<PortalSessionResponse> {
    await this.customers.get(merchantId, id);
    const session = await this.sessions.create(merchantId, id);
    return { url: session.url, expiresAt: session.expiresAt.toISOString() };
  }
}

const SUBSCRIPTION_NOT_FOUND: [ErrorCode, string] = [ErrorCode.NOT_FOUND, 'Subscription not found'];

/**
 * The portal page's API: no API key; the session in `X-Portal-Session` names the merchant and
 * the customer, and every record is looked up within them. Rate limited per client address.
 */
@ApiTags('Customer portal (public)')
@ApiHeader({ name: PORTAL_SESSION_HEADER, required: true, description: 'The portal session' })
@Public()
@UseGuards(PortalSessionGuard)
@ApiErrors(ErrorCode.UNAUTHORIZED, ErrorCode.RATE_LIMITED)
@Controller('api/portal')
export class PortalController {
  constructor(private readonly portal: PortalService) {}

  @Get('session')
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ summary: "The session customer's subscriptions and invoices" })
  @ApiOkResponse({ type: PortalResponse })
  view(@Portal() grant: PortalGrant): Promise<PortalResponse> {
    return this.portal.view(grant);
  }

  /** One charge for the current period now, then `Active` (`subscription.resumed`). */
  @IdempotentPost('subscriptions/:id/settle')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Settle a subscription a failed charge paused' })
  @ApiJsonBodyErrors(SUBSCRIPTION_NOT_FOUND, [
    ErrorCode.CONFLICT,
    'Your wallet holds 1 USDC; the payment is 9.99 USDC. Top up, then settle again',
  ])
  @ApiOkResponse({ type: PortalSubscriptionResponse })
  settle(
    @Portal() grant: PortalGrant,
    @IdParam('Subscription') id: string,
  ): Promise<PortalSubscriptionResponse> {
    return this.portal.settle(grant, id);
  }

  @IdempotentPost('subscriptions/:id/reauthorize/transaction')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'The re-authorisation, for the wallet to sign',
    description:
      'Under the token-delegate scheme, a fresh approval (`step` is `subscribe`). Where the ' +
      'service now takes new subscriptions under the Subscriptions program (`movesToProgram`), ' +
      "the move there of the wallet's subscriptions in the mint, in the program's steps: " +
      '`authority` (send it, then ask again), then `subscribe` (send it, then confirm it).',
  })
  @ApiJsonBodyErrors(
    SUBSCRIPTION_NOT_FOUND,
    ErrorCode.CONFLICT,
    ErrorCode.VALIDATION_ERROR,
    ErrorCode.SERVICE_UNAVAILABLE,
  )
  @ApiOkResponse({ type: PlanTransactionRequestResponse })
  reauthorize(
    @Portal() grant: PortalGrant,
    @IdParam('Subscription') id: string,
    @Body() body: TransactionRequestDto,
  ): Promise<PlanTransactionRequestResponse> {
    return this.portal.reauthorizeTransaction(grant, id, body.account);
  }

  @IdempotentPost('subscriptions/:id/reauthorize/confirm')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Confirm a signed re-authorisation' })
  @ApiJsonBodyErrors(SUBSCRIPTION_NOT_FOUND, ErrorCode.CONFLICT, ErrorCode.VALIDATION_ERROR)
  @ApiOkResponse({ type: PortalSubscriptionResponse })
  confirmReauthorize(
    @Portal() grant: PortalGrant,
    @IdParam('Subscription') id: string,
    @Body() body: ConfirmSignatureDto,
  ): Promise<PortalSubscriptionResponse> {
    return this.portal.confirmReauthorize(grant, id, body.signature);
  }

  @IdempotentPost('subscriptions/:id/cancel/transaction')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: "The revoke of the subscription's authorisation, for the wallet to sign",
  })
  @ApiJsonBodyErrors(SUBSCRIPTION_NOT_FOUND, ErrorCode.CONFLICT, ErrorCode.VALIDATION_ERROR)
  @ApiOkResponse({ type: TransactionRequestResponse })
  cancel(
    @Portal() grant: PortalGrant,
    @IdParam('Subscription') id: string,
    @Body() body: TransactionRequestDto,
  ): Promise<TransactionRequestResponse> {
    return this.portal.cancelTransaction(grant, id, body.account);
  }

  /** The revoke seen on-chain: no further charge; `Completed` at the end of the paid period. */
  @IdempotentPost('subscriptions/:id/cancel/confirm')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Confirm a signed revoke' })
  @ApiJsonBodyErrors(SUBSCRIPTION_NOT_FOUND, ErrorCode.VALIDATION_ERROR)
  @ApiOkResponse({ type: PortalSubscriptionResponse })
  confirmCancel(
    @Portal() grant: PortalGrant,
    @IdParam('Subscription') id: string,
    @Body() body: ConfirmSignatureDto,
  ): Promise<PortalSubscriptionResponse> {
    return this.portal.confirmCancel(grant, id, body.signature);
  }
}
