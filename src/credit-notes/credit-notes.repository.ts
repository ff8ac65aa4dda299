import { Injectable } from '@nestjs/common';
import { sql } from '../database/typed-sql';
import type { ListPage } from '../common/pagination';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { typedCursor } from '../database/row-batches';
import type { StoredLineItem } from '../invoices/entities/invoice.entity';
import type { MintSymbol } from '../solana/mints';
import type { CreditNoteAction, CreditNoteReason } from './entities/credit-note.entity';
import type {
  ICreditNoteCreatedAtQuery,
  IFindCreditNoteQuery,
  IFindCreditNoteResult,
  IInsertCreditNoteQuery,
  IListCreditNotesQuery,
  ILockCreditNoteNumbersQuery,
  INextCreditNoteNumberQuery,
} from './credit-notes.repository.types';

/** A `credit_notes` row (bigints as text, timestamps ISO 8601 UTC), its enums and lines narrowed. */
export type CreditNoteRow = Omit<IFindCreditNoteResult, 'mint' | 'reason' | 'action' | 'lines'> & {
  mint: MintSymbol;
  reason: CreditNoteReason;
  action: CreditNoteAction;
  lines: StoredLineItem[];
};

const creditNoteRow = (row: IFindCreditNoteResult): CreditNoteRow =>
  row as unknown as CreditNoteRow;

/** A credit note as written (amounts in base units, as text). */
export interface CreditNoteInsert {
  id: string;
  merchantId: string;
  invoiceId: string;
  customerId: string;
  number: number;
  mint: string;
  lines: StoredLineItem[];
  subtotal: string;
  tax: string;
  amount: string;
  reason: CreditNoteReason;
  memo: string | null;
  action: CreditNoteAction;
  refundId: string | null;
  at: Date;
}

/**
 * Holds the merchant's credit note numbers for the caller's transaction (an advisory lock), so
 * numbers follow each other without gaps: a credit note and its number commit together, or
 * neither does.
 */
const lockCreditNoteNumbers = sql<ILockCreditNoteNumbersQuery>`
  SELECT pg_advisory_xact_lock(hashtextextended('credit_notes:' || $merchantId!::text, 0))
    AS "locked!"`;

/** The merchant's next credit note number (under `lockCreditNoteNumbers`). */
const nextCreditNoteNumber = sql<INextCreditNoteNumberQuery>`
  SELECT coalesce(max(number), 0) + 1 AS "next!" FROM credit_notes
   WHERE merchant_id = $merchantId!`;

const findCreditNote = sql<IFindCreditNoteQuery>`
  SELECT cn.id, cn.merchant_id, cn.invoice_id, cn.customer_id, cn.number, cn.mint, cn.lines,
         cn.subtotal::text AS "subtotal!", cn.tax::text AS "tax!", cn.amount::text AS "amount!",
         cn.reason, cn.memo, cn.action, cn.refund_id, api_time(cn.created_at) AS "created_at!"
    FROM credit_notes cn
   WHERE cn.id = $id! AND ($merchantId::uuid IS NULL OR cn.merchant_id = $merchantId)`;

/** The merchant's credit notes, newest first, narrowed by invoice and customer, a page at a time. */
const listCreditNotes = sql<IListCreditNotesQuery>`
  SELECT cn.id, cn.merchant_id, cn.invoice_id, cn.customer_id, cn.number, cn.mint, cn.lines,
         cn.subtotal::text AS "subtotal!", cn.tax::text AS "tax!", cn.amount::text AS "amount!",
         cn.reason, cn.memo, cn.action, cn.refund_id, api_time(cn.created_at) AS "created_at!"
    FROM credit_notes cn
   WHERE cn.merchant_id = $merchantId!
     AND ($invoiceId::uuid IS NULL OR cn.invoice_id = $invoiceId)
     AND ($customerId::uuid IS NULL OR cn.customer_id = $customerId)
     AND ($afterId::uuid IS NULL
          OR (cn.created_at, cn.id) < ($afterCreatedAt::timestamptz, $afterId))
   ORDER BY cn.created_at DESC, cn.id DESC
   LIMIT $limit::int`;

const insertCreditNote = sql<IInsertCreditNoteQuery>`
  INSERT INTO credit_notes AS cn (id, created_at, updated_at, merchant_id, invoice_id, customer_id,
    number, mint, lines, subtotal, tax, amount, reason, memo, action, refund_id)
  VALUES ($id!, $at!, $at!, $merchantId!, $invoiceId!, $customerId!, $number!, $mint!, $lines!,
    $subtotal!::bigint, $tax!::bigint, $amount!::bigint, $reason!, $memo, $action!, $refundId)
  RETURNING cn.id, cn.merchant_id, cn.invoice_id, cn.customer_id, cn.number, cn.mint, cn.lines,
         cn.subtotal::text AS "subtotal!", cn.tax::text AS "tax!", cn.amount::text AS "amount!",
         cn.reason, cn.memo, cn.action, cn.refund_id, api_time(cn.created_at) AS "created_at!"`;

const creditNoteCreatedAt = sql<ICreditNoteCreatedAtQuery>`
  SELECT created_at FROM credit_notes WHERE id = $id! AND merchant_id = $merchantId!`;

/** Every statement on `credit_notes`: their owner. */
@Injectable()
export class CreditNotesRepository {
  constructor(private readonly db: Db) {}

  /** The merchant's next number, held until the caller's transaction ends. */
  async nextNumber(tx: SqlTx, merchantId: string): Promise<number> {
    await lockCreditNoteNumbers.run({ merchantId }, tx);
    const [row] = await nextCreditNoteNumber.run({ merchantId }, tx);
    return row.next;
  }

  async insert(tx: SqlTx, note: CreditNoteInsert): Promise<CreditNoteRow> {
    const [row] = await insertCreditNote.run({ ...note, lines: JSON.stringify(note.lines) }, tx);
    return creditNoteRow(row);
  }

  /** A credit note; `merchantId` null: any merchant's (the customer's link). */
  async find(merchantId: string | null, id: string): Promise<CreditNoteRow | null> {
    const [row] = await findCreditNote.run({ id, merchantId }, this.db);
    return row ? creditNoteRow(row) : null;
  }

  async list(
    merchantId: string,
    filters: { invoiceId?: string; customerId?: string },
    page: ListPage,
  ): Promise<CreditNoteRow[]> {
    const rows = await this.db.readAll(
      typedCursor(listCreditNotes, {
        merchantId,
        invoiceId: filters.invoiceId,
        customerId: filters.customerId,
        limit: page.limit,
        afterCreatedAt: page.afterCreatedAt,
        afterId: page.afterId,
      }),
    );
    return rows.map(creditNoteRow);
  }

  async createdAt(merchantId: string, id: string): Promise<string | undefined> {
    const [row] = await creditNoteCreatedAt.run({ id, merchantId }, this.db);
    return row?.created_at;
  }
}
