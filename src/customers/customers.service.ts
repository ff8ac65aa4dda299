import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock } from '../common/clock';
import { NotFoundError } from '../common/errors/domain-error';
import { escapeLike } from '../database/sql';
import { EventsService, type NewEvent } from '../events/events.service';
import { CUSTOMER_COLUMNS, CustomerRow, toCustomerResponse } from './customer.mapper';
import { CreateCustomerDto, ListCustomersQueryDto, UpdateCustomerDto } from './dto/customer.dto';
import { CustomerListItemResponse, CustomerResponse } from './dto/customer.response';
import { inPgTransaction, type SqlTx, pgQuery } from '../database/pg-transaction';

/** The outcome of an upsert: which record, and whether it was new or changed. */
export interface UpsertedCustomer {
  customer: CustomerResponse;
  created: boolean;
  changed: boolean;
}

/** The event an upsert emits: `customer.created`, `customer.updated`, or none (no change). */
export function upsertEvent(upserted: UpsertedCustomer): NewEvent | null {
  if (!upserted.changed) return null;
  return {
    type: upserted.created ? 'customer.created' : 'customer.updated',
    object: upserted.customer,
  };
}

/**
 * Customers of a merchant. Every query filters by the merchant id, so another merchant's
 * customer is indistinguishable from a missing one. Reads and the upsert are single SQL
 * statements through MikroORM's connection (the hot paths; see docs/performance.md).
 */
@Injectable()
export class CustomersService {
  constructor(
    private readonly em: EntityManager,
    private readonly clock: Clock,
    private readonly events: EventsService,
  ) {}

  /** Newest first; `search` is a case-insensitive substring of wallet, label or e-mail. */
  async list(
    merchantId: string,
    query: ListCustomersQueryDto,
  ): Promise<CustomerListItemResponse[]> {
    const params: unknown[] = [merchantId];
    let where = 'merchant_id = ?';
    if (query.search) {
      const pattern = `%${escapeLike(query.search)}%`;
      where += ` AND (wallet_address ILIKE ? OR label ILIKE ? OR email ILIKE ?)`;
      params.push(pattern, pattern, pattern);
    }
    // The counts are grouped per customer over the merchant's invoices and subscriptions (SQL on
    // their tables: counting needs no import of their modules).
    const rows = await this.em
      .getConnection()
      .execute<(CustomerRow & { invoices: number; subscriptions: number })[]>(
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
    return rows.map((row) => ({
      ...toCustomerResponse(row),
      _count: { invoices: row.invoices, subscriptions: row.subscriptions },
    }));
  }

  /** One customer (without its history: see the customer-detail module). */
  async get(merchantId: string, id: string): Promise<CustomerResponse> {
    return toCustomerResponse(await this.findRow(merchantId, id));
  }

  /**
   * Creates the customer, or updates e-mail and label where given when the wallet is already a
   * customer of this merchant, and records `customer.created` or `customer.updated` (nothing when
   * nothing changed) in the same transaction.
   */
  async upsert(merchantId: string, input: CreateCustomerDto): Promise<UpsertedCustomer> {
    return inPgTransaction(this.em, (tx) => this.upsertIn(tx, merchantId, input));
  }

  /**
   * The upsert inside the caller's transaction, with its event. One atomic statement: concurrent
   * upserts of one wallet never create a duplicate.
   */
  async upsertIn(
    tx: SqlTx,
    merchantId: string,
    input: CreateCustomerDto,
  ): Promise<UpsertedCustomer> {
    const upserted = await this.upsertRowIn(tx, merchantId, input);
    const event = upsertEvent(upserted);
    if (event) await this.events.record(tx, merchantId, event.type, event.object);
    return upserted;
  }

  /**
   * The upsert without its event, for a caller that records it with its own (`upsertEvent`), in
   * the same transaction: invoice creation writes both events in one statement.
   */
  async upsertRowIn(
    tx: SqlTx,
    merchantId: string,
    input: CreateCustomerDto,
  ): Promise<UpsertedCustomer> {
    const now = this.clock.now();
    // The conflict branch updates only when a given value differs from the row as locked: that
    // comparison sees the latest committed version, so concurrent upserts of one wallet record
    // one customer.created and no spurious customer.updated.
    const rows = await tx.execute<(CustomerRow & { created: boolean })[]>(
      `INSERT INTO customers (id, merchant_id, wallet_address, email, label, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (merchant_id, wallet_address) DO UPDATE SET
         email = COALESCE(EXCLUDED.email, customers.email),
         label = COALESCE(EXCLUDED.label, customers.label),
         updated_at = EXCLUDED.updated_at
       WHERE (EXCLUDED.email IS NOT NULL AND EXCLUDED.email IS DISTINCT FROM customers.email)
          OR (EXCLUDED.label IS NOT NULL AND EXCLUDED.label IS DISTINCT FROM customers.label)
       RETURNING ${CUSTOMER_COLUMNS}, (xmax = 0) AS created`,
      [
        randomUUID(),
        merchantId,
        input.walletAddress,
        input.email ?? null,
        input.label ?? null,
        now,
        now,
      ],
    );
    const row = rows[0];
    if (!row) {
      // The wallet is a customer already and nothing given differs: no change, no event.
      const [existing] = await tx.execute<CustomerRow[]>(
        `SELECT ${CUSTOMER_COLUMNS} FROM customers WHERE merchant_id = ? AND wallet_address = ?`,
        [merchantId, input.walletAddress],
      );
      return { customer: toCustomerResponse(existing), created: false, changed: false };
    }
    return { customer: toCustomerResponse(row), created: row.created, changed: true };
  }

  /**
   * Changes only the supplied fields; `null` clears a field. When a value really changes,
   * `updatedAt` moves and `customer.updated` is recorded in the same transaction.
   */
  async update(
    merchantId: string,
    id: string,
    input: UpdateCustomerDto,
  ): Promise<CustomerResponse> {
    const fields = (['email', 'label'] as const).filter((f) => input[f] !== undefined);
    if (fields.length === 0) return toCustomerResponse(await this.findRow(merchantId, id));
    return this.em.fork().transactional(async (em) => {
      const values = fields.map((f) => input[f] ?? null);
      const differs = fields.map((f) => `? IS DISTINCT FROM previous.old_${f}`).join(' OR ');
      const rows = await em.execute<(CustomerRow & { changed: boolean })[]>(
        `WITH previous AS (
           SELECT id AS old_id, email AS old_email, label AS old_label FROM customers
            WHERE id = ? AND merchant_id = ? FOR UPDATE
         )
         UPDATE customers SET ${fields.map((f) => `${f} = ?`).join(', ')},
           updated_at = CASE WHEN ${differs} THEN ? ELSE updated_at END
         FROM previous WHERE customers.id = previous.old_id
         RETURNING ${CUSTOMER_COLUMNS}, (${differs}) AS changed`,
        [id, merchantId, ...values, ...values, this.clock.now(), ...values],
      );
      const row = rows[0];
      if (!row) throw new NotFoundError('Customer');
      const customer = toCustomerResponse(row);
      if (row.changed) await this.events.record(em, merchantId, 'customer.updated', customer);
      return customer;
    });
  }

  private async findRow(merchantId: string, id: string): Promise<CustomerRow> {
    const rows = await pgQuery<CustomerRow[]>(
      this.em,
      `SELECT ${CUSTOMER_COLUMNS} FROM customers WHERE id = ? AND merchant_id = ?`,
      [id, merchantId],
    );
    if (!rows[0]) throw new NotFoundError('Customer');
    return rows[0];
  }
}
