import { Entity, ManyToOne, Property, type Ref } from '@mikro-orm/core';
import { Merchant } from '../../merchants/entities/merchant.entity';

/**
 * The last invoice number issued to a merchant. The next one is taken by an upsert that locks
 * this row until the invoice's transaction ends, so numbers are unique and, since a rolled-back
 * invoice gives its number back, without gaps.
 */
@Entity({ tableName: 'invoice_numbers' })
export class InvoiceNumber {
  @ManyToOne(() => Merchant, { ref: true, deleteRule: 'cascade', primary: true })
  merchant!: Ref<Merchant>;

  @Property({ type: 'integer' })
  last!: number;
}
