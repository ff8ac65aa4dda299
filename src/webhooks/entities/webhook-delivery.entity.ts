import { Entity, Enum, Index, ManyToOne, Property, type Ref } from '@mikro-orm/core';
import { BaseEntity } from '../../common/base.entity';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../events/delivery-status';
import { WebhookEvent } from '../../events/entities/event.entity';
import { Merchant } from '../../merchants/entities/merchant.entity';

/**
 * One delivery of an event to the merchant's endpoint, with its attempts. The outbox write
 * creates the first; each manual redelivery adds another. The worker claims due rows with
 * `FOR UPDATE SKIP LOCKED` and leases them (`leasedUntil`, in the database's real time, under a
 * fresh `lockToken`), so a crashed instance's claim can be taken again once the lease ends.
 */
@Entity({ tableName: 'webhook_deliveries' })
@Index({
  name: 'webhook_deliveries_due_idx',
  expression:
    `create index "webhook_deliveries_due_idx" on "webhook_deliveries" ("next_attempt_at") ` +
    `where "status" = 'pending'`,
})
@Index({ name: 'webhook_deliveries_event_idx', properties: ['event', 'createdAt'] })
/** The retention job deletes final deliveries by age: only they are indexed, by their last change. */
@Index({
  name: 'webhook_deliveries_final_idx',
  expression:
    `create index "webhook_deliveries_final_idx" on "webhook_deliveries" ("updated_at") ` +
    `where "status" <> 'pending'`,
})
export class WebhookDelivery extends BaseEntity {
  @ManyToOne(() => WebhookEvent, { ref: true, deleteRule: 'cascade' })
  event!: Ref<WebhookEvent>;

  @ManyToOne(() => Merchant, { ref: true, deleteRule: 'cascade', index: true })
  merchant!: Ref<Merchant>;

  @Enum({ items: () => [...DELIVERY_STATUSES], type: 'string', length: 16 })
  status!: DeliveryStatus;

  @Property({ type: 'integer' })
  attempts: number = 0;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  nextAttemptAt: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  lastAttemptAt: Date | null = null;

  @Property({ type: 'smallint', nullable: true })
  lastHttpStatus: number | null = null;

  @Property({ type: 'string', length: 500, nullable: true })
  lastError: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  deliveredAt: Date | null = null;

  /**
   * Until when an instance holds the current attempt (PostgreSQL's real `now()`, not the domain
   * clock: a lease is about a process being alive, and moving the domain clock must not free it).
   */
  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  leasedUntil: Date | null = null;

  /** Who holds the current attempt; a result is written only by the holder. */
  @Property({ type: 'uuid', nullable: true })
  lockToken: string | null = null;
}
