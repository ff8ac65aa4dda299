import { Injectable } from '@nestjs/common';
import { Db } from '../database/db';
import { INVOICE_COLUMNS, InvoiceRow } from '../invoices/invoice.mapper';

/** An invoice with what its checkout shows of the merchant and the customer billed. */
export interface CheckoutInvoiceRow extends InvoiceRow {
  merchant_name: string;
  merchant_wallet: string;
  customer_label: string | null;
  customer_wallet: string;
}

/**
 * The public checkout's reads of other modules' tables (invoices, merchants, customers, plans):
 * by id alone, any merchant's (the payer holds the link). The checkout owns no table and writes
 * nothing here.
 */
@Injectable()
export class CheckoutRepository {
  constructor(private readonly db: Db) {}

  /** Undefined when there is no such invoice. */
  async invoice(id: string): Promise<CheckoutInvoiceRow | undefined> {
    const [row] = await this.db.execute<CheckoutInvoiceRow[]>(
      `SELECT ${INVOICE_COLUMNS}, m.name AS merchant_name, m.wallet_address AS merchant_wallet,
              c.label AS customer_label, c.wallet_address AS customer_wallet
         FROM invoices i JOIN merchants m ON m.id = i.merchant_id
         JOIN customers c ON c.id = i.customer_id
        WHERE i.id = ?`,
      [id],
    );
    return row;
  }

  /** The plan's description: null when it has none, or there is no such plan. */
  async planDescription(id: string): Promise<string | null> {
    const [row] = await this.db.execute<{ description: string | null }[]>(
      `SELECT description FROM plans WHERE id = ?`,
      [id],
    );
    return row?.description ?? null;
  }
}
