import { Injectable } from '@nestjs/common';
import { Db } from '../database/db';
import { isoTimestamp } from '../database/sql';

/** The session's customer, with the merchant's name. */
export interface PortalCustomerRow {
  wallet_address: string;
  email: string | null;
  merchant_name: string;
}

/** An invoice of the session's customer as the portal lists it (amounts as text). */
export interface PortalInvoiceRow {
  id: string;
  number: number;
  status: string;
  mint: string;
  total: string;
  amount_paid: string;
  due_date: string;
}

/**
 * The portal's reads of other modules' tables (customers, merchants, invoices), always within
 * the session's merchant and customer. The portal owns no table and writes nothing: its changes
 * are the subscriptions' (`SubscriptionsService`).
 */
@Injectable()
export class PortalRepository {
  constructor(private readonly db: Db) {}

  /** Undefined when the customer is absent or another merchant's. */
  async customer(merchantId: string, customerId: string): Promise<PortalCustomerRow | undefined> {
    const [customer] = await this.db.execute<PortalCustomerRow[]>(
      `SELECT c.wallet_address, c.email, m.name AS merchant_name
         FROM customers c JOIN merchants m ON m.id = c.merchant_id
        WHERE c.id = ? AND c.merchant_id = ?`,
      [customerId, merchantId],
    );
    return customer;
  }

  /** The customer's invoices, newest first. */
  invoices(merchantId: string, customerId: string): Promise<PortalInvoiceRow[]> {
    return this.db.execute<PortalInvoiceRow[]>(
      `SELECT i.id, i.number, i.status, i.mint, i.total::text AS total,
              i.amount_paid::text AS amount_paid, ${isoTimestamp('i.due_date', 'due_date')}
         FROM invoices i WHERE i.merchant_id = ? AND i.customer_id = ?
        ORDER BY i.created_at DESC, i.id DESC`,
      [merchantId, customerId],
    );
  }
}
