import { IsString, IsUrl, ValidateIf } from 'class-validator';
import { MaxLength } from '../../common/validators/chars';

export class SetWebhookDto {
  /**
   * HTTPS URL that receives signed event POSTs, or `null` to remove the endpoint and stop all
   * deliveries. Plain `http:` and loopback hosts are accepted only on localnet.
   * @example "https://merchant.example.com/webhooks/billing"
   */
  @ValidateIf((_, value) => value !== null)
  @IsString()
  @MaxLength(2048)
  @IsUrl(
    {
      protocols: ['https', 'http'],
      require_protocol: true,
      require_tld: false,
      allow_underscores: true,
    },
    { message: 'must be a valid http(s) URL' },
  )
  webhookUrl!: string | null;
}

export class WebhookResponse {
  /** The configured endpoint, or null when none is set. @example "https://merchant.example.com/webhooks/billing" */
  webhookUrl!: string | null;
}

export class WebhookSecretResponse {
  /** The current signing secret. @example "whsec_3vJ9xKpL2nR7tY5wB1cD6eH8gA3sQ9uV2xZ4yT4Fq8mZ" */
  secret!: string;

  /**
   * Until when the secret replaced by the latest rotation still signs deliveries (a second
   * `v1=` in the signature header); null when no rotation is in its grace period.
   * @example null
   */
  previousSecretExpiresAt!: string | null;
}
