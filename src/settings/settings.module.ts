import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { MerchantsModule } from '../merchants/merchants.module';
import { ApiKeysController } from './api-keys.controller';
import { WebhookSettingsController } from './webhook-settings.controller';
import { WebhookSettingsService } from './webhook-settings.service';

/** Merchant self-service settings: API keys and the webhook endpoint and secret. */
@Module({
  imports: [AuthModule, MerchantsModule],
  controllers: [ApiKeysController, WebhookSettingsController],
  providers: [WebhookSettingsService],
  exports: [WebhookSettingsService],
})
export class SettingsModule {}
