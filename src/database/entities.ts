import { ApiKey } from '../auth/entities/api-key.entity';
import { Customer } from '../customers/entities/customer.entity';
import { Merchant } from '../merchants/entities/merchant.entity';
import { WebhookEvent } from '../webhooks/entities/event.entity';
import { WebhookDelivery } from '../webhooks/entities/webhook-delivery.entity';

/** Every entity of the service, registered explicitly (no file globbing at run time). */
export const ENTITIES = [Merchant, ApiKey, Customer, WebhookEvent, WebhookDelivery];
