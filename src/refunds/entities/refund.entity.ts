import {
  BigIntType,
  Entity,
  Enum,
  Index,
  ManyToOne,
  Property,
  type Ref,
  Unique,
} from '@mikro-orm/core';
import { BaseEntity } from '../../common/base.entity';
import { Merchant } from '../../merchants/entities/merchant.entity';

/**
 * `Pending`: its transaction is with the merchant to sign and send; `Succeeded`: the transfer
 * carrying its reference is finalized on-chain (a negative ledger line); `Expired`: its
 * transaction can no longer land and nothing carrying its reference did (what it reserved of the
 * payment is free again; a new transaction can be issued).
 */
export const REFUND_STATUSES = ['Pending', 'Succeeded', 'Expired'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];

/**
 * Money a merchant gives back of one ledger line (`payments`: an invoice payment, a charge, or
 * money that paid nothing), sent by the merchant from its own wallet (docs/refunds.md): the
 * service prepares the transfer, finds it on-chain by its reference, and keeps the books. A
 * Pending or Succeeded refund holds its amount of the line; together they never exceed it.
 */
@Entity({ tableName: 'refunds' })
@Unique({ name: 'refunds_reference_unique', properties: ['reference'] })
@Index({ name: 'refunds_merchant_created_idx', properties: ['merchant', 'createdAt', 'id'] })
@Index({ name: 'refunds_payment_idx', properties: ['paymentId'] })
@Index({
  name: 'refunds_pending_idx',
  expression:
    `create index "refunds_pending_idx" on "refunds" ("last_valid_block_height") ` +
    `where "status" = 'Pending'`,
})
export class Refund extends BaseEntity {
  @ManyToOne(() => Merchant, { ref: true, deleteRule: 'cascade' })
  merchant!: Ref<Merchant>;

  /** The ledger line refunded (a loose reference, as the ledger's own are). */
  @Property({ type: 'uuid' })
  paymentId!: string;

  @Property({ type: 'uuid', nullable: true })
  invoiceId: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  subscriptionId: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  customerId: string | null = null;

  @Enum({ items: () => [...REFUND_STATUSES], type: 'string', length: 16 })
  status!: RefundStatus;

  @Property({ type: 'string', length: 8 })
  mint!: string;

  /** What leaves the merchant's account, base units (a mint's transfer fee is withheld from it). */
  @Property({ type: new BigIntType('bigint') })
  amount!: bigint;

  @Property({ type: 'string', length: 500, nullable: true })
  reason: string | null = null;

  /** The key its transfer carries (Solana Pay's reference): how the watcher finds it. */
  @Property({ type: 'string', length: 44 })
  reference!: string;

  /** The wallet the money goes back to (the payment's payer). */
  @Property({ type: 'string', length: 44 })
  recipient!: string;

  /** The recipient's token account of the mint (created by the transaction when missing). */
  @Property({ type: 'string', length: 44 })
  destination!: string;

  /** The block height after which its current transaction can no longer land. */
  @Property({ type: new BigIntType('number') })
  lastValidBlockHeight!: number;

  /** The transfer that did it, once Succeeded. */
  @Property({ type: 'string', length: 88, nullable: true })
  signature: string | null = null;

  @Property({ type: new BigIntType('number'), nullable: true })
  slot: number | null = null;

  /** What the chain withheld of the transfer (a Token-2022 transfer fee). */
  @Property({ type: new BigIntType('bigint'), default: 0 })
  fee: bigint = 0n;

  /** Its ledger line (negative), once Succeeded. */
  @Property({ type: 'uuid', nullable: true })
  ledgerPaymentId: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  succeededAt: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  expiredAt: Date | null = null;
}
