import { Type } from 'class-transformer';
import {
  IsDefined,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { MaxLength } from '../../common/validators/chars';

/**
 * What a resource server asks to be paid (x402 v2 `PaymentRequirements`). The scheme and network
 * are checked by the facilitator (an unsupported one is `isValid: false`, as x402 says), the
 * shape here.
 */
export class X402RequirementsDto {
  /** @example "exact" */
  @IsString()
  @MaxLength(32)
  scheme!: string;

  /** CAIP-2. @example "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" */
  @IsString()
  @MaxLength(64)
  network!: string;

  /** Base units of the asset, an integer. @example "10000" */
  @IsString()
  @Matches(/^[1-9][0-9]{0,18}$/, { message: 'must be a positive integer of base units' })
  amount!: string;

  /** The mint's address. @example "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" */
  @IsString()
  @MaxLength(44)
  asset!: string;

  /** The wallet paid: the merchant's. @example "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin" */
  @IsString()
  @MaxLength(44)
  payTo!: string;

  /** @example 60 */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(86_400)
  maxTimeoutSeconds?: number;

  /** `feePayer` (the service key, from `GET /x402/supported`) and an optional `memo`. */
  @IsOptional()
  @IsObject()
  extra?: Record<string, unknown>;
}

/** The resource the payment is for. */
export class X402ResourceDto {
  /** @example "https://api.example.com/weather" */
  @IsString()
  @MaxLength(2048)
  url!: string;

  @IsOptional()
  @IsString()
  @MaxLength(1000)
  description?: string;

  @IsOptional()
  @IsString()
  @MaxLength(200)
  mimeType?: string;
}

export class X402SvmPayloadDto {
  /** The client's partially signed transaction, base64. */
  @IsString()
  @MaxLength(2000)
  @Matches(/^[A-Za-z0-9+/]+={0,2}$/, { message: 'transaction: must be base64' })
  transaction!: string;
}

/** What the client sent (x402 v2 `PaymentPayload`). */
export class X402PaymentPayloadDto {
  /** @example 2 */
  @IsInt()
  x402Version!: number;

  @IsOptional()
  @ValidateNested()
  @Type(() => X402ResourceDto)
  resource?: X402ResourceDto;

  /** The requirements the client chose to pay. */
  @IsDefined()
  @ValidateNested()
  @Type(() => X402RequirementsDto)
  accepted!: X402RequirementsDto;

  @IsDefined()
  @ValidateNested()
  @Type(() => X402SvmPayloadDto)
  payload!: X402SvmPayloadDto;

  @IsOptional()
  @IsObject()
  extensions?: Record<string, unknown>;
}

/** The body of `POST /x402/verify` and `POST /x402/settle` (x402 v2, section 7). */
export class X402RequestDto {
  /** @example 2 */
  @IsInt()
  x402Version!: number;

  @IsDefined()
  @ValidateNested()
  @Type(() => X402PaymentPayloadDto)
  paymentPayload!: X402PaymentPayloadDto;

  @IsDefined()
  @ValidateNested()
  @Type(() => X402RequirementsDto)
  paymentRequirements!: X402RequirementsDto;
}
