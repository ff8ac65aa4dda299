import { IsIn, IsOptional, IsUUID } from 'class-validator';
import { PAYMENT_STATUSES, type PaymentStatus } from '../entities/payment.entity';

export class ListPaymentsQueryDto {
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
}
