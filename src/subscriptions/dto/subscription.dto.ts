import { IsIn, IsOptional } from 'class-validator';
import { SUBSCRIPTION_STATUSES, type SubscriptionStatus } from '../subscription-status';

export class ListSubscriptionsQueryDto {
  /** Only subscriptions in this status. @example "Active" */
  @IsOptional()
  @IsIn(SUBSCRIPTION_STATUSES)
  status?: SubscriptionStatus;
}
