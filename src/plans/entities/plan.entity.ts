import { BigIntType, Entity, Index, ManyToOne, Property, type Ref } from '@mikro-orm/core';
import { BaseEntity } from '../../common/base.entity';
import { Merchant } from '../../merchants/entities/merchant.entity';

/**
 * A subscription plan: what a subscriber pays (`amount` of `mint`) every `intervalSeconds`.
 * `amount`, `mint` and `intervalSeconds` never change after creation (the on-chain plan and
 * every subscriber's authorisation commit to them); label, description and `active` do.
 */
@Entity({ tableName: 'plans' })
@Index({ name: 'plans_merchant_created_idx', properties: ['merchant', 'createdAt', 'id'] })
export class Plan extends BaseEntity {
  @ManyToOne(() => Merchant, { ref: true, deleteRule: 'cascade' })
  merchant!: Ref<Merchant>;

  @Property({ type: 'string', length: 100 })
  label!: string;

  @Property({ type: 'string', length: 500, nullable: true })
  description: string | null = null;

  @Property({ type: 'string', length: 8 })
  mint!: string;

  /**
   * Base units of the mint (6 decimals): the most one period's charge may pull, what every
   * on-chain authorisation commits to. A plan without a meter charges it each period; a metered
   * plan charges `amount - meterCap` (its fixed fee) plus its usage, at most `meterCap`.
   */
  @Property({ type: new BigIntType('bigint') })
  amount!: bigint;

  /** The meter's name (docs/usage.md); null: the plan is not metered. */
  @Property({ type: 'string', length: 64, nullable: true })
  meterName: string | null = null;

  /** The price of one block of `meterUnitSize` units beyond the included ones (base units). */
  @Property({ type: new BigIntType('bigint'), nullable: true })
  meterUnitPrice: bigint | null = null;

  /** Units per priced block, in millionths of a unit (1,000,000: priced per unit). */
  @Property({ type: new BigIntType('bigint'), nullable: true })
  meterUnitSize: bigint | null = null;

  /** Units each period includes, in millionths of a unit. */
  @Property({ type: new BigIntType('bigint'), nullable: true })
  meterIncludedUnits: bigint | null = null;

  /** The most one period's usage is charged (base units): what the customer authorises for it. */
  @Property({ type: new BigIntType('bigint'), nullable: true })
  meterCap: bigint | null = null;

  /** How long after a period ends its late usage still counts (0 without a meter). */
  @Property({ type: 'integer', default: 0 })
  usageGraceSeconds: number = 0;

  @Property({ type: 'integer' })
  intervalSeconds!: number;

  /** `false`: no new subscribers; existing subscriptions are unaffected. */
  @Property({ type: 'boolean', default: true })
  active: boolean = true;

  /**
   * The plan's id on-chain (u64, decimal): the Subscriptions program's `plan_id`, the first 8
   * bytes of the plan's UUID (`onchainPlanId`), stored so it can be searched for.
   */
  @Property({ type: 'string', length: 20 })
  onchainPlanId!: string;

  /** The plan's on-chain account (program scheme: the plan PDA); null under token-delegate. */
  @Property({ type: 'string', length: 44, nullable: true })
  onchainAddress: string | null = null;
}
