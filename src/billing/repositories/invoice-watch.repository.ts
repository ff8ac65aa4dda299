import { Injectable } from '@nestjs/common';
import { sql } from '../../database/typed-sql';
import { Db } from '../../database/db';
import type {
  IConfirmedPaymentsQuery,
  IConfirmedPaymentsResult,
  INewlyOverdueQuery,
  INewlyOverdueResult,
  IOpenDueBeforeQuery,
} from './invoice-watch.repository.types';

/** A ledger line seen at `confirmed`, followed to `finalized`. */
export type ConfirmedPaymentRow = IConfirmedPaymentsResult;

/** An Open invoice past a date. */
export type DueInvoiceRow = INewlyOverdueResult;

/**
 * Up to `limit` ledger lines at `confirmed` with a signature, the oldest first (the signature is
 * not null by the WHERE: forced so).
 */
const confirmedPayments = sql<IConfirmedPaymentsQuery>`
  SELECT id, signature AS "signature!", merchant_id FROM payments
   WHERE status = 'confirmed' AND signature IS NOT NULL
   ORDER BY created_at LIMIT $limit!`;

/** Up to `limit` Open invoices due before `now` not marked overdue yet, by due date. */
const newlyOverdue = sql<INewlyOverdueQuery>`
  SELECT id, merchant_id FROM invoices
   WHERE status = 'Open' AND due_date < $now! AND overdue_at IS NULL
   ORDER BY due_date LIMIT $limit!`;

/** Up to `limit` Open invoices due before `before`, by due date. */
const openDueBefore = sql<IOpenDueBeforeQuery>`
  SELECT id, merchant_id FROM invoices WHERE status = 'Open' AND due_date < $before!
   ORDER BY due_date LIMIT $limit!`;

/**
 * What the invoice watcher reads of the ledger and the invoices (reads of `payments` and
 * `invoices`, their modules' tables, each one statement as it was), typed by pgtyped from the
 * migrated schema (`npm run db:types`). Their moves go through their modules' services.
 */
@Injectable()
export class InvoiceWatchRepository {
  constructor(private readonly db: Db) {}

  /** Up to `limit` ledger lines at `confirmed` with a signature, the oldest first. */
  confirmedPayments(limit: number): Promise<ConfirmedPaymentRow[]> {
    return confirmedPayments.run({ limit }, this.db);
  }

  /** Up to `limit` Open invoices due before `now` not marked overdue yet, by due date. */
  newlyOverdue(now: Date, limit: number): Promise<DueInvoiceRow[]> {
    return newlyOverdue.run({ now, limit }, this.db);
  }

  /** Up to `limit` Open invoices due before `before`, by due date. */
  openDueBefore(before: Date, limit: number): Promise<DueInvoiceRow[]> {
    return openDueBefore.run({ before, limit }, this.db);
  }
}
