import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsUUID, Max, Min } from 'class-validator';

/** The largest page a list gives (`limit`). */
export const MAX_PAGE = 1000;

/** A query parameter of digits as a number (anything else is left for the validators to refuse). */
const toInt = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value;

/**
 * The optional page of a list (D6): without `limit` and `startingAfter` a list is the spec's full
 * array; with them, a slice of the same order (newest first). A page shorter than `limit` is the
 * last one. Extended by each list's query.
 */
export class PageQueryDto {
  /**
   * At most this many items, newest first: 1-1000. Without it, every item (after
   * `startingAfter` when given).
   * @example 100
   */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE)
  limit?: number;

  /**
   * Cursor: only the items after this one in the list's order (older; for a tie in `createdAt`,
   * a smaller id). Pass the last id of the previous page. An id of no item of this merchant is a
   * 400.
   * @example "0b7d3c1e-8f2a-4c5d-9e6f-1a2b3c4d5e6f"
   */
  @IsOptional()
  @IsUUID()
  startingAfter?: string;
}
