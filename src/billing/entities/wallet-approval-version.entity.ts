import { BigIntType, Entity, PrimaryKey, Property } from '@mikro-orm/core';

/**
 * The version of what a wallet's token-delegate subscriptions in one mint are, as a charge's
 * reservation reads them (docs/billing.md, "One approval, many subscriptions"): one more
 * whenever any of it changes, written by triggers in the same transaction as the change
 * (Migration20261205010000), never by a statement of the service. A charge judged under one
 * version is recorded only while it is still the wallet's. No row: version 0.
 */
@Entity({ tableName: 'wallet_approval_versions' })
export class WalletApprovalVersion {
  @PrimaryKey({ type: 'string', length: 44 })
  wallet!: string;

  @PrimaryKey({ type: 'string', length: 8 })
  mint!: string;

  @Property({ type: new BigIntType('bigint'), default: 0 })
  version!: bigint;
}
