import { BigIntType, Entity, ManyToOne, PrimaryKeyProp, Property, type Ref } from '@mikro-orm/core';
import { Merchant } from '../../merchants/entities/merchant.entity';

/**
 * What the service key spent in network fees on one merchant's x402 payments on one UTC day
 * (lamports): each settlement adds its fee before it is sent, only while the sum stays within
 * the merchant's daily budget (one conditional upsert: concurrent settlements never overrun it).
 */
@Entity({ tableName: 'x402_fee_days' })
export class X402FeeDay {
  [PrimaryKeyProp]?: ['merchant', 'day'];

  @ManyToOne(() => Merchant, { ref: true, deleteRule: 'cascade', primary: true })
  merchant!: Ref<Merchant>;

  @Property({ type: 'date', primary: true })
  day!: string;

  @Property({ type: new BigIntType('bigint') })
  spent!: bigint;
}
