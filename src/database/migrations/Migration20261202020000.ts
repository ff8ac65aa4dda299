import { Migration } from '@mikro-orm/migrations';

/**
 * A token-delegate charge records its subscriber's wallet (`charge_attempts.wallet`), so that
 * a claim passes the wallets with a charge open in any instance (one probe of the open
 * attempts' wallet index per candidate) instead of claiming a sibling that could only wait for
 * it, holding a lane (docs/billing.md). The attempts open during the upgrade get theirs here;
 * those written by instances of the build before during a rolling upgrade have none, and their
 * siblings are waited for as before.
 */
export class Migration20261202020000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "charge_attempts" add column "wallet" text null;`);
    this.addSql(
      `update "charge_attempts" a set "wallet" = c."wallet_address" from "subscriptions" s join "customers" c on c."id" = s."customer_id" where s."id" = a."subscription_id" and s."scheme" = 'token-delegate' and a."state" in ('pending', 'sent');`,
    );
    this.addSql(
      `create index "charge_attempts_open_wallet_idx" on "charge_attempts" ("wallet", "mint") where "state" in ('pending', 'sent') and "wallet" is not null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "charge_attempts_open_wallet_idx";`);
    this.addSql(`alter table "charge_attempts" drop column "wallet";`);
  }
}
