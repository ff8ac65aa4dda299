import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db';

/** A ledger line seen at `confirmed`, followed to `finalized`. */
export interface ConfirmedPaymentRow {
  id: string;
  signature: string;
  merchant_id: string;
}

/** An Open invoice past a date. */
export interface DueInvoiceRow {
  id: string;
  merchant_id: string;
}

/**
 * What the invoice watcher reads of the ledger and the invoices (reads of `payments` and
 * `invoices`, their modules' tables, each one statement as it was). Their moves go through
 * their modules' services.
 */
@Injectable()
export class InvoiceWatchRepository {
  constructor(private readonly db: Db) {}

  /** Up to `limit` ledger lines at `confirmed` with a signature, the oldest first. */
  confirmedPayments(limit: number): Promise<ConfirmedPaymentRow[]> {
    return this.db.execute<ConfirmedPaymentRow[]>(
      `SELECT id, signature, merchant_id FROM payments
        WHERE status = 'confirmed' AND signature IS NOT NULL
        ORDER BY created_at LIMIT ?`,
      [limit],
    );
  }

  /** Up to `limit` Open invoices due before `now` not marked overdue yet, by due date. */
  newlyOverdue(now: Date, limit: number): Promise<DueInvoiceRow[]> {
    return this.db.execute<DueInvoiceRow[]>(
      `SELECT id, merchant_id FROM invoices
        WHERE status = 'Open' AND due_date < ? AND overdue_at IS NULL
        ORDER BY due_date LIMIT ?`,
      [now, limit],
    );
  }

  /** Up to `limit` Open invoices due before `before`, by due date. */
  openDueBefore(before: Date, limit: number): Promise<DueInvoiceRow[]> {
    return this.db.execute<DueInvoiceRow[]>(
      `SELECT id, merchant_id FROM invoices WHERE status = 'Open' AND due_date < ?
        ORDER BY due_date LIMIT ?`,
      [before, limit],
    );
  }
}
