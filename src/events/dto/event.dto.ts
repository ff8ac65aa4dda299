import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { EVENT_TYPES, EventType } from '../event-types';

const toInt = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value;

export class ListEventsQueryDto {
  /**
   * Only events of this type.
   * @example "customer.created"
   */
  @IsOptional()
  @IsIn(EVENT_TYPES)
  type?: EventType;

  /**
   * How many events to return, newest first: 1-1000, default 100. Events accumulate with every
   * change, so this list, unlike the others, is paged.
   * @example 100
   */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(1000)
  limit?: number;

  /**
   * Cursor: return the events older than this event id (the last id of the previous page).
   * @example "evt_5b3f1c2e-8a4d-4e6f-9b1a-2c3d4e5f6a7b"
   */
  @IsOptional()
  @IsString()
  @Matches(/^evt_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, {
    message: 'must be an event id (evt_<uuid>)',
  })
  startingAfter?: string;
}
