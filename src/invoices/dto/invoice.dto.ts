import { IsPlainEmail } from '../../common/validators/mailbox';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsISO8601,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { PageQueryDto } from '../../common/dto/page-query.dto';
import { MaxLength, MinLength } from '../../common/validators/chars';
import { IsPositiveAmount } from '../../common/validators/decimal-amount';
import { IsSolanaAddress } from '../../common/validators/solana-address';
import { IsVisibleText } from '../../common/validators/visible-text';
import { MINT_SYMBOLS, type MintSymbol } from '../../solana/mints';
import { INVOICE_STATUSES, type InvoiceStatus } from '../invoice-status';

const given = (_: object, value: unknown) => value !== undefined;

export class LineItemDto {
  /** 1-200 characters. @example "Consulting, November" */
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  @IsVisibleText()
  description!: string;

  /** A whole number, 1 to 1 000 000. @example 3 */
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  quantity!: number;

  /** The price of one, a decimal string greater than 0 with at most 6 decimals. @example "150" */
  @IsPositiveAmount()
  unitAmount!: string;
}

export class CreateInvoiceDto {
  /**
   * The paying customer's wallet (base58). The customer is created, or updated with
   * `customerEmail` and `customerLabel`, in the same transaction as the invoice.
   * @example "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
   */
  @IsString()
  @IsSolanaAddress()
  walletAddress!: string;

  /** 1 to 50 line items. */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  @ValidateNested({ each: true })
  @Type(() => LineItemDto)
  lineItems!: LineItemDto[];

  /** The stablecoin the invoice is paid in. @example "USDC" */
  @IsIn(MINT_SYMBOLS)
  mint!: MintSymbol;

  /**
   * Tax on the subtotal in basis points, 0-10000 (100 = 1%), rounded half up to the base unit.
   * Default 0.
   * @example 825
   */
  @ValidateIf(given)
  @IsInt()
  @Min(0)
  @Max(10_000)
  taxBps?: number;

  /** An internal note, up to 500 characters. @example "PO 4471" */
  @ValidateIf(given)
  @IsString()
  @MaxLength(500)
  memo?: string;

  /**
   * When payment is due: an ISO 8601 date-time in the future. The invoice becomes overdue after
   * it and expires `INVOICE_EXPIRY_DAYS` later.
   * @example "2026-12-31T23:59:59.000Z"
   */
  @ValidateIf(given)
  @IsString()
  @IsISO8601({ strict: true, strictSeparator: true })
  dueDate?: string;

  /**
   * Sets the customer's e-mail; an invoice notification is sent to it (or to the e-mail the
   * customer already has).
   * @example "ada@example.com"
   */
  @ValidateIf(given)
  @IsString()
  @MaxLength(254)
  @IsPlainEmail()
  customerEmail?: string;

  /** Sets the customer's display name, up to 100 characters. @example "Ada Lovelace" */
  @ValidateIf(given)
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  @IsVisibleText()
  customerLabel?: string;
}

export class ListInvoicesQueryDto extends PageQueryDto {
  /** Only invoices in this status. @example "Open" */
  @IsOptional()
  @IsIn(INVOICE_STATUSES)
  status?: InvoiceStatus;

  /**
   * Case-insensitive substring of the onchainId, the number, the memo, or the customer's label
   * or wallet address.
   * @example "PO 44"
   */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  search?: string;
}

/** `POST /api/invoices/:id/payments`: attaches an unattributed payment to the invoice. */
export class AttachPaymentDto {
  /**
   * An `unattributed` line of the payments ledger (`GET /api/payments?kind=unattributed`), in the
   * invoice's mint.
   * @example "0b7d3c1e-8f2a-4c5d-9e6f-1a2b3c4d5e6f"
   */
  @IsUUID()
  paymentId!: string;
}
