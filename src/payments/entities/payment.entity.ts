import { BigIntType, Entity, Enum, Index, ManyToOne, Property, type Ref } from '@mikro-orm/core';
import { BaseEntity } from '../../common/base.entity';
import { Merchant } from '../../merchants/entities/merchant.entity';

export const PAYMENT_KINDS = ['invoice', 'subscription'] as const;
export type PaymentKind = (typeof PAYMENT_KINDS)[number];

/** `confirmed` (seen), `finalized` (irreversible) or `failed` (a charge that moved nothing). */
export const PAYMENT_STATUSES = ['confirmed', 'finalized', 'failed'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/**
 * The payments ledger (`GET /api/payments`): every invoice payment found on-chain and every
 * subscription charge, with the signature that settles it. Amounts are base units of `mint`.
 * Invoice, subscription and customer are loose references (no foreign keys): a ledger line
 * outlives nothing, and its rows go with their merchant.
 */
@Entity({ tableName: 'payments' })
@Index({ name: 'payments_merchant_created_idx', properties: ['merchant', 'createdAt', 'id'] })
@Index({ name: 'payments_invoice_idx', properties: ['invoiceId'] })
@Index({ name: 'payments_subscription_idx', properties: ['subscriptionId'] })
/** An invoice payment is recorded once per transaction and invoice, however often it is scanned. */
@Index({
  name: 'payments_invoice_signature_unique',
  expression:
    `create unique index "payments_invoice_signature_unique" on "payments" ("signature", "invoice_id") ` +
    `where "kind" = 'invoice'`,
})
/** A landed charge is one ledger line. */
@Index({
  name: 'payments_charge_signature_unique',
  expression:
    `create unique index "payments_charge_signature_unique" on "payments" ("signature") ` +
    `where "kind" = 'subscription' and "status" <> 'failed'`,
})
@Index({
  name: 'payments_unfinalized_idx',
  expression:
    `create index "payments_unfinalized_idx" on "payments" ("created_at") ` +
    `where "status" = 'confirmed'`,
})
export class Payment extends BaseEntity {
  @ManyToOne(() => Merchant, { ref: true, deleteRule: 'cascade' })
  merchant!: Ref<Merchant>;

  @Enum({ items: () => [...PAYMENT_KINDS], type: 'string', length: 16 })
  kind!: PaymentKind;

  @Enum({ items: () => [...PAYMENT_STATUSES], type: 'string', length: 16 })
  status!: PaymentStatus;

  @Property({ type: 'uuid', nullable: true })
  customerId: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  invoiceId: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  subscriptionId: string | null = null;

  /** The subscription period a charge paid for. */
  @Property({ type: 'integer', nullable: true })
  period: number | null = null;

  /** Null for a charge refused before anything was signed. */
  @Property({ type: 'string', length: 88, nullable: true })
  signature: string | null = null;

  @Property({ type: 'string', length: 8 })
  mint!: string;

  @Property({ type: new BigIntType('bigint') })
  amount!: bigint;

  /** What this payment brought beyond the invoice's total (an overpayment). */
  @Property({ type: new BigIntType('bigint'), default: 0 })
  excess: bigint = 0n;

  /** The paying wallet. */
  @Property({ type: 'string', length: 44, nullable: true })
  payer: string | null = null;

  /**
   * Invoice payments: `invoice_not_open` when it arrived for a Paid, Cancelled or Expired invoice
   * (recorded and reported, never lost). Failed charges: why (`insufficient_funds`, ...).
   */
  @Property({ type: 'string', length: 64, nullable: true })
  note: string | null = null;

  @Property({ type: new BigIntType('number'), nullable: true })
  slot: number | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  finalizedAt: Date | null = null;
}
