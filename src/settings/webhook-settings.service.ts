import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { ValidationError } from '../common/errors/domain-error';
import { AppConfig } from '../config/app-config';
import { MerchantsService, WebhookSecrets } from '../merchants/merchants.service';
import { WebhookResponse, WebhookSecretResponse } from './dto/webhook.dto';
import { webhookUrlProblem } from '../webhooks/webhook-url';

/** How long a rotated-out secret keeps signing alongside the new one (DESIGN D13). */
export const SECRET_ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

/**
 * The merchant's webhook endpoint and signing secret, kept on the merchant's account (the
 * merchants module owns the row; this is the self-service side of it).
 */
@Injectable()
export class WebhookSettingsService {
  constructor(
    private readonly merchants: MerchantsService,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  async get(merchantId: string): Promise<WebhookResponse> {
    return { webhookUrl: await this.merchants.webhookUrl(merchantId) };
  }

  /**
   * Sets the endpoint, or removes it with null (deliveries stop). Affects every delivery not yet sent.
   * @throws ValidationError when the URL is not acceptable for this cluster.
   */
  async set(merchantId: string, webhookUrl: string | null): Promise<WebhookResponse> {
    const url = webhookUrl === null ? null : webhookUrl.trim();
    if (url !== null) {
      const problem = webhookUrlProblem(url, this.config.isLocalnet);
      if (problem) {
        throw new ValidationError(`webhookUrl: ${problem}`, [
          { field: 'webhookUrl', message: problem },
        ]);
      }
    }
    return { webhookUrl: await this.merchants.setWebhookUrl(merchantId, url) };
  }

  async getSecret(merchantId: string): Promise<WebhookSecretResponse> {
    return this.secretView(await this.merchants.webhookSecrets(merchantId));
  }

  /**
   * Issues a new signing secret. The replaced one keeps signing for 24 hours; rotating again
   * within that window drops the older one at once (at most two secrets sign).
   */
  async rotateSecret(merchantId: string): Promise<WebhookSecretResponse> {
    const secrets = await this.merchants.rotateWebhookSecret(merchantId, SECRET_ROTATION_GRACE_MS);
    return this.secretView(secrets);
  }

  private secretView(secrets: WebhookSecrets): WebhookSecretResponse {
    const expires = secrets.previousWebhookSecretExpiresAt;
    const inGrace = secrets.previousWebhookSecret && expires && expires > this.clock.now();
    return {
      secret: secrets.webhookSecret,
      previousSecretExpiresAt: inGrace ? expires.toISOString() : null,
    };
  }
}
