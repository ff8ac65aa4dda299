import { IsIn, IsOptional, IsString, IsUUID, ValidateIf } from 'class-validator';
import { PageQueryDto } from '../../common/dto/page-query.dto';
import { MaxLength } from '../../common/validators/chars';
import { IsPositiveAmount } from '../../common/validators/decimal-amount';
import { REFUND_STATUSES, type RefundStatus } from '../entities/refund.entity';

/** A null is as good as absent (a client that sends every field). */
const given = (_: object, value: unknown) => value !== undefined && value !== null;

export class CreateRefundDto {
  /**
   * What to give back, a decimal string greater than 0 with at most 6 decimal places; absent:
   * all that is left of the payment (what Pending and Succeeded refunds do not already hold).
   * @example "4.5"
   */
  @ValidateIf(given)
  @IsPositiveAmount()
  amount?: string | null;

  /** Why, up to 500 characters (shown to no one but the merchant). @example "Order cancelled" */
  @ValidateIf(given)
  @IsString()
  @MaxLength(500)
  reason?: string | null;
}

export class ListRefundsQueryDto extends PageQueryDto {
  /** Only the refunds of this ledger line. */
  @IsOptional()
  @IsUUID()
  paymentId?: string;

  /** Only the refunds of this invoice's payments. */
  @IsOptional()
  @IsUUID()
  invoiceId?: string;

  /** Only this customer's refunds. */
  @IsOptional()
  @IsUUID()
  customerId?: string;

  /** @example "Pending" */
  @IsOptional()
  @IsIn(REFUND_STATUSES)
  status?: RefundStatus;
}
