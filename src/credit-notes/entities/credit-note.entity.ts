import {
  BigIntType,
  Entity,
  Enum,
  Index,
  JsonType,
  ManyToOne,
  Property,
  type Ref,
  Unique,
} from '@mikro-orm/core';
import { BaseEntity } from '../../common/base.entity';
import type { StoredLineItem } from '../../invoices/entities/invoice.entity';
import { Merchant } from '../../merchants/entities/merchant.entity';

/**
 * What a credit note does with its amount (docs/refunds.md, "Credit notes"):
 * `reduce_due`: an Open invoice asks for less; `refund`: the money goes back (a refund of one of
 * its payments, created with it); `credit`: the customer's credit balance, applied to its next
 * invoice in the mint.
 */
export const CREDIT_NOTE_ACTIONS = ['reduce_due', 'refund', 'credit'] as const;
export type CreditNoteAction = (typeof CREDIT_NOTE_ACTIONS)[number];

/** Why (Stripe's reasons, and `other`). */
export const CREDIT_NOTE_REASONS = [
  'duplicate',
  'fraudulent',
  'order_change',
  'product_unsatisfactory',
  'other',
] as const;
export type CreditNoteReason = (typeof CREDIT_NOTE_REASONS)[number];

/**
 * A credit note against an invoice, numbered per merchant without gaps (`CN-000001`), with its
 * lines, the invoice's tax on them, and what it does (`action`). Issued once and never changed.
 */
@Entity({ tableName: 'credit_notes' })
@Unique({ name: 'credit_notes_merchant_number_unique', properties: ['merchant', 'number'] })
@Index({ name: 'credit_notes_merchant_created_idx', properties: ['merchant', 'createdAt', 'id'] })
@Index({ name: 'credit_notes_invoice_idx', properties: ['invoiceId'] })
export class CreditNote extends BaseEntity {
  @ManyToOne(() => Merchant, { ref: true, deleteRule: 'cascade' })
  merchant!: Ref<Merchant>;

  @Property({ type: 'uuid' })
  invoiceId!: string;

  @Property({ type: 'uuid' })
  customerId!: string;

  @Property({ type: 'integer' })
  number!: number;

  @Property({ type: 'string', length: 8 })
  mint!: string;

  @Property({ type: JsonType })
  lines!: StoredLineItem[];

  @Property({ type: new BigIntType('bigint') })
  subtotal!: bigint;

  @Property({ type: new BigIntType('bigint') })
  tax!: bigint;

  /** `subtotal + tax`: what it credits. */
  @Property({ type: new BigIntType('bigint') })
  amount!: bigint;

  @Enum({ items: () => [...CREDIT_NOTE_REASONS], type: 'string', length: 32 })
  reason!: CreditNoteReason;

  @Property({ type: 'string', length: 500, nullable: true })
  memo: string | null = null;

  @Enum({ items: () => [...CREDIT_NOTE_ACTIONS], type: 'string', length: 16 })
  action!: CreditNoteAction;

  /** The refund it created (`action: refund`). */
  @Property({ type: 'uuid', nullable: true })
  refundId: string | null = null;
}
