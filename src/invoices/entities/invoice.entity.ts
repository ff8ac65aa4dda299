import {
  BigIntType,
  Enum,
  Entity,
  Index,
  JsonType,
  ManyToOne,
  Property,
  Unique,
  type Ref,
} from '@mikro-orm/core';
import { BaseEntity } from '../../common/base.entity';
import { Customer } from '../../customers/entities/customer.entity';
import { Merchant } from '../../merchants/entities/merchant.entity';
import { INVOICE_STATUSES, type InvoiceStatus } from '../invoice-status';

/** A line item as stored: the unit amount in base units, as a decimal string of digits. */
export interface StoredLineItem {
  description: string;
  quantity: number;
  unitAmount: string;
}

/**
 * A one-off invoice, paid at its hosted checkout by a transfer carrying its reference key
 * (`onchainId`). Amounts are base units of the mint. Its status moves only through
 * `InvoicesService.transition` (invoice-status.ts), which records the event in the same
 * transaction.
 */
@Entity({ tableName: 'invoices' })
@Unique({ name: 'invoices_merchant_number_unique', properties: ['merchant', 'number'] })
@Unique({ name: 'invoices_onchain_id_unique', properties: ['onchainId'] })
@Index({ name: 'invoices_merchant_created_idx', properties: ['merchant', 'createdAt', 'id'] })
@Index({
  name: 'invoices_merchant_status_created_idx',
  properties: ['merchant', 'status', 'createdAt', 'id'],
})
@Index({ name: 'invoices_customer_created_idx', properties: ['customer', 'createdAt', 'id'] })
/** The watcher's overdue and expiry sweep: Open invoices by due date. */
@Index({
  name: 'invoices_open_due_idx',
  expression: `create index "invoices_open_due_idx" on "invoices" ("due_date") where "status" = 'Open'`,
})
/**
 * The overdue sweep: Open invoices not yet marked overdue, by due date. Read through the index
 * above, every sweep waded through the invoices marked already (up to `INVOICE_EXPIRY_DAYS` of
 * them); this one holds only those still to mark.
 */
@Index({
  name: 'invoices_newly_overdue_idx',
  expression:
    `create index "invoices_newly_overdue_idx" on "invoices" ("due_date") ` +
    `where "status" = 'Open' and "overdue_at" is null`,
})
/**
 * The list's `search` (D11) on the invoice's own columns: trigrams (pg_trgm) of the onchainId,
 * the memo and the number as the API writes it (`invoice_number`); the customer's columns are
 * in `customers_search_idx`.
 */
@Index({
  name: 'invoices_search_idx',
  expression:
    `create index "invoices_search_idx" on "invoices" using gin ("onchain_id" gin_trgm_ops, ` +
    `"memo" gin_trgm_ops, (invoice_number("number")) gin_trgm_ops)`,
})
export class Invoice extends BaseEntity {
  @ManyToOne(() => Merchant, { ref: true, deleteRule: 'cascade' })
  merchant!: Ref<Merchant>;

  @ManyToOne(() => Customer, { ref: true, deleteRule: 'cascade' })
  customer!: Ref<Customer>;

  /** Sequential per merchant (`INV-000001`), unique under concurrency. */
  @Property({ type: 'integer' })
  number!: number;

  @Enum({ items: () => [...INVOICE_STATUSES] })
  status!: InvoiceStatus;

  /** The invoice's reference public key (base58): payments carry it; searchable. */
  @Property({ type: 'string', length: 44 })
  onchainId!: string;

  @Property({ type: 'string', length: 500, nullable: true })
  memo: string | null = null;

  @Property({ type: 'string', length: 8 })
  mint!: string;

  @Property({ type: JsonType })
  lineItems!: StoredLineItem[];

  /**
   * The API's `lineItems` as JSON text, rendered once when the invoice is created (line items
   * never change): the list writes it as it is. Null for invoices created before it existed; the
   * list renders those from `lineItems`.
   */
  @Property({ type: 'text', nullable: true })
  lineItemsJson: string | null = null;

  @Property({ type: new BigIntType('bigint') })
  subtotal!: bigint;

  @Property({ type: 'integer' })
  taxBps!: number;

  @Property({ type: new BigIntType('bigint') })
  tax!: bigint;

  @Property({ type: new BigIntType('bigint') })
  total!: bigint;

  /** What payments have brought so far (partial payments accumulate). */
  @Property({ type: new BigIntType('bigint'), default: 0 })
  amountPaid: bigint = 0n;

  /** What Succeeded refunds of its payments gave back (docs/refunds.md). */
  @Property({ type: new BigIntType('bigint'), default: 0 })
  amountRefunded: bigint = 0n;

  /**
   * What credit notes (`reduce_due`) and the customer's credit balance took off what it asks
   * for: `amountDue` is `total - amountPaid - amountCredited`, never below 0.
   */
  @Property({ type: new BigIntType('bigint'), default: 0 })
  amountCredited: bigint = 0n;

  /**
   * What credit notes (`credit`) turned of its payments into the customer's credit balance:
   * with its refunds, never more than `amountPaid`.
   */
  @Property({ type: new BigIntType('bigint'), default: 0 })
  amountCreditedToBalance: bigint = 0n;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  dueDate: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  paidAt: Date | null = null;

  @Property({ type: 'string', length: 88, nullable: true })
  paymentSignature: string | null = null;

  /**
   * A slot of the chain at or before the invoice's creation (its registration's blockhash was
   * read then): no payment of it can come earlier, so the merchant account's first scan stops
   * there instead of reading the account's whole history. Null for invoices older than it.
   */
  @Property({ type: new BigIntType('number'), nullable: true })
  chainSlot: number | null = null;

  /** When `invoice.overdue` was recorded (once, after `dueDate` passed while Open). */
  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  overdueAt: Date | null = null;

  /*
   * The list's JSON parts that hold no money, rendered by a database trigger on every insert and
   * update (Migration20261124170000): never written or read through the entity (lazy: not
   * selected), only by the list's SQL.
   */
  @Property({ type: 'text', nullable: true, lazy: true, hidden: true })
  listJsonHead?: string | null;

  @Property({ type: 'text', nullable: true, lazy: true, hidden: true })
  listJsonDueDate?: string | null;

  @Property({ type: 'text', nullable: true, lazy: true, hidden: true })
  listJsonTail?: string | null;
}
