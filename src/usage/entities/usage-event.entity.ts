import {
  BigIntType,
  Entity,
  Index,
  ManyToOne,
  PrimaryKeyProp,
  Property,
  type Ref,
} from '@mikro-orm/core';
import { Merchant } from '../../merchants/entities/merchant.entity';

/**
 * One usage event of a metered subscription (docs/usage.md), as `POST /api/usage-events` took
 * it: keyed by the merchant's own id for it (a duplicate is ignored), counted in the period its
 * timestamp falls in (decided once, at ingestion, under that period's lock). Quantities are
 * millionths of a unit (an exact decimal with up to 6 places).
 */
@Entity({ tableName: 'usage_events' })
/** A period's sum reads the index alone (its quantities are in it). */
@Index({
  name: 'usage_events_period_idx',
  expression:
    'create index "usage_events_period_idx" on "usage_events" ("subscription_id", "period") ' +
    'include ("quantity")',
})
export class UsageEvent {
  [PrimaryKeyProp]?: ['merchant', 'eventId'];

  @ManyToOne(() => Merchant, { ref: true, deleteRule: 'cascade', primary: true })
  merchant!: Ref<Merchant>;

  @Property({ type: 'string', length: 100, primary: true })
  eventId!: string;

  @Property({ type: 'uuid' })
  subscriptionId!: string;

  @Property({ type: 'string', length: 64 })
  meter!: string;

  /** Millionths of a unit. */
  @Property({ type: new BigIntType('bigint') })
  quantity!: bigint;

  /** The subscription's period the event counts toward. */
  @Property({ type: 'integer' })
  period!: number;

  /** When it happened (the merchant's timestamp). */
  @Property({ type: 'datetime', columnType: 'timestamptz(3)' })
  occurredAt!: Date;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)' })
  createdAt!: Date;
}
