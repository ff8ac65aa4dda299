import { IsIn, IsISO8601, IsOptional } from 'class-validator';

export const LEDGER_EXPORT_FORMATS = ['csv'] as const;

export class LedgerExportQueryDto {
  /** Lines written at or after this time (ISO 8601). Absent: from the first. @example "2026-11-01T00:00:00Z" */
  @IsOptional()
  @IsISO8601({ strict: true })
  from?: string;

  /** Lines written before this time (ISO 8601). Absent: up to now. @example "2026-12-01T00:00:00Z" */
  @IsOptional()
  @IsISO8601({ strict: true })
  to?: string;

  /** `csv` (the only format, and the default). @example "csv" */
  @IsOptional()
  @IsIn(LEDGER_EXPORT_FORMATS)
  format?: (typeof LEDGER_EXPORT_FORMATS)[number];
}
