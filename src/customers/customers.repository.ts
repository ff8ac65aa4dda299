import { Injectable } from '@nestjs/common';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { escapeLike, isoTimestamp } from '../database/sql';

/** A `customers` row as PostgreSQL returns it. */
export interface CustomerRow {
  id: string;
  merchant_id: string;
  wallet_address: string;
  email: string | null;
  label: string | null;
  /** ISO 8601 UTC, formatted by PostgreSQL (see CUSTOMER_COLUMNS). */
  created_at: string;
  updated_at: string;
}

/** A customer of the list, with how many invoices and subscriptions it has. */
export interface CustomerListRow extends CustomerRow {
  invoices: number;
  subscriptions: number;
}

/** A customer as an upsert left it: `created` when the row is new. */
export interface UpsertedCustomerRow extends CustomerRow {
  created: boolean;
}

/** A customer as an update left it: `changed` when a value really changed. */
export interface UpdatedCustomerRow extends CustomerRow {
  changed: boolean;
}

/** A customer to create, or to update by wallet (null leaves e-mail or label as it is). */
export interface CustomerUpsertRow {
  id: string;
  merchant_id: string;
  wallet_address: string;
  email: string | null;
  label: string | null;
  /** Domain time of the write. */
  at: Date;
}

/** The fields an update may change; null clears one. */
export type CustomerChanges = Partial<Record<'email' | 'label', string | null>>;

const CUSTOMER_COLUMNS = `id, merchant_id, wallet_address, email, label, ${isoTimestamp(
  'created_at',
)}, ${isoTimestamp('updated_at')}`;

/** Every statement on `customers`: the table's one owner (issue 22). */
/** A customer with its merchant's name, as the customer portal shows it. */
export interface PortalCustomerRow {
  wallet_address: string;
  email: string | null;
  merchant_name: string;
}

@Injectable()
export class CustomersRepository {
  constructor(private readonly db: Db) {}

  /**
   * The merchant's customers, newest first; `search` is a case-insensitive substring of wallet,
   * label or e-mail. The counts are grouped per customer over the merchant's invoices and
   * subscriptions (SQL on their tables: counting needs no import of their modules).
   */
  list(merchantId: string, search?: string): Promise<CustomerListRow[]> {
    const params: unknown[] = [merchantId];
    let where = 'merchant_id = ?';
    if (search) {
      const pattern = `%${escapeLike(search)}%`;
      where += ` AND (wallet_address ILIKE ? OR label ILIKE ? OR email ILIKE ?)`;
      params.push(pattern, pattern, pattern);
    }
    return this.db.execute<CustomerListRow[]>(
      `SELECT ${CUSTOMER_COLUMNS},
         coalesce(i.n, 0)::int AS invoices, coalesce(s.n, 0)::int AS subscriptions
         FROM customers
         LEFT JOIN (SELECT customer_id, count(*) AS n FROM invoices WHERE merchant_id = ?
                     GROUP BY customer_id) i ON i.customer_id = customers.id
         LEFT JOIN (SELECT customer_id, count(*) AS n FROM subscriptions WHERE merchant_id = ?
                     GROUP BY customer_id) s ON s.customer_id = customers.id
        WHERE ${where} ORDER BY customers.created_at DESC, customers.id DESC`,
      [merchantId, merchantId, ...params],
    );
  }

  /** The merchant's customer; undefined when absent or another merchant's. */
  async find(merchantId: string, id: string): Promise<CustomerRow | undefined> {
    const [row] = await this.db.execute<CustomerRow[]>(
      `SELECT ${CUSTOMER_COLUMNS} FROM customers WHERE id = ? AND merchant_id = ?`,
      [id, merchantId],
    );
    return row;
  }

  /** The merchant's customer with this wallet, read in the caller's transaction. */
  async findByWallet(
    tx: SqlTx,
    merchantId: string,
    walletAddress: string,
  ): Promise<CustomerRow | undefined> {
    const [row] = await tx.execute<CustomerRow[]>(
      `SELECT ${CUSTOMER_COLUMNS} FROM customers WHERE merchant_id = ? AND wallet_address = ?`,
      [merchantId, walletAddress],
    );
    return row;
  }

  /**
   * Creates the customer, or updates e-mail and label where given and different when the wallet
   * is already a customer of the merchant. One atomic statement: concurrent upserts of one wallet
   * never create a duplicate. @returns undefined when the wallet is a customer already and
   * nothing given differs (no row written).
   */
  async upsert(tx: SqlTx, row: CustomerUpsertRow): Promise<UpsertedCustomerRow | undefined> {
    // The conflict branch updates only when a given value differs from the row as locked: that
    // comparison sees the latest committed version, so concurrent upserts of one wallet record
    // one customer.created and no spurious customer.updated.
    const [upserted] = await tx.execute<UpsertedCustomerRow[]>(
      `INSERT INTO customers (id, merchant_id, wallet_address, email, label, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (merchant_id, wallet_address) DO UPDATE SET
         email = COALESCE(EXCLUDED.email, customers.email),
         label = COALESCE(EXCLUDED.label, customers.label),
         updated_at = EXCLUDED.updated_at
       WHERE (EXCLUDED.email IS NOT NULL AND EXCLUDED.email IS DISTINCT FROM customers.email)
          OR (EXCLUDED.label IS NOT NULL AND EXCLUDED.label IS DISTINCT FROM customers.label)
       RETURNING ${CUSTOMER_COLUMNS}, (xmax = 0) AS created`,
      [row.id, row.merchant_id, row.wallet_address, row.email, row.label, row.at, row.at],
    );
    return upserted;
  }

  /**
   * Sets the given fields of the merchant's customer under its row lock; `updated_at` moves to
   * `at` only when a value really changes. @returns undefined when absent or another merchant's.
   */
  async update(
    tx: SqlTx,
    merchantId: string,
    id: string,
    changes: CustomerChanges,
    at: Date,
  ): Promise<UpdatedCustomerRow | undefined> {
    const fields = (['email', 'label'] as const).filter((f) => changes[f] !== undefined);
    const values = fields.map((f) => changes[f] ?? null);
    const differs = fields.map((f) => `? IS DISTINCT FROM previous.old_${f}`).join(' OR ');
    const [row] = await tx.execute<UpdatedCustomerRow[]>(
      `WITH previous AS (
         SELECT id AS old_id, email AS old_email, label AS old_label FROM customers
          WHERE id = ? AND merchant_id = ? FOR UPDATE
       )
       UPDATE customers SET ${fields.map((f) => `${f} = ?`).join(', ')},
         updated_at = CASE WHEN ${differs} THEN ? ELSE updated_at END
       FROM previous WHERE customers.id = previous.old_id
       RETURNING ${CUSTOMER_COLUMNS}, (${differs}) AS changed`,
      [id, merchantId, ...values, ...values, at, ...values],
    );
    return row;
  }

  /** The customer with its merchant's name (the portal's header); undefined when absent. */
  async findWithMerchantName(
    merchantId: string,
    customerId: string,
  ): Promise<PortalCustomerRow | undefined> {
    const [customer] = await this.db.execute<PortalCustomerRow[]>(
      `SELECT c.wallet_address, c.email, m.name AS merchant_name
         FROM customers c JOIN merchants m ON m.id = c.merchant_id
        WHERE c.id = ? AND c.merchant_id = ?`,
      [customerId, merchantId],
    );
    return customer;
  }
}
