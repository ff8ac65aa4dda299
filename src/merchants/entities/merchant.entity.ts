import { Entity, Property, Unique } from '@mikro-orm/core';
import { BaseEntity } from '../../common/base.entity';

/** A merchant account: the tenant every other record belongs to. */
@Entity({ tableName: 'merchants' })
export class Merchant extends BaseEntity {
  @Property({ type: 'string', length: 100 })
  name: string;

  /**
   * Settlement wallet: payments go to its associated token accounts. One merchant's: what
   * arrives in them is attributed to this merchant alone.
   */
  @Property({ type: 'string', length: 44 })
  @Unique({ name: 'merchants_wallet_address_unique' })
  walletAddress: string;

  @Property({ type: 'text', nullable: true })
  webhookUrl: string | null = null;

  @Property({ type: 'string', length: 80, hidden: true })
  webhookSecret: string;

  /** The secret replaced by the latest rotation; it keeps signing until the expiry below. */
  @Property({ type: 'string', length: 80, nullable: true, hidden: true })
  previousWebhookSecret: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  previousWebhookSecretExpiresAt: Date | null = null;

  constructor(input: { name: string; walletAddress: string; webhookSecret: string; now: Date }) {
    super();
    this.name = input.name;
    this.walletAddress = input.walletAddress;
    this.webhookSecret = input.webhookSecret;
    this.stamp(input.now);
  }
}
