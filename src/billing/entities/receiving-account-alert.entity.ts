import { Entity, ManyToOne, PrimaryKey, Property, type Ref } from '@mikro-orm/core';
import { Merchant } from '../../merchants/entities/merchant.entity';

/**
 * A merchant's receiving token account of a mint that a charge found missing: the merchant was
 * told once (`merchant.receiving_account_missing`), the charges of that mint wait, and the
 * service pays no rent for it. Removed once the account exists again (the next charge run), so
 * a later disappearance is told again.
 */
@Entity({ tableName: 'receiving_account_alerts' })
export class ReceivingAccountAlert {
  @ManyToOne(() => Merchant, { ref: true, deleteRule: 'cascade', primary: true })
  merchant!: Ref<Merchant>;

  @PrimaryKey({ type: 'string', length: 8 })
  mint!: string;

  /** The missing associated token account. */
  @Property({ type: 'string', length: 44 })
  address!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)' })
  createdAt!: Date;
}
