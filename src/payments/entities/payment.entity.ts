import {
  ArrayType,
  BigIntType,
  Entity,
  Enum,
  Index,
  ManyToOne,
  Property,
  type Ref,
} from '@mikro-orm/core';
import { BaseEntity } from '../../common/base.entity';
import { Merchant } from '../../merchants/entities/merchant.entity';

/**
 * `invoice`: a transfer that paid an invoice; `subscription`: a charge; `unattributed`: money
 * that arrived in a merchant's receiving account and pays no invoice by the attribution rule
 * (several invoices' references, none, another mint's invoice, no transfer instruction of its
 * own): recorded once, reported, never credited to anything until the merchant attaches it.
 * `refund`: money the merchant gave back of one of those (a negative amount; docs/refunds.md).
 * `per_request`: an x402 payment the service settled as facilitator (docs/x402.md).
 */
export const PAYMENT_KINDS = [
  'invoice',
  'subscription',
  'unattributed',
  'refund',
  'per_request',
] as const;
export type PaymentKind = (typeof PAYMENT_KINDS)[number];

/** A metered charge's breakdown (docs/usage.md): base units and units as decimal text. */
export interface UsageBreakdown {
  /** The period whose usage the charge billed (the one before the charge's). */
  usagePeriod: number;
  fixed: string;
  meter: string;
  units: string;
  includedUnits: string;
  billableUnits: string;
  unitPrice: string;
  unitSize: string;
  usageAmount: string;
  cap: string;
  capped: boolean;
}

export interface PaymentDetails {
  resourceUrl?: string;
  usage?: UsageBreakdown;
}

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
/**
 * What a transaction brought a merchant's account is recorded once per transfer instruction (and
 * once for what arrived with none), however often it is scanned, and whatever it was attached to.
 */
@Index({
  name: 'payments_receipt_unique',
  expression:
    `create unique index "payments_receipt_unique" on "payments" ("signature", "destination", coalesce("instruction", -1)) ` +
    `where "kind" in ('invoice', 'unattributed')`,
})
@Index({
  name: 'payments_unattributed_idx',
  expression:
    `create index "payments_unattributed_idx" on "payments" ("merchant_id", "created_at") ` +
    `where "kind" = 'unattributed'`,
})
/** A refund's transfer instruction is one ledger line. */
@Index({
  name: 'payments_refund_signature_unique',
  expression:
    `create unique index "payments_refund_signature_unique" on "payments" ("signature", "instruction") ` +
    `where "kind" = 'refund'`,
})
/** A settled x402 payment is one ledger line. */
@Index({
  name: 'payments_per_request_signature_unique',
  expression:
    `create unique index "payments_per_request_signature_unique" on "payments" ("signature") ` +
    `where "kind" = 'per_request'`,
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

  /** What the chain withheld of the transfer (a Token-2022 transfer fee): `amount` is net of it. */
  @Property({ type: new BigIntType('bigint'), default: 0 })
  fee: bigint = 0n;

  /** The merchant's token account that received (invoice and unattributed payments). */
  @Property({ type: 'string', length: 44, nullable: true })
  destination: string | null = null;

  /** The transfer instruction's index in its transaction; null for money that came without one. */
  @Property({ type: 'integer', nullable: true })
  instruction: number | null = null;

  /** The references the transfer carried (what a merchant resolving an unattributed one reads). */
  @Property({ type: new ArrayType(), nullable: true })
  references: string[] | null = null;

  /**
   * What Pending and Succeeded refunds hold of this line (docs/refunds.md): what is left to give
   * back is `amount - refundHeld`, decided under the line's row lock; a line with any of it held
   * is never attached to an invoice afterwards.
   */
  @Property({ type: new BigIntType('bigint'), default: 0 })
  refundHeld: bigint = 0n;

  /** What this payment brought beyond the invoice's total (an overpayment). */
  @Property({ type: new BigIntType('bigint'), default: 0 })
  excess: bigint = 0n;

  /** The paying wallet. */
  @Property({ type: 'string', length: 44, nullable: true })
  payer: string | null = null;

  /**
   * Invoice payments: `invoice_not_open` when it arrived for a Paid, Cancelled or Expired invoice
   * (recorded and reported, never lost). Unattributed ones: why (`several_invoices`,
   * `no_invoice_reference`, `other_mint`, `no_transfer_instruction`,
   * `subscription_pull_by_other`). Failed charges: why
   * (`insufficient_funds`, ...).
   */
  @Property({ type: 'string', length: 64, nullable: true })
  note: string | null = null;

  @Property({ type: new BigIntType('number'), nullable: true })
  slot: number | null = null;

  /**
   * What the line is for, beyond its columns: `resourceUrl` (a per-request payment's resource)
   * and `usage` (a metered charge's breakdown: docs/usage.md).
   */
  @Property({ type: 'json', nullable: true })
  details: PaymentDetails | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  finalizedAt: Date | null = null;
}
