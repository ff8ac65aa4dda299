import { Migration } from '@mikro-orm/migrations';

/**
 * Customer self-service (issue 12): a subscription remembers the customer's revoke of its
 * authorisation, signed at the portal and seen on-chain; it ends at the end of the period paid for.
 */
export class Migration20261124221036 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "subscriptions" add column "revoked_at" timestamptz(3) null, add column "revoke_signature" varchar(88) null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(
      `alter table "subscriptions" drop column "revoked_at", drop column "revoke_signature";`,
    );
  }
}
