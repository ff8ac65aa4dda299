import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  IsUUID,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { PageQueryDto } from '../../common/dto/page-query.dto';
import { MaxLength } from '../../common/validators/chars';
import { LineItemDto } from '../../invoices/dto/invoice.dto';
import {
  CREDIT_NOTE_ACTIONS,
  CREDIT_NOTE_REASONS,
  type CreditNoteAction,
  type CreditNoteReason,
} from '../entities/credit-note.entity';

const given = (_: object, value: unknown) => value !== undefined && value !== null;

export class CreateCreditNoteDto {
  /**
   * What is credited, 1 to 50 lines, priced as the invoice's lines are; the invoice's tax
   * applies to them.
   */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  @ValidateNested({ each: true })
  @Type(() => LineItemDto)
  lines!: LineItemDto[];

  /**
   * `reduce_due`: an Open invoice asks for less; `refund`: the money goes back to the payer
   * (a refund of one of its payments is created with it, for the merchant to sign); `credit`:
   * the customer's credit balance, applied to its next invoice in the mint.
   * @example "reduce_due"
   */
  @IsIn(CREDIT_NOTE_ACTIONS)
  action!: CreditNoteAction;

  /** @example "order_change" */
  @IsIn(CREDIT_NOTE_REASONS)
  reason!: CreditNoteReason;

  /** Up to 500 characters, printed on the credit note. @example "One seat fewer from November" */
  @ValidateIf(given)
  @IsString()
  @MaxLength(500)
  memo?: string | null;

  /**
   * `refund` only: the payment of the invoice to refund (a ledger line id); absent: the first
   * of its payments with enough left. @example "0b7d3c1e-8f2a-4c5d-9e6f-1a2b3c4d5e6f"
   */
  @ValidateIf(given)
  @IsUUID()
  paymentId?: string | null;
}

export class ListCreditNotesQueryDto extends PageQueryDto {
  /** Only the credit notes of this invoice. */
  @IsOptional()
  @IsUUID()
  invoiceId?: string;

  /** Only this customer's credit notes. */
  @IsOptional()
  @IsUUID()
  customerId?: string;
}
