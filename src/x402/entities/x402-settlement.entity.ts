import {
  BigIntType,
  Entity,
  Enum,
  Index,
  ManyToOne,
  Property,
  type Ref,
  Unique,
} from '@mikro-orm/core';
import { BaseEntity } from '../../common/base.entity';
import { Merchant } from '../../merchants/entities/merchant.entity';

/**
 * `Pending`: co-signed and recorded, on its way to the chain (its signature settles it, never a
 * second send); `Settled`: it landed and moved the money (a `per_request` ledger line);
 * `Failed`: it landed and failed, or it can no longer land.
 */
export const X402_SETTLEMENT_STATUSES = ['Pending', 'Settled', 'Failed'] as const;
export type X402SettlementStatus = (typeof X402_SETTLEMENT_STATUSES)[number];

/**
 * One x402 payment the service settles as facilitator (docs/x402.md). The row is written, with
 * its network fee counted against the merchant's daily budget, before the transaction is sent:
 * its unique signature is what refuses a replayed payment, across instances and restarts, and
 * what settles one whose answer a crash lost.
 */
@Entity({ tableName: 'x402_settlements' })
@Unique({ name: 'x402_settlements_signature_unique', properties: ['signature'] })
@Index({
  name: 'x402_settlements_merchant_created_idx',
  properties: ['merchant', 'createdAt', 'id'],
})
@Index({
  name: 'x402_settlements_pending_idx',
  expression:
    `create index "x402_settlements_pending_idx" on "x402_settlements" ("created_at") ` +
    `where "status" = 'Pending'`,
})
export class X402Settlement extends BaseEntity {
  @ManyToOne(() => Merchant, { ref: true, deleteRule: 'cascade' })
  merchant!: Ref<Merchant>;

  @Enum({ items: () => [...X402_SETTLEMENT_STATUSES], type: 'string', length: 16 })
  status!: X402SettlementStatus;

  /** The transaction's id: the service key's (fee payer's) signature. */
  @Property({ type: 'string', length: 88 })
  signature!: string;

  /** The signed transaction (base64), so that its fate is always known from it. */
  @Property({ type: 'text' })
  transaction!: string;

  @Property({ type: new BigIntType('number') })
  lastValidBlockHeight!: number;

  @Property({ type: 'string', length: 64 })
  network!: string;

  /** The wallet that paid (the transfer's authority). */
  @Property({ type: 'string', length: 44 })
  payer!: string;

  @Property({ type: 'string', length: 8 })
  mint!: string;

  /** What the transfer moves (base units): the requirements' amount. */
  @Property({ type: new BigIntType('bigint') })
  amount!: bigint;

  /** What the service key pays for it (lamports), counted against the merchant's budget. */
  @Property({ type: new BigIntType('bigint') })
  networkFee!: bigint;

  @Property({ type: 'text', nullable: true })
  resourceUrl: string | null = null;

  /** The ledger line, once Settled. */
  @Property({ type: 'uuid', nullable: true })
  paymentId: string | null = null;

  /** Why it Failed (the chain's error, or `expired`). */
  @Property({ type: 'string', length: 200, nullable: true })
  error: string | null = null;
}
