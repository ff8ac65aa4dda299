import {
  BigIntType,
  Entity,
  Enum,
  ManyToOne,
  PrimaryKey,
  Property,
  type Ref,
} from '@mikro-orm/core';
import { Merchant } from '../../merchants/entities/merchant.entity';
import { CURSOR_KINDS, type CursorKind } from './chain-cursor.entity';

/**
 * A signature a watcher's walk listed under a scanned address but could not settle: the RPC did
 * not serve its transaction (a provider whose history lags or lost it), or judging it failed.
 * The walk goes on past it, so one such signature never holds up everything after it, and the
 * signature waits here: every sweep that walks the address tries it again and removes it once
 * it is settled. It is never dropped: after many tries it stays, and a warning says so, since the
 * money it may have moved is not recorded until then.
 */
@Entity({ tableName: 'unread_signatures' })
export class UnreadSignature {
  /** The scanned address (a cursor's) whose history lists it. */
  @PrimaryKey({ type: 'string', length: 44 })
  address!: string;

  @PrimaryKey({ type: 'string', length: 88 })
  signature!: string;

  @Enum({ items: () => [...CURSOR_KINDS], type: 'string', length: 24 })
  kind!: CursorKind;

  @ManyToOne(() => Merchant, { ref: true, deleteRule: 'cascade' })
  merchant!: Ref<Merchant>;

  /** The slot `getSignaturesForAddress` listed it at. */
  @Property({ type: new BigIntType('number') })
  slot!: number;

  /** How often a sweep tried it again since it was parked. */
  @Property({ type: 'integer', default: 0 })
  tries: number = 0;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)' })
  firstSeenAt!: Date;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  lastTriedAt: Date | null = null;
}
