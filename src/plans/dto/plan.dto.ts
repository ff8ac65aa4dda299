import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsDivisibleBy,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { PageQueryDto } from '../../common/dto/page-query.dto';
import { MaxLength, MinLength } from '../../common/validators/chars';
import { IsPositiveAmount, IsQuantity } from '../../common/validators/decimal-amount';
import { IsVisibleText } from '../../common/validators/visible-text';
import { MINT_SYMBOLS, type MintSymbol } from '../../solana/mints';

/** One day: the shortest billing interval (spec section 8). */
export const MIN_INTERVAL_SECONDS = 86_400;
/** A year (8 760 hours): the on-chain plan stores hours in a u16-sized range (DESIGN D8). */
export const MAX_INTERVAL_SECONDS = 31_536_000;

/** Validate when present; `null` is then invalid (a label cannot be cleared). */
const present = (_: object, value: unknown) => value !== undefined;
/** Validate when a value is given; `null` means "none" (clears the field). */
const given = (_: object, value: unknown) => value !== undefined && value !== null;

/** The longest grace for late usage: a day. */
export const MAX_USAGE_GRACE_SECONDS = 86_400;
/** The grace for late usage when the meter names none: an hour. */
export const DEFAULT_USAGE_GRACE_SECONDS = 3_600;

/**
 * A plan's meter (docs/usage.md): usage beyond the included units is charged with the next
 * period's fixed fee, per block of `unitSize` units (a started block counts whole), at most
 * `cap` a period.
 */
export class MeterDto {
  /** What is counted: 1-64 of a-z, 0-9, `_`, `.`, `-`. @example "api_calls" */
  @IsString()
  @Matches(/^[a-z0-9_.-]{1,64}$/, { message: 'must be 1-64 of a-z, 0-9, "_", "." and "-"' })
  name!: string;

  /** The price of one block of `unitSize` units, a decimal string. @example "0.002" */
  @IsPositiveAmount()
  unitPrice!: string;

  /** Units per priced block, a decimal string (default "1": priced per unit). @example "1" */
  @IsOptional()
  @IsQuantity()
  unitSize?: string;

  /** Units each period includes at no charge (default "0"). @example "1000" */
  @IsOptional()
  @IsQuantity({ zero: true })
  includedUnits?: string;

  /**
   * The most one period's usage is charged, a decimal string: the customer authorises the fixed
   * fee plus this each period; usage past it is recorded and reported, never charged.
   * @example "50"
   */
  @IsPositiveAmount()
  cap!: string;

  /**
   * How long after a period ends its late events still count toward it, in seconds (default
   * 3600; at most a day, and less than the interval). The period is charged when it is over.
   * @example 3600
   */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_USAGE_GRACE_SECONDS)
  graceSeconds?: number;
}

export class CreatePlanDto {
  /**
   * Shown at checkout, 1-100 characters.
   * @example "Pro monthly"
   */
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  @IsVisibleText()
  label!: string;

  /**
   * Up to 500 characters, shown at checkout.
   * @example "All Pro features, billed every 30 days"
   */
  @ValidateIf(given)
  @IsString()
  @MaxLength(500)
  @IsVisibleText()
  description?: string | null;

  /** The stablecoin charged. @example "USDC" */
  @IsIn(MINT_SYMBOLS)
  mint!: MintSymbol;

  /**
   * Charged each period: a decimal string greater than 0 with at most 6 decimal places.
   * @example "9.99"
   */
  @IsPositiveAmount()
  amount!: string;

  /**
   * The billing interval in seconds: whole hours, from 86400 (a day) to 31536000 (a year).
   * @example 2592000
   */
  @IsInt()
  @Min(MIN_INTERVAL_SECONDS)
  @Max(MAX_INTERVAL_SECONDS)
  @IsDivisibleBy(3600, { message: 'intervalSeconds must be a whole number of hours (3600 s)' })
  intervalSeconds!: number;

  /**
   * A meter: the plan also charges usage, reported with `POST /api/usage-events`. `amount` is
   * then the fixed fee of each period.
   */
  @ValidateIf(given)
  @ValidateNested()
  @Type(() => MeterDto)
  meter?: MeterDto | null;
}

/**
 * What may change on a plan. `amount`, `mint` and `intervalSeconds` may not (every subscriber
 * authorised those terms): sending them is a 400 like any unknown field.
 */
export class UpdatePlanDto {
  /** @example "Pro monthly (2026)" */
  @ValidateIf(present)
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  @IsVisibleText()
  label?: string;

  /** Up to 500 characters, or `null` to clear it. @example "All Pro features" */
  @ValidateIf(given)
  @IsString()
  @MaxLength(500)
  @IsVisibleText()
  description?: string | null;

  /** `false` stops new subscriptions; existing ones go on. @example false */
  @ValidateIf(present)
  @IsBoolean()
  active?: boolean;
}

/** `GET /api/plans`: the optional page (D6). */
export class ListPlansQueryDto extends PageQueryDto {}
