import { Body, Controller, Get, HttpCode, HttpStatus, Put } from '@nestjs/common';
import { IdempotentPost } from '../idempotency/idempotent-post.decorator';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { SecretResponse } from '../common/decorators/secret-response.decorator';
import { MerchantId } from '../common/decorators/current-merchant.decorator';
import { ErrorCode } from '../common/errors/error-codes';
import { ApiAuthenticated, ApiJsonBodyErrors } from '../common/swagger/api-errors.decorator';
import { SetWebhookDto, WebhookResponse, WebhookSecretResponse } from './dto/webhook.dto';
import { WebhookSettingsService } from './webhook-settings.service';

@ApiTags('Webhook configuration')
@ApiAuthenticated()
@Controller('api/settings/webhook')
export class WebhookSettingsController {
  constructor(private readonly webhooks: WebhookSettingsService) {}

  /** The configured endpoint, or null. */
  @Get()
  @ApiOperation({ summary: 'Get the webhook endpoint' })
  get(@MerchantId() merchantId: string): Promise<WebhookResponse> {
    return this.webhooks.get(merchantId);
  }

  /** Sets the endpoint (HTTPS), or removes it with null. */
  @Put()
  @ApiOperation({ summary: 'Set or remove the webhook endpoint' })
  @ApiJsonBodyErrors([ErrorCode.VALIDATION_ERROR, 'webhookUrl: must be an https URL'])
  set(@MerchantId() merchantId: string, @Body() body: SetWebhookDto): Promise<WebhookResponse> {
    return this.webhooks.set(merchantId, body.webhookUrl);
  }

  /** The secret that signs deliveries (HMAC-SHA256, `service-signature` header). */
  @Get('secret')
  @ApiOperation({ summary: 'Get the webhook signing secret' })
  getSecret(@MerchantId() merchantId: string): Promise<WebhookSecretResponse> {
    return this.webhooks.getSecret(merchantId);
  }

  /** Issues a new signing secret; the old one keeps signing alongside it for 24 hours. */
  @IdempotentPost('secret/rotate')
  @SecretResponse()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Rotate the webhook signing secret' })
  rotateSecret(@MerchantId() merchantId: string): Promise<WebhookSecretResponse> {
    return this.webhooks.rotateSecret(merchantId);
  }
}
