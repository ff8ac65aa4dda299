import { Entity, Index, ManyToOne, Property, type Ref } from '@mikro-orm/core';
import { BaseEntity } from '../../common/base.entity';

/**
 * The merchant a key belongs to, as this module sees it: by name, not by class (the merchants
 * module sits above auth: creating a merchant issues its first key; auth imports nothing of it).
 */
interface KeyOwner {
  id: string;
}

/** An API key. Only the SHA-256 of the secret is stored; `prefix` is the first 8 hex characters of it. */
@Entity({ tableName: 'api_keys' })
@Index({ name: 'api_keys_merchant_active_idx', properties: ['merchant', 'createdAt'], options: {} })
export class ApiKey extends BaseEntity {
  @ManyToOne('Merchant', { ref: true, deleteRule: 'cascade' })
  merchant: Ref<KeyOwner>;

  @Property({ type: 'string', length: 100, nullable: true })
  label: string | null;

  @Property({ type: 'string', length: 64, unique: true, hidden: true })
  keyHash: string;

  @Property({ type: 'string', length: 8 })
  prefix: string;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  lastUsedAt: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(3)', nullable: true })
  revokedAt: Date | null = null;

  constructor(input: {
    merchant: Ref<KeyOwner>;
    label: string | null;
    keyHash: string;
    now: Date;
  }) {
    super();
    this.merchant = input.merchant;
    this.label = input.label;
    this.keyHash = input.keyHash;
    this.prefix = input.keyHash.slice(0, 8);
    this.stamp(input.now);
  }
}
