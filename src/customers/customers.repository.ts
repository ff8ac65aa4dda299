import { Injectable } from '@nestjs/common';
import { sql } from '../database/typed-sql';
import type { ListPage } from '../common/pagination';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { ROW_BATCH, typedCursor } from '../database/row-batches';
import { escapeLike } from '../database/sql';
import type {
  ICustomerCreatedAtQuery,
  IFindCustomerQuery,
  IFindCustomerResult,
  IFindCustomerByWalletQuery,
  IFindWithMerchantNameQuery,
  IFindWithMerchantNameResult,
  IListCustomersPageQuery,
  IListCustomersQuery,
  IListCustomersResult,
  ISearchCustomersQuery,
  IUpdateCustomerQuery,
  IUpdateCustomerResult,
  IUpsertCustomerQuery,
  IUpsertCustomerResult,
} from './customers.repository.types';

/** A `customers` row as PostgreSQL returns it (timestamps ISO 8601 UTC, by `api_time`). */
export type CustomerRow = IFindCustomerResult;

/** A customer of the list, with how many invoices and subscriptions it has. */
export type CustomerListRow = IListCustomersResult;

/** A customer as an upsert left it: `created` when the row is new. */
export type UpsertedCustomerRow = IUpsertCustomerResult;

/** A customer as an update left it: `changed` when a value really changed. */
export type UpdatedCustomerRow = IUpdateCustomerResult;

/** A customer with its merchant's name, as the customer portal shows it. */
export type PortalCustomerRow = IFindWithMerchantNameResult;

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

/*
 * The merchant's customers, newest first, each with how many invoices and subscriptions it has
 * (SQL on their tables: counting needs no import of their modules).
 *
 * The whole list groups the merchant's invoices and subscriptions per customer once: for every
 * customer, that is the cheapest. A page or a search shows few of them, so their statements
 * count each shown customer's rows on the (customer_id, created_at, id) indexes instead (read
 * from the index alone, without the merchant: a customer's invoices and subscriptions are its
 * merchant's, so the counts are the whole list's). Those two are read through a cursor, an
 * unnamed statement planned for its values each time: a search uses the trigram index
 * (`customers_search_idx`) for a pattern it narrows and the merchant's index otherwise, which a
 * prepared statement's generic plan could not tell apart; `$afterId IS NULL` folds before
 * planning, and `LIMIT NULL` is no limit.
 */

/** Every customer of the merchant. */
const listCustomers = sql<IListCustomersQuery>`
  SELECT id, merchant_id, wallet_address, email, label, api_time(created_at) AS "created_at!",
         api_time(updated_at) AS "updated_at!",
         coalesce(i.n, 0)::int AS "invoices!", coalesce(s.n, 0)::int AS "subscriptions!"
    FROM customers
    LEFT JOIN (SELECT customer_id, count(*) AS n FROM invoices WHERE merchant_id = $merchantId!
                GROUP BY customer_id) i ON i.customer_id = customers.id
    LEFT JOIN (SELECT customer_id, count(*) AS n FROM subscriptions WHERE merchant_id = $merchantId!
                GROUP BY customer_id) s ON s.customer_id = customers.id
   WHERE merchant_id = $merchantId!
   ORDER BY customers.created_at DESC, customers.id DESC`;

/** A page of the merchant's customers (`ListPage`). */
const listCustomersPage = sql<IListCustomersPageQuery>`
  SELECT c.id, c.merchant_id, c.wallet_address, c.email, c.label,
         api_time(c.created_at) AS "created_at!", api_time(c.updated_at) AS "updated_at!",
         (SELECT count(*) FROM invoices i WHERE i.customer_id = c.id)::int AS "invoices!",
         (SELECT count(*) FROM subscriptions s WHERE s.customer_id = c.id)::int AS "subscriptions!"
    FROM customers c
   WHERE c.merchant_id = $merchantId!
     AND ($afterId::uuid IS NULL OR (c.created_at, c.id) < ($afterCreatedAt::timestamptz, $afterId))
   ORDER BY c.created_at DESC, c.id DESC
   LIMIT $limit::int`;

/** The merchant's customers whose wallet, label or e-mail matches the ILIKE `pattern`: a page. */
const searchCustomers = sql<ISearchCustomersQuery>`
  SELECT c.id, c.merchant_id, c.wallet_address, c.email, c.label,
         api_time(c.created_at) AS "created_at!", api_time(c.updated_at) AS "updated_at!",
         (SELECT count(*) FROM invoices i WHERE i.customer_id = c.id)::int AS "invoices!",
         (SELECT count(*) FROM subscriptions s WHERE s.customer_id = c.id)::int AS "subscriptions!"
    FROM customers c
   WHERE c.merchant_id = $merchantId!
     AND (c.wallet_address ILIKE $pattern! OR c.label ILIKE $pattern! OR c.email ILIKE $pattern!)
     AND ($afterId::uuid IS NULL OR (c.created_at, c.id) < ($afterCreatedAt::timestamptz, $afterId))
   ORDER BY c.created_at DESC, c.id DESC
   LIMIT $limit::int`;

/** When the merchant's customer was created (the pool's text of the timestamp). */
const customerCreatedAt = sql<ICustomerCreatedAtQuery>`
  SELECT created_at FROM customers WHERE id = $id! AND merchant_id = $merchantId!`;

/** The merchant's customer by id. */
const findCustomer = sql<IFindCustomerQuery>`
  SELECT id, merchant_id, wallet_address, email, label, api_time(created_at) AS "created_at!",
         api_time(updated_at) AS "updated_at!"
    FROM customers WHERE id = $id! AND merchant_id = $merchantId!`;

/** The merchant's customer by wallet. */
const findCustomerByWallet = sql<IFindCustomerByWalletQuery>`
  SELECT id, merchant_id, wallet_address, email, label, api_time(created_at) AS "created_at!",
         api_time(updated_at) AS "updated_at!"
    FROM customers WHERE merchant_id = $merchantId! AND wallet_address = $walletAddress!`;

/**
 * Creates the customer, or updates e-mail and label where given (not null) and different when
 * the wallet is already a customer of the merchant; `created` when the row is new (`xmax = 0`).
 * Nothing is returned when no row was written.
 */
const upsertCustomer = sql<IUpsertCustomerQuery>`
  INSERT INTO customers (id, merchant_id, wallet_address, email, label, created_at, updated_at)
  VALUES ($id!, $merchantId!, $walletAddress!, $email, $label, $at!, $at!)
  ON CONFLICT (merchant_id, wallet_address) DO UPDATE SET
    email = COALESCE(EXCLUDED.email, customers.email),
    label = COALESCE(EXCLUDED.label, customers.label),
    updated_at = EXCLUDED.updated_at
  WHERE (EXCLUDED.email IS NOT NULL AND EXCLUDED.email IS DISTINCT FROM customers.email)
     OR (EXCLUDED.label IS NOT NULL AND EXCLUDED.label IS DISTINCT FROM customers.label)
  RETURNING id, merchant_id, wallet_address, email, label, api_time(created_at) AS "created_at!",
            api_time(updated_at) AS "updated_at!", (xmax = 0) AS "created!"`;

/**
 * Sets e-mail (when `setEmail`) and label (when `setLabel`) of the merchant's customer under its
 * row lock (the CTE's FOR UPDATE, which also reads the values before); `updated_at` moves to
 * `at` only when a value set really differs, and `changed` says so. A field not set keeps its
 * value. Rarely run: one statement with the two switches rather than one per combination.
 */
const updateCustomer = sql<IUpdateCustomerQuery>`
  WITH previous AS (
    SELECT id AS old_id, email AS old_email, label AS old_label FROM customers
     WHERE id = $id! AND merchant_id = $merchantId! FOR UPDATE
  ), next AS (
    SELECT old_id,
           CASE WHEN $setEmail! THEN $email::text ELSE old_email END AS new_email,
           CASE WHEN $setLabel! THEN $label::text ELSE old_label END AS new_label,
           (old_email, old_label) IS DISTINCT FROM (
             CASE WHEN $setEmail! THEN $email::text ELSE old_email END,
             CASE WHEN $setLabel! THEN $label::text ELSE old_label END) AS differs
      FROM previous
  )
  UPDATE customers SET email = next.new_email, label = next.new_label,
         updated_at = CASE WHEN next.differs THEN $at!::timestamptz ELSE updated_at END
    FROM next WHERE customers.id = next.old_id
  RETURNING id, merchant_id, wallet_address, email, label, api_time(created_at) AS "created_at!",
            api_time(updated_at) AS "updated_at!", next.differs AS "changed!"`;

/** The customer with its merchant's name. */
const findWithMerchantName = sql<IFindWithMerchantNameQuery>`
  SELECT c.wallet_address, c.email, m.name AS merchant_name
    FROM customers c JOIN merchants m ON m.id = c.merchant_id
   WHERE c.id = $customerId! AND c.merchant_id = $merchantId!`;

/**
 * Every statement on `customers`: the table's one owner (issue 22), typed by pgtyped from the
 * migrated schema (`npm run db:types`).
 */
@Injectable()
export class CustomersRepository {
  constructor(private readonly db: Db) {}

  /**
   * The merchant's customers, newest first, with their counts, `onBatch` a batch of rows at a
   * time: all of them (`page` undefined; in one statement when they fit one batch, else through
   * a cursor, `Db.forEachBatch`, one pass over the counts, hashed), or through a cursor a `page`, of those matching `search` (a case-insensitive substring of
   * wallet, label or e-mail) when given. `onBatch` returns false to stop (the client left).
   */
  async forEachListBatch(
    merchantId: string,
    search: string | undefined,
    page: ListPage | undefined,
    onBatch: (rows: CustomerListRow[]) => Promise<boolean>,
  ): Promise<void> {
    if (page === undefined) {
      // Most merchants' whole list is one batch: one statement, no cursor's transaction (three
      // more round trips); only a longer one is read again, through the cursor.
      const first = await listCustomersPage.run(
        { merchantId, limit: ROW_BATCH + 1, afterCreatedAt: null, afterId: null },
        this.db,
      );
      if (first.length <= ROW_BATCH) {
        await onBatch(first);
        return;
      }
    }
    const statement =
      page === undefined
        ? typedCursor(listCustomers, { merchantId })
        : search
          ? typedCursor(searchCustomers, {
              merchantId,
              ...page,
              pattern: `%${escapeLike(search)}%`,
            })
          : typedCursor(listCustomersPage, { merchantId, ...page });
    return this.db.forEachBatch(statement, (rows) => onBatch(rows));
  }

  /** When the merchant's customer was created (a page's cursor); undefined when none. */
  async createdAt(merchantId: string, id: string): Promise<string | undefined> {
    const [row] = await customerCreatedAt.run({ id, merchantId }, this.db);
    return row?.created_at;
  }

  /** The merchant's customer; undefined when absent or another merchant's. */
  async find(ex: SqlTx, merchantId: string, id: string): Promise<CustomerRow | undefined> {
    const [row] = await findCustomer.run({ id, merchantId }, ex);
    return row;
  }

  /** The merchant's customer with this wallet, read in the caller's transaction. */
  async findByWallet(
    tx: SqlTx,
    merchantId: string,
    walletAddress: string,
  ): Promise<CustomerRow | undefined> {
    const [row] = await findCustomerByWallet.run({ merchantId, walletAddress }, tx);
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
    const [upserted] = await upsertCustomer.run(
      {
        id: row.id,
        merchantId: row.merchant_id,
        walletAddress: row.wallet_address,
        email: row.email,
        label: row.label,
        at: row.at,
      },
      tx,
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
    const [row] = await updateCustomer.run(
      {
        id,
        merchantId,
        setEmail: changes.email !== undefined,
        email: changes.email ?? null,
        setLabel: changes.label !== undefined,
        label: changes.label ?? null,
        at,
      },
      tx,
    );
    return row;
  }

  /** The customer with its merchant's name (the portal's header); undefined when absent. */
  async findWithMerchantName(
    merchantId: string,
    customerId: string,
  ): Promise<PortalCustomerRow | undefined> {
    const [customer] = await findWithMerchantName.run({ customerId, merchantId }, this.db);
    return customer;
  }
}
