import {
  BigIntType,
  Entity,
  Enum,
  Index,
  ManyToOne,
  PrimaryKey,
  Property,
  type Ref,
} from '@mikro-orm/core';
import { Merchant } from '../../merchants/entities/merchant.entity';

/** What an address's scan looks for: invoice payments, or subscribes to one plan. */
export const CURSOR_KINDS = ['merchant_account', 'plan_subscribes'] as const;
export type CursorKind = (typeof CURSOR_KINDS)[number];

/**
 * Where the watchers' forward scans of one address stand. `cursor` is the newest signature
 * whose transactions were all processed: a scan reads every signature after it (spam only makes
 * it longer), so a sweep with no new activity costs one RPC call per address. What came after
 * it is read as a window, newest page first and each page oldest first, saving progress after
 * every page (`windowTop`, `windowBefore`), so a long history is read in bounded steps across
 * sweeps and never held in memory whole.
 */
@Entity({ tableName: 'chain_cursors' })
/** The watchers look up a merchant's cursors of a kind (which of its accounts lack one). */
@Index({ name: 'chain_cursors_merchant_kind_idx', properties: ['merchant', 'kind'] })
/** A sweep takes its cursors up a few at a time, walked longest ago first (`ChainCursors`). */
@Index({ name: 'chain_cursors_kind_updated_idx', properties: ['kind', 'updatedAt', 'address'] })
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

  /** The newest signature of the window being read (it becomes `cursor` once it is done). */
  @Property({ type: 'string', length: 88, nullable: true })
  windowTop: string | null = null;

  /** The oldest signature of the window read so far: the pages older than it remain. */
  @Property({ type: 'string', length: 88, nullable: true })
  windowBefore: string | null = null;

  /**
   * A new cursor's first window stops at transactions older than this slot (before the first
   * invoice, or the plan's first checkout, nothing can be ours). Null: the whole history.
   */
  @Property({ type: new BigIntType('number'), nullable: true })
  startSlot: number | null = null;

  /** Until when an instance reads it (PostgreSQL's `now()`); then anyone may. */
  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  leaseUntil: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)' })
  updatedAt!: Date;
}
