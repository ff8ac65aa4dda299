import { BigIntType, Entity, Enum, Index, ManyToOne, Property, type Ref } from '@mikro-orm/core';
import { BaseEntity } from '../../common/base.entity';
import { Customer } from '../../customers/entities/customer.entity';
import { Merchant } from '../../merchants/entities/merchant.entity';
import { Plan } from '../../plans/entities/plan.entity';
import { SUBSCRIPTION_SCHEMES, type SubscriptionScheme } from '../../config/app-config';
import { SUBSCRIPTION_STATUSES, type SubscriptionStatus } from '../subscription-status';

/**
 * A customer's subscription to a plan, created when the customer's on-chain authorisation is
 * confirmed at checkout. Its status moves only through `SubscriptionsService.transition` (the
 * table in subscription-status.ts), which also records the event in the same transaction.
 */
@Entity({ tableName: 'subscriptions' })
@Index({ name: 'subscriptions_merchant_created_idx', properties: ['merchant', 'createdAt', 'id'] })
@Index({
  name: 'subscriptions_merchant_status_created_idx',
  properties: ['merchant', 'status', 'createdAt', 'id'],
})
@Index({ name: 'subscriptions_plan_idx', properties: ['plan'] })
@Index({ name: 'subscriptions_customer_created_idx', properties: ['customer', 'createdAt', 'id'] })
/** A customer has at most one live subscription to a plan (a second subscribe is a 409). */
@Index({
  name: 'subscriptions_live_unique',
  expression: `create unique index "subscriptions_live_unique" on "subscriptions" ("plan_id", "customer_id") where "status" in ('Active', 'PastDue')`,
})
/**
 * The charge run's claims: due `Active` subscriptions only, one claim per scheme, walked from
 * where the last claim stopped (equal due times in id order).
 */
@Index({
  name: 'subscriptions_due_idx',
  expression: `create index "subscriptions_due_idx" on "subscriptions" ("scheme", "current_period_end", "id") where "status" = 'Active'`,
})
/**
 * A wallet's token-delegate subscriptions in a mint (any merchant's): the approval they share,
 * read as each charge's reservation.
 */
@Index({
  name: 'subscriptions_wallet_idx',
  expression: `create index "subscriptions_wallet_idx" on "subscriptions" ("wallet", "mint") where "scheme" = 'token-delegate'`,
})
export class Subscription extends BaseEntity {
  @ManyToOne(() => Merchant, { ref: true, deleteRule: 'cascade' })
  merchant!: Ref<Merchant>;

  @ManyToOne(() => Plan, { ref: true, deleteRule: 'cascade' })
  plan!: Ref<Plan>;

  @ManyToOne(() => Customer, { ref: true, deleteRule: 'cascade' })
  customer!: Ref<Customer>;

  /**
   * Its customer's wallet and its plan's mint, copied by the `subscriptions_payer` trigger on
   * insert and on any update naming them or the customer or plan (Migration20261203010000),
   * never by a statement: what a wallet's reservation reads. Neither original can change.
   */
  @Property({ type: 'string', length: 44 })
  wallet!: string;

  @Property({ type: 'string', length: 8 })
  mint!: string;

  @Enum({ items: () => [...SUBSCRIPTION_STATUSES] })
  status!: SubscriptionStatus;

  /** When the next charge is due (the end of the period paid for); null when none is. */
  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  currentPeriodEnd: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  cancelledAt: Date | null = null;

  /** When the merchant paused it (cleared on resume); a charge failure leaves it null. */
  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  pausedAt: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  lastChargeAt: Date | null = null;

  /** Why the last charge failed (`insufficient_funds`, ...); null otherwise. */
  @Property({ type: 'string', length: 64, nullable: true })
  failureReason: string | null = null;

  /**
   * The scheme its customer authorised it under: charged, re-authorised and cancelled under it
   * whatever `SUBSCRIPTION_SCHEME` says now (that names the scheme of new subscriptions). A
   * token-delegate subscription moves to the program when its customer re-authorises there
   * (docs/solana.md, "Moving subscribers between schemes").
   */
  @Enum({ items: () => [...SUBSCRIPTION_SCHEMES], columnType: 'text' })
  scheme!: SubscriptionScheme;

  /**
   * Where the authorisation lives on-chain: the subscription delegation PDA (program scheme) or
   * the subscriber's token account carrying the approval (token-delegate).
   */
  @Property({ type: 'string', length: 44, nullable: true })
  onchainAddress: string | null = null;

  /**
   * Token-delegate scheme: this subscription's share of the shared approval (amount x approval
   * periods), in base units; 0 under the program scheme, where the program keeps the terms.
   */
  @Property({ type: new BigIntType('bigint'), default: 0 })
  authorizedAmount: bigint = 0n;

  /** What its successful charges took so far, in base units. */
  @Property({ type: new BigIntType('bigint'), default: 0 })
  chargedAmount: bigint = 0n;

  /** Periods charged successfully; the next charge pays for period `periodsCharged + 1`. */
  @Property({ type: 'integer', default: 0 })
  periodsCharged: number = 0;

  /**
   * When the customer's revoke of its authorisation (signed at the portal) was seen on-chain. It
   * is never charged again, needs nothing more of a shared approval, and ends (`Completed`,
   * `authorization_gone`) at the end of the period paid for.
   */
  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  revokedAt: Date | null = null;
}
