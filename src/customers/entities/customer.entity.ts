import { Entity, Index, ManyToOne, Property, Unique, type Ref } from '@mikro-orm/core';
import { BaseEntity } from '../../common/base.entity';
import { Merchant } from '../../merchants/entities/merchant.entity';

/** A paying customer of one merchant, identified by wallet address (unique per merchant). */
@Entity({ tableName: 'customers' })
@Unique({ name: 'customers_merchant_wallet_unique', properties: ['merchant', 'walletAddress'] })
@Index({ name: 'customers_merchant_created_idx', properties: ['merchant', 'createdAt', 'id'] })
/** One wallet's subscriptions across merchants share its approval (token-delegate scheme). */
@Index({ name: 'customers_wallet_idx', properties: ['walletAddress'] })
/**
 * The list's `search` (a case-insensitive substring of wallet, label or e-mail, D11): trigrams
 * (pg_trgm) of each column, so that a search reads what matches, not every customer.
 */
@Index({
  name: 'customers_search_idx',
  expression:
    `create index "customers_search_idx" on "customers" using gin ` +
    `("wallet_address" gin_trgm_ops, "label" gin_trgm_ops, "email" gin_trgm_ops)`,
})
export class Customer extends BaseEntity {
  @ManyToOne(() => Merchant, { ref: true, deleteRule: 'cascade' })
  merchant!: Ref<Merchant>;

  @Property({ type: 'string', length: 44 })
  walletAddress!: string;

  @Property({ type: 'string', length: 254, nullable: true })
  email: string | null = null;

  @Property({ type: 'string', length: 100, nullable: true })
  label: string | null = null;

  /**
   * The customer as the API's JSON, rendered by a database trigger on every insert and update
   * (Migration20261124170000) for the invoice list's nested `customer`: never written or read
   * through the entity (lazy: not selected).
   */
  @Property({ type: 'text', nullable: true, lazy: true, hidden: true })
  listJson?: string | null;
}
