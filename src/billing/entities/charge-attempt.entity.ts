import {
  BigIntType,
  Check,
  Entity,
  Enum,
  Index,
  ManyToOne,
  Property,
  Unique,
  type Ref,
} from '@mikro-orm/core';
import { BaseEntity } from '../../common/base.entity';
import { Merchant } from '../../merchants/entities/merchant.entity';
import { Subscription } from '../../subscriptions/entities/subscription.entity';

/**
 * `pending`: claimed, nothing sent yet for its current try (or its last transaction expired
 * unsent); `sent`: a signed transaction is recorded (its signature settles it, whatever
 * happens to the instance that sent it); `succeeded`: the money moved (a payment row exists);
 * `failed`: this try failed for a reason that is not transient (the subscription moved with it);
 * `abandoned`: the subscription stopped being `Active` before anything was sent.
 */
export const CHARGE_ATTEMPT_STATES = [
  'pending',
  'sent',
  'succeeded',
  'failed',
  'abandoned',
] as const;
export type ChargeAttemptState = (typeof CHARGE_ATTEMPT_STATES)[number];

/**
 * One charge of one subscription period (DESIGN section 8), written **before** anything is
 * sent: the unique (subscription, period) key is what makes a charge exactly-once across
 * instances and crashes. A retry resumes this row: a recorded signature is settled (or its very
 * bytes re-sent, which can never land twice) before any new transaction is signed.
 */
@Entity({ tableName: 'charge_attempts' })
@Unique({ name: 'charge_attempts_period_unique', properties: ['subscription', 'period'] })
@Index({
  name: 'charge_attempts_open_idx',
  expression:
    `create index "charge_attempts_open_idx" on "charge_attempts" ("lease_until") ` +
    `where "state" in ('pending', 'sent')`,
})
/** The payment watcher tells the service's own charges from other money by their signature. */
@Index({
  name: 'charge_attempts_signature_idx',
  expression:
    `create index "charge_attempts_signature_idx" on "charge_attempts" ("signature") ` +
    `where "signature" is not null`,
})
/**
 * A claim passes the wallets whose turn an attempt holds, in any instance: one probe by wallet
 * (the rows with a wallet are exactly those: `charge_attempts_turn_open`).
 */
@Index({
  name: 'charge_attempts_open_wallet_idx',
  expression:
    `create index "charge_attempts_open_wallet_idx" on "charge_attempts" ("wallet", "mint") ` +
    `where "wallet" is not null`,
})
/** Only an open attempt holds its wallet's turn (cleared by a trigger when it ends). */
@Check({
  name: 'charge_attempts_turn_open',
  // As PostgreSQL writes it back (the schema test compares the two).
  expression: `(wallet IS NULL) OR (state = ANY (ARRAY['pending'::text, 'sent'::text]))`,
})
/** Each run follows the failed tries whose bytes may still land (`followFailedTries`). */
@Index({
  name: 'charge_attempts_failed_bytes_idx',
  expression:
    `create index "charge_attempts_failed_bytes_idx" on "charge_attempts" ("updated_at") ` +
    `where "state" = 'failed' and "transaction" is not null`,
})
export class ChargeAttempt extends BaseEntity {
  @ManyToOne(() => Merchant, { ref: true, deleteRule: 'cascade' })
  merchant!: Ref<Merchant>;

  @ManyToOne(() => Subscription, { ref: true, deleteRule: 'cascade' })
  subscription!: Ref<Subscription>;

  /** The period this charge pays for: 1 for the first charge, then one more per success. */
  @Property({ type: 'integer' })
  period!: number;

  /** Base units: the plan's amount when the attempt was written. */
  @Property({ type: new BigIntType('bigint') })
  amount!: bigint;

  @Property({ type: 'string', length: 8 })
  mint!: string;

  /**
   * Token-delegate: the subscriber's wallet while the attempt holds its wallet's turn (its
   * charges in a mint share one approval and go one at a time): written by the claim and a
   * resume, cleared when it is put off with nothing sent and when it ends (a trigger,
   * Migration20261204010000). Null under the program scheme.
   */
  @Property({ type: 'text', nullable: true })
  wallet?: string | null;

  @Enum({ items: () => [...CHARGE_ATTEMPT_STATES], type: 'string', length: 16 })
  state!: ChargeAttemptState;

  /** The current try's transaction signature, recorded before it is sent. */
  @Property({ type: 'string', length: 88, nullable: true })
  signature: string | null = null;

  /** The current try's signed bytes (base64): re-sent as they are, never re-signed. */
  @Property({ type: 'text', nullable: true })
  transaction: string | null = null;

  @Property({ type: new BigIntType('number'), nullable: true })
  lastValidBlockHeight: number | null = null;

  /** How many times the row was (re)armed: 1 at the first try. */
  @Property({ type: 'integer', default: 1 })
  tries: number = 1;

  /** Until when an instance holds it (PostgreSQL's real `now()`); then anyone may resume it. */
  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  leaseUntil: Date | null = null;

  /**
   * Lamports the service key paid in network fees for this attempt's tries that landed (a
   * failed one pays too): the operator's cost, per merchant (`npm run service-key:spend`).
   */
  @Property({ type: new BigIntType('bigint'), default: 0 })
  networkFee: bigint = 0n;

  /** The instance holding (or that last held) the lease: `host:pid:random`. */
  @Property({ type: 'string', length: 128, nullable: true })
  leaseOwner: string | null = null;

  /** How many times another instance took it over after its holder's lease ended. */
  @Property({ type: 'integer', default: 0 })
  takeovers: number = 0;

  @Property({ type: 'string', length: 64, nullable: true })
  failureReason: string | null = null;

  /** The chain's or the node's words for the latest failure (for support, never shown to customers). */
  @Property({ type: 'string', length: 1000, nullable: true })
  lastError: string | null = null;
}
