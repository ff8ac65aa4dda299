import { formatSignedUnits, formatUnits } from '../common/money';
import type { LedgerExportRow } from './ledger-export.repository';

/** The export's columns, in order (docs/refunds.md, "Ledger export"). */
export const LEDGER_CSV_COLUMNS = [
  'created_at',
  'id',
  'kind',
  'status',
  'amount',
  'fee',
  'excess',
  'mint',
  'signature',
  'instruction',
  'invoice_id',
  'subscription_id',
  'period',
  'customer_id',
  'payer',
  'destination',
  'references',
  'note',
  'slot',
  'finalized_at',
] as const;

/**
 * A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break. Text that a
 * spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR first) is prefixed with `'`;
 * amounts are written by the money module and are never text.
 */
function text(value: string | null): string {
  if (value === null) return '';
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** One line of the ledger as a CSV record (with its line break). */
export function ledgerCsvLine(row: LedgerExportRow): string {
  return (
    [
      row.created_at,
      row.id,
      text(row.kind),
      text(row.status),
      formatSignedUnits(row.amount),
      formatUnits(row.fee),
      formatUnits(row.excess),
      text(row.mint),
      text(row.signature),
      row.instruction ?? '',
      row.invoice_id ?? '',
      row.subscription_id ?? '',
      row.period ?? '',
      row.customer_id ?? '',
      text(row.payer),
      text(row.destination),
      text(row.references?.join(' ') ?? null),
      text(row.note),
      row.slot ?? '',
      row.finalized_at ?? '',
    ].join(',') + '\r\n'
  );
}

/** The header record. */
export const LEDGER_CSV_HEADER = LEDGER_CSV_COLUMNS.join(',') + '\r\n';
