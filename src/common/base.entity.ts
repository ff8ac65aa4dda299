import { PrimaryKey, Property } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';

/** Every table's id (UUID) and timestamps. Timestamps come from the injected clock, not the database. */
export abstract class BaseEntity {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'datetime', columnType: 'timestamptz(3)' })
  createdAt!: Date;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)' })
  updatedAt!: Date;

  protected stamp(now: Date): void {
    this.createdAt = now;
    this.updatedAt = now;
  }
}
