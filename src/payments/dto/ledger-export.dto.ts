import { IsIn, IsOptional, Matches } from 'class-validator';

export const LEDGER_EXPORT_FORMATS = ['csv'] as const;

/**
 * A date, or a date and time with an offset (`Z` or `+hh:mm`), as ISO 8601 writes them in full:
 * the forms `Date` reads the same everywhere (ISO 8601's week dates, ordinal dates and basic
 * format are refused rather than misread).
 */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/;
const DATE_TIME_MESSAGE =
  'must be an ISO 8601 date (2026-11-01) or date and time with an offset (2026-11-01T00:00:00Z)';

export class LedgerExportQueryDto {
  /** Lines written at or after this time (ISO 8601). Absent: from the first. @example "2026-11-01T00:00:00Z" */
  @IsOptional()
  @Matches(DATE_TIME, { message: `from ${DATE_TIME_MESSAGE}` })
  from?: string;

  /** Lines written before this time (ISO 8601). Absent: up to now. @example "2026-12-01T00:00:00Z" */
  @IsOptional()
  @Matches(DATE_TIME, { message: `to ${DATE_TIME_MESSAGE}` })
  to?: string;

  /** `csv` (the only format, and the default). @example "csv" */
  @IsOptional()
  @IsIn(LEDGER_EXPORT_FORMATS)
  format?: (typeof LEDGER_EXPORT_FORMATS)[number];
}
