import { Migration } from '@mikro-orm/migrations';

/**
 * A token-delegate charge records its subscriber's wallet (`charge_attempts.wallet`), so that
 * a claim passes the wallets with a charge open in any instance (one probe of the open
 * attempts' wallet index per candidate) instead of claiming a sibling that could only wait for
 * it, holding a lane (docs/billing.md). The attempts with a try that may still land get theirs
 * here (an open one with nothing sent may be one put off for minutes, which holds no turn);
 * those without one, and those written by instances of the build before during a rolling
 * upgrade, have none, and their siblings are waited for as before. Instances of the build
 * before do not clear it when they put an attempt off: such a turn is held until the attempt
 * is settled or its lease ends (bounded by the upgrade). The column is added and the index
 * built inside the upgrade's transaction, which holds `charge_attempts` exclusively meanwhile.
 */
export class Migration20261202010000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "charge_attempts" add column "wallet" text null;`);
    this.addSql(
      `update "charge_attempts" a set "wallet" = c."wallet_address" from "subscriptions" s join "customers" c on c."id" = s."customer_id" where s."id" = a."subscription_id" and s."scheme" = 'token-delegate' and a."state" in ('pending', 'sent') and a."signature" is not null;`,
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
