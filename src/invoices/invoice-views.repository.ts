import { Injectable } from '@nestjs/common';
import { sql } from '../database/typed-sql';
import { Db } from '../database/db';
import type { IListForCustomerResult } from './invoices.repository.types';
import { InvoiceRow, narrowed } from './invoices.repository';
import type {
  IFindForCheckoutQuery,
  IFindForCheckoutResult,
  IListForPortalQuery,
  IListForPortalResult,
} from './invoice-views.repository.types';

/** An invoice with what its checkout shows of the merchant and the customer billed. */
export type CheckoutInvoiceRow = InvoiceRow &
  Omit<IFindForCheckoutResult, keyof IListForCustomerResult>;

/** An invoice of a customer as the portal lists it (amounts as text). */
export type PortalInvoiceRow = IListForPortalResult;

/** An invoice by id alone, with its merchant's name and wallet and the customer billed. */
const findForCheckout = sql<IFindForCheckoutQuery>`
  SELECT i.id, i.merchant_id, i.customer_id, i.number, i.status, i.onchain_id, i.memo, i.mint,
         i.line_items, i.subtotal::text AS "subtotal!", i.tax_bps, i.tax::text AS "tax!",
         i.total::text AS "total!", i.amount_paid::text AS "amount_paid!",
         i.amount_refunded::text AS "amount_refunded!",
         i.amount_credited::text AS "amount_credited!",
         i.amount_credited_to_balance::text AS "amount_credited_to_balance!",
         GREATEST(i.total - i.amount_paid - i.amount_credited, 0)::text AS "amount_due!",
         api_time(i.due_date) AS due_date, api_time(i.paid_at) AS paid_at, i.payment_signature,
         api_time(i.created_at) AS "created_at!", api_time(i.updated_at) AS "updated_at!",
         m.name AS merchant_name, m.wallet_address AS merchant_wallet,
         c.label AS customer_label, c.wallet_address AS customer_wallet
    FROM invoices i JOIN merchants m ON m.id = i.merchant_id
    JOIN customers c ON c.id = i.customer_id
   WHERE i.id = $id!`;

/** A customer's invoices as the portal lists them, newest first. */
const listForPortal = sql<IListForPortalQuery>`
  SELECT i.id, i.number, i.status, i.mint, i.total::text AS "total!",
         i.amount_paid::text AS "amount_paid!",
         GREATEST(i.total - i.amount_paid - i.amount_credited, 0)::text AS "amount_due!",
         api_time(i.due_date) AS due_date
    FROM invoices i WHERE i.merchant_id = $merchantId! AND i.customer_id = $customerId!
   ORDER BY i.created_at DESC, i.id DESC`;

/**
 * The invoices as the customer's pages read them (the hosted checkout, the documents, the
 * portal): statements on `invoices` joined with what those pages show of merchant and customer.
 */
@Injectable()
export class InvoiceViewsRepository {
  constructor(private readonly db: Db) {}

  /**
   * An invoice by id alone, any merchant's (the public checkout: the payer holds the link), with
   * the merchant's name and wallet and the customer billed. Undefined when there is none.
   */
  async findForCheckout(id: string): Promise<CheckoutInvoiceRow | undefined> {
    const [row] = await findForCheckout.run({ id }, this.db);
    return row && narrowed(row);
  }

  /** A customer's invoices as the portal lists them, newest first. */
  listForPortal(merchantId: string, customerId: string): Promise<PortalInvoiceRow[]> {
    return listForPortal.run({ merchantId, customerId }, this.db);
  }
}
