import { IsPlainEmail } from '../../common/validators/mailbox';
import { IsOptional, IsString, ValidateIf } from 'class-validator';
import { PageQueryDto } from '../../common/dto/page-query.dto';
import { MaxLength, MinLength } from '../../common/validators/chars';
import { IsVisibleText } from '../../common/validators/visible-text';
import { IsSolanaAddress } from '../../common/validators/solana-address';

const given = (_: object, value: unknown) => value !== undefined;

export class CreateCustomerDto {
  /**
   * The customer's wallet (base58 public key, 32-44 characters). Upsert key: an existing
   * customer with this wallet is updated and returned instead of duplicated.
   * @example "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
   */
  @IsString()
  @IsSolanaAddress()
  walletAddress!: string;

  /**
   * E-mail for invoice notifications. `null` is not accepted here: clear it with PATCH.
   * @example "ada@example.com"
   */
  @ValidateIf(given)
  @IsString()
  @MaxLength(254)
  @IsPlainEmail()
  email?: string;

  /**
   * Display name, 1-100 characters.
   * @example "Ada Lovelace"
   */
  @ValidateIf(given)
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  @IsVisibleText()
  label?: string;
}

export class UpdateCustomerDto {
  /**
   * New e-mail, or `null` to clear it. Omit to leave unchanged.
   * @example "ada@example.com"
   */
  @IsOptional()
  @IsString()
  @MaxLength(254)
  @IsPlainEmail()
  email?: string | null;

  /**
   * New display name (1-100 characters), or `null` to clear it. Omit to leave unchanged.
   * @example "Ada L."
   */
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  @IsVisibleText()
  label?: string | null;
}

export class ListCustomersQueryDto extends PageQueryDto {
  /**
   * Case-insensitive substring matched against wallet address, label and e-mail.
   * @example "ada"
   */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  search?: string;
}
