import { Injectable } from '@nestjs/common';
import { sql } from '../database/typed-sql';
import { Db } from '../database/db';
import { typedCursor } from '../database/row-batches';
import type { IExportLedgerQuery, IExportLedgerResult } from './ledger-export.repository.types';

/** A ledger line as the export writes it (amounts in base units as text, times ISO 8601). */
export type LedgerExportRow = IExportLedgerResult;

/**
 * The merchant's lines in `[from, to)`, oldest first, by the merchant's (merchant, created_at,
 * id) index. Read through a cursor in batches: an export of any length holds two batches.
 */
const exportLedger = sql<IExportLedgerQuery>`
  SELECT pm.id, api_time(pm.created_at) AS "created_at!", pm.kind, pm.status,
         pm.amount::text AS "amount!", pm.fee::text AS "fee!", pm.excess::text AS "excess!",
         pm.mint, pm.signature, pm.instruction, pm.invoice_id, pm.subscription_id, pm.period,
         pm.customer_id, pm.payer, pm.destination, pm."references", pm.note,
         pm.slot::text AS slot, api_time(pm.finalized_at) AS finalized_at
    FROM payments pm
   WHERE pm.merchant_id = $merchantId!
     AND ($from::timestamptz IS NULL OR pm.created_at >= $from)
     AND ($to::timestamptz IS NULL OR pm.created_at < $to)
   ORDER BY pm.created_at, pm.id`;

/** The ledger's export (the `payments` table's owner, as `PaymentsRepository`). */
@Injectable()
export class LedgerExportRepository {
  constructor(private readonly db: Db) {}

  /** Every line of the merchant in `[from, to)`, oldest first, a batch at a time. */
  stream(
    merchantId: string,
    range: { from: Date | null; to: Date | null },
    onBatch: (rows: LedgerExportRow[]) => Promise<boolean>,
  ): Promise<void> {
    return this.db.forEachBatch(
      typedCursor(exportLedger, { merchantId, from: range.from, to: range.to }),
      onBatch,
    );
  }
}
