import { BigIntType, Entity, Index, ManyToOne, Property, type Ref } from '@mikro-orm/core';
import { BaseEntity } from '../../common/base.entity';
import { Merchant } from '../../merchants/entities/merchant.entity';

/**
 * A customer's credit balance with the merchant, one mint at a time, as the entries that make it
 * (docs/refunds.md, "Credit balances"): a credit note that leaves a credit adds (`amount > 0`,
 * `credit_note_id`), and the balance applied to a new invoice takes (`amount < 0`,
 * `invoice_id`). The balance is their sum; it is never below zero.
 */
@Entity({ tableName: 'customer_credits' })
@Index({ name: 'customer_credits_customer_idx', properties: ['customerId', 'mint'] })
export class CustomerCredit extends BaseEntity {
  @ManyToOne(() => Merchant, { ref: true, deleteRule: 'cascade' })
  merchant!: Ref<Merchant>;

  @Property({ type: 'uuid' })
  customerId!: string;

  @Property({ type: 'string', length: 8 })
  mint!: string;

  /** Base units: positive when credited, negative when applied. */
  @Property({ type: new BigIntType('bigint') })
  amount!: bigint;

  @Property({ type: 'uuid', nullable: true })
  creditNoteId: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  invoiceId: string | null = null;
}
