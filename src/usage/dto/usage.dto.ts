import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsISO8601,
  IsString,
  IsUUID,
  Matches,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { IsQuantity } from '../../common/validators/decimal-amount';

/** The most events one `POST /api/usage-events` takes. */
export const MAX_USAGE_BATCH = 1000;

/** A null is as good as absent. */
const given = (_: object, value: unknown) => value !== undefined && value !== null;

/** One usage event: of a subscription, or of the customer's one metered subscription. */
export class UsageEventDto {
  /**
   * The merchant's own id for the event, 1-100 printable ASCII characters: an event sent again
   * with an id already taken is ignored (counted once). @example "req_7f3a9c"
   */
  @IsString()
  @Matches(/^[\x21-\x7e]{1,100}$/, { message: 'must be 1-100 printable ASCII characters' })
  id!: string;

  /** The metered subscription (or give `customerId`). */
  @ValidateIf(given)
  @IsUUID()
  subscriptionId?: string | null;

  /** The customer whose one live subscription with this meter it is (or give `subscriptionId`). */
  @ValidateIf(given)
  @IsUUID()
  customerId?: string | null;

  /** The meter's name, as on the plan. @example "api_calls" */
  @IsString()
  @Matches(/^[a-z0-9_.-]{1,64}$/, { message: 'must be a meter name' })
  meter!: string;

  /** How much was used: an exact decimal greater than 0, up to 6 places. @example "1" */
  @IsQuantity()
  quantity!: string;

  /**
   * When, ISO 8601 date and time with its offset (`Z` or `±hh:mm`, at most 14 hours): the event
   * counts toward the period this falls in. @example "2026-11-27T10:15:30Z"
   */
  @IsISO8601({ strict: true, strictSeparator: true })
  @Matches(/T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-](0\d|1[0-4]):[0-5]\d)$/, {
    message: 'timestamp must be a date and time with its offset (Z or ±hh:mm)',
  })
  timestamp!: string;
}

export class IngestUsageDto {
  /** 1 to 1,000 events, written together or not at all. */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_USAGE_BATCH)
  @ValidateNested({ each: true })
  @Type(() => UsageEventDto)
  events!: UsageEventDto[];
}
