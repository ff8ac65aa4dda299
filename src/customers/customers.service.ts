import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock } from '../common/clock';
import { NotFoundError } from '../common/errors/domain-error';
import { isPaged, resolvePage } from '../common/pagination';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { EventsService, type NewEvent } from '../events/events.service';
import { toCustomerListItem, toCustomerResponse } from './customer.mapper';
import { CustomerRow, CustomersRepository, PortalCustomerRow } from './customers.repository';
import { CreateCustomerDto, ListCustomersQueryDto, UpdateCustomerDto } from './dto/customer.dto';
import { CustomerResponse } from './dto/customer.response';

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
 * statements (the hot paths; see docs/performance.md), in `CustomersRepository`.
 */
@Injectable()
export class CustomersService {
  constructor(
    private readonly db: Db,
    private readonly customers: CustomersRepository,
    private readonly clock: Clock,
    private readonly events: EventsService,
  ) {}

  /**
   * Newest first, each with `_count`, as JSON text a batch at a time (`onBatch` returns false
   * once the client has gone): the whole list (one pass), or a page (`limit`, `startingAfter`,
   * D6) of those whose wallet, label or e-mail contains `search` (case-insensitive) when given.
   * @throws ValidationError when `startingAfter` names no customer of the merchant (before any
   * row is handed over).
   */
  async listJson(
    merchantId: string,
    query: ListCustomersQueryDto,
    onBatch: (json: string) => Promise<boolean>,
  ): Promise<void> {
    const page =
      query.search || isPaged(query)
        ? await resolvePage(query, 'customer', (id) => this.customers.createdAt(merchantId, id))
        : undefined;
    await this.customers.forEachListBatch(merchantId, query.search, page, (rows) =>
      onBatch(rows.map((row) => JSON.stringify(toCustomerListItem(row))).join(',')),
    );
  }

  /**
   * One customer (without its history: see the customer-detail module), read on `ex` (a
   * pipelined read's handle) or on its own.
   */
  async get(merchantId: string, id: string, ex?: SqlTx): Promise<CustomerResponse> {
    return toCustomerResponse(await this.findRow(merchantId, id, ex));
  }

  /**
   * Creates the customer, or updates e-mail and label where given when the wallet is already a
   * customer of this merchant, and records `customer.created` or `customer.updated` (nothing when
   * nothing changed) in the same transaction.
   */
  async upsert(merchantId: string, input: CreateCustomerDto): Promise<UpsertedCustomer> {
    return this.db.transaction((tx) => this.upsertIn(tx, merchantId, input));
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
    const row = await this.customers.upsert(tx, {
      id: randomUUID(),
      merchant_id: merchantId,
      wallet_address: input.walletAddress,
      email: input.email ?? null,
      label: input.label ?? null,
      at: this.clock.now(),
    });
    if (!row) {
      // The wallet is a customer already and nothing given differs: no change, no event.
      const existing = await this.customers.findByWallet(tx, merchantId, input.walletAddress);
      return { customer: toCustomerResponse(existing!), created: false, changed: false };
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
    return this.db.transaction(async (tx) => {
      const row = await this.customers.update(
        tx,
        merchantId,
        id,
        { email: input.email, label: input.label },
        this.clock.now(),
      );
      if (!row) throw new NotFoundError('Customer');
      const customer = toCustomerResponse(row);
      if (row.changed) await this.events.record(tx, merchantId, 'customer.updated', customer);
      return customer;
    });
  }

  /** The id of the merchant's customer with this wallet, or null (a payer not yet a customer). */
  async idByWalletIn(tx: SqlTx, merchantId: string, wallet: string): Promise<string | null> {
    return (await this.customers.findByWallet(tx, merchantId, wallet))?.id ?? null;
  }

  private async findRow(merchantId: string, id: string, ex?: SqlTx): Promise<CustomerRow> {
    const row = await this.customers.find(ex ?? this.db, merchantId, id);
    if (!row) throw new NotFoundError('Customer');
    return row;
  }

  /** The customer with its merchant's name (the customer portal); undefined when absent. */
  findWithMerchantName(merchantId: string, id: string): Promise<PortalCustomerRow | undefined> {
    return this.customers.findWithMerchantName(merchantId, id);
  }
}
