import { BigIntType, Entity, PrimaryKey, Property } from '@mikro-orm/core';

/**
 * The version of what a wallet's token-delegate subscriptions in one mint are, as a charge's
 * reservation reads them (docs/billing.md, "One approval, many subscriptions"): one more
 * whenever any of it changes, written by triggers in the same transaction as the change
 * (Migration20261205010000), never by a statement of the service. A charge judged under one
 * version is recorded only while it is still the wallet's. No row: version 0.
 *
 * Beside it, kept by the same triggers (Migration20261207010000): what the wallet's live
 * token-delegate subscriptions in the mint still need of the approval, and how many they are.
 * A claim judges a charge on them, an upper bound of what the earlier ones need.
 */
@Entity({ tableName: 'wallet_approval_versions' })
export class WalletApprovalVersion {
  @PrimaryKey({ type: 'string', length: 44 })
  wallet!: string;

  @PrimaryKey({ type: 'string', length: 8 })
  mint!: string;

  @Property({ type: new BigIntType('bigint'), default: 0 })
  version!: bigint;

  /** Σ over the live ones of `greatest(authorized_amount - charged_amount, 0)` (base units). */
  @Property({ columnType: 'numeric(40,0)', type: 'string', default: 0 })
  need!: string;

  /** How many live ones there are (Active or PastDue, not revoked). */
  @Property({ type: 'integer', default: 0 })
  live!: number;
}
