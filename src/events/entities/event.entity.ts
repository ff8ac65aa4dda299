import { Entity, Index, ManyToOne, PrimaryKey, Property, type Ref } from '@mikro-orm/core';
import { Merchant } from '../../merchants/entities/merchant.entity';

/**
 * One billing event in the transactional outbox: written in the same database transaction as the
 * change that caused it, never changed afterwards. `payload` holds the exact JSON body that is
 * delivered and signed (`{id, type, createdAt, data: {object}}`); the `json` type keeps its text
 * byte for byte, so every delivery of an event sends the same bytes.
 */
@Entity({ tableName: 'events' })
@Index({ name: 'events_merchant_created_idx', properties: ['merchant', 'createdAt', 'id'] })
@Index({
  name: 'events_merchant_type_created_idx',
  properties: ['merchant', 'type', 'createdAt', 'id'],
})
export class WebhookEvent {
  @PrimaryKey({ type: 'uuid' })
  id!: string;

  @ManyToOne(() => Merchant, { ref: true, deleteRule: 'cascade' })
  merchant!: Ref<Merchant>;

  @Property({ type: 'string', length: 64 })
  type!: string;

  @Property({ type: 'json', columnType: 'json' })
  payload!: unknown;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)' })
  createdAt!: Date;
}
