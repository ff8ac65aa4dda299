import { Entity, Index, ManyToOne, PrimaryKey, Property, Unique, type Ref } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { Merchant } from '../../merchants/entities/merchant.entity';

/**
 * An `Idempotency-Key` a merchant sent with a POST (Stripe's manner), kept 24 hours: the request
 * it belongs to (a fingerprint of method, path and body) and, once that request has finished,
 * its response. While the request runs, `owner` names the execution holding the key and
 * `lockedUntil` bounds how long it may hold it.
 */
@Entity({ tableName: 'idempotency_keys' })
@Unique({ name: 'idempotency_keys_merchant_key_unique', properties: ['merchant', 'key'] })
@Index({ name: 'idempotency_keys_expires_idx', properties: ['expiresAt'] })
export class IdempotencyKey {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Merchant, { ref: true, deleteRule: 'cascade' })
  merchant!: Ref<Merchant>;

  @Property({ type: 'string', length: 255 })
  key!: string;

  /** SHA-256 (hex) of the method, the path and the body. */
  @Property({ type: 'string', length: 64 })
  fingerprint!: string;

  /** The execution holding the key (a fencing token): a stale holder cannot complete it. */
  @Property({ type: 'uuid' })
  owner!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)' })
  lockedUntil!: Date;

  /** The first response's status; null while the request runs. */
  @Property({ type: 'integer', nullable: true })
  responseStatus: number | null = null;

  /** The first response's body, as sent. */
  @Property({ type: 'text', nullable: true })
  responseBody: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)' })
  createdAt!: Date;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)' })
  expiresAt!: Date;
}
