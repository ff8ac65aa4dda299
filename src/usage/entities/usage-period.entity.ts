import { BigIntType, Entity, ManyToOne, PrimaryKeyProp, Property, type Ref } from '@mikro-orm/core';
import { Merchant } from '../../merchants/entities/merchant.entity';

/**
 * A metered subscription's period as usage sees it (docs/usage.md): open while events may count
 * toward it, closed by the charge that bills it (the next period's), with what it came to
 * frozen then. Ingestion holds the row `FOR SHARE` while it writes events into the period, and
 * the close updates it: an event is counted in the period's charge, or refused, never both.
 */
@Entity({ tableName: 'usage_periods' })
export class UsagePeriod {
  [PrimaryKeyProp]?: ['subscriptionId', 'period'];

  @Property({ type: 'uuid', primary: true })
  subscriptionId!: string;

  @Property({ type: 'integer', primary: true })
  period!: number;

  @ManyToOne(() => Merchant, { ref: true, deleteRule: 'cascade' })
  merchant!: Ref<Merchant>;

  /** When the charge that bills it closed it; null while it is open. */
  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  closedAt: Date | null = null;

  /** What it came to, frozen at the close (millionths of a unit). */
  @Property({ type: new BigIntType('bigint'), nullable: true })
  units: bigint | null = null;

  /** The usage's price before the cap (base units). */
  @Property({ type: new BigIntType('bigint'), nullable: true })
  usageAmount: bigint | null = null;

  /** What was charged for it: `usageAmount` up to the cap. */
  @Property({ type: new BigIntType('bigint'), nullable: true })
  chargedAmount: bigint | null = null;

  /** The breakdown the charge's ledger line carries (`UsageBreakdown`), frozen at the close. */
  @Property({ type: 'json', nullable: true })
  breakdown: Record<string, unknown> | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)' })
  createdAt!: Date;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)' })
  updatedAt!: Date;
}
