import { LockMode } from '@mikro-orm/core';
import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { generateWebhookSecret } from '../auth/secrets';
import { Clock } from '../common/clock';
import { NotFoundError, ValidationError } from '../common/errors/domain-error';
import { AppConfig } from '../config/app-config';
import { Merchant } from '../merchants/entities/merchant.entity';
import { WebhookResponse, WebhookSecretResponse } from './dto/webhook.dto';
import { webhookUrlProblem } from '../webhooks/webhook-url';

/** How long a rotated-out secret keeps signing alongside the new one (DESIGN D13). */
export const SECRET_ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

/** The merchant's webhook endpoint and signing secret. */
@Injectable()
export class WebhookSettingsService {
  constructor(
    private readonly em: EntityManager,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  async get(merchantId: string): Promise<WebhookResponse> {
    const merchant = await this.merchant(this.em.fork(), merchantId);
    return { webhookUrl: merchant.webhookUrl };
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
    const em = this.em.fork();
    const merchant = await this.merchant(em, merchantId);
    merchant.webhookUrl = url;
    merchant.updatedAt = this.clock.now();
    await em.flush();
    return { webhookUrl: merchant.webhookUrl };
  }

  async getSecret(merchantId: string): Promise<WebhookSecretResponse> {
    return this.secretView(await this.merchant(this.em.fork(), merchantId));
  }

  /**
   * Issues a new signing secret. The replaced one keeps signing for 24 hours; rotating again
   * within that window drops the older one at once (at most two secrets sign).
   */
  async rotateSecret(merchantId: string): Promise<WebhookSecretResponse> {
    return this.em.fork().transactional(async (em) => {
      const merchant = await this.merchant(em, merchantId, LockMode.PESSIMISTIC_WRITE);
      const now = this.clock.now();
      merchant.previousWebhookSecret = merchant.webhookSecret;
      merchant.previousWebhookSecretExpiresAt = new Date(now.getTime() + SECRET_ROTATION_GRACE_MS);
      merchant.webhookSecret = generateWebhookSecret();
      merchant.updatedAt = now;
      await em.flush();
      return this.secretView(merchant);
    });
  }

  private secretView(merchant: Merchant): WebhookSecretResponse {
    const expires = merchant.previousWebhookSecretExpiresAt;
    const inGrace = merchant.previousWebhookSecret && expires && expires > this.clock.now();
    return {
      secret: merchant.webhookSecret,
      previousSecretExpiresAt: inGrace ? expires.toISOString() : null,
    };
  }

  private async merchant(em: EntityManager, id: string, lockMode?: LockMode): Promise<Merchant> {
    const merchant = await em.findOne(Merchant, { id }, lockMode ? { lockMode } : {});
    if (!merchant) throw new NotFoundError('Merchant');
    return merchant;
  }
}
