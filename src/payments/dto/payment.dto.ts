import { IsIn, IsOptional, IsUUID } from 'class-validator';
import { PageQueryDto } from '../../common/dto/page-query.dto';
import {
  PAYMENT_KINDS,
  PAYMENT_STATUSES,
  type PaymentKind,
  type PaymentStatus,
} from '../entities/payment.entity';

export class ListPaymentsQueryDto extends PageQueryDto {
  /** Only the payments of this invoice. */
  @IsOptional()
  @IsUUID()
  invoiceId?: string;

  /** Only the charges of this subscription. */
  @IsOptional()
  @IsUUID()
  subscriptionId?: string;

  /** Only this customer's payments. */
  @IsOptional()
  @IsUUID()
  customerId?: string;

  /** @example "finalized" */
  @IsOptional()
  @IsIn(PAYMENT_STATUSES)
  status?: PaymentStatus;

  /** Only this kind (`unattributed`: the money a merchant has to resolve). @example "unattributed" */
  @IsOptional()
  @IsIn(PAYMENT_KINDS)
  kind?: PaymentKind;
}
