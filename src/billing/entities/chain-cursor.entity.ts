import { Entity, Enum, ManyToOne, PrimaryKey, Property, type Ref } from '@mikro-orm/core';
import { Merchant } from '../../merchants/entities/merchant.entity';

/** What an address's scan looks for: invoice payments, or subscribes to one plan. */
export const CURSOR_KINDS = ['merchant_account', 'plan_subscribes'] as const;
export type CursorKind = (typeof CURSOR_KINDS)[number];

/**
 * Where the watchers' forward scans of one address stopped: the newest signature processed.
 * A scan reads every signature after it (spam only makes it longer), so a sweep with no new
 * activity costs one RPC call per address.
 */
@Entity({ tableName: 'chain_cursors' })
export class ChainCursor {
  @PrimaryKey({ type: 'string', length: 44 })
  address!: string;

  @Enum({ items: () => [...CURSOR_KINDS], type: 'string', length: 24 })
  kind!: CursorKind;

  @ManyToOne(() => Merchant, { ref: true, deleteRule: 'cascade' })
  merchant!: Ref<Merchant>;

  /** The plan scanned for subscribes (kind `plan_subscribes`). */
  @Property({ type: 'uuid', nullable: true })
  planId: string | null = null;

  @Property({ type: 'string', length: 8 })
  mint!: string;

  @Property({ type: 'string', length: 88, nullable: true })
  cursor: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)' })
  updatedAt!: Date;
}
