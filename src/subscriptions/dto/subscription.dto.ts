import { IsIn, IsOptional } from 'class-validator';
import { PageQueryDto } from '../../common/dto/page-query.dto';
import { SUBSCRIPTION_STATUSES, type SubscriptionStatus } from '../subscription-status';

export class ListSubscriptionsQueryDto extends PageQueryDto {
  /** Only subscriptions in this status. @example "Active" */
  @IsOptional()
  @IsIn(SUBSCRIPTION_STATUSES)
  status?: SubscriptionStatus;
}
