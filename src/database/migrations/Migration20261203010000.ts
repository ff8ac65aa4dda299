import { Migration } from '@mikro-orm/migrations';

/**
 * Each subscription carries its payer's wallet and its plan's mint (`wallet`, `mint`), so that a
 * token-delegate charge reads its wallet's reservation (docs/billing.md, "Shared approvals") from
 * one range of an index of `subscriptions`: before, every reading went customers by wallet, each
 * customer's subscriptions, and each one's plan for its mint, twice a charge (the claim's reading
 * and the recording's fingerprint).
 *
 * Both are copies of what cannot change (a customer's wallet, a plan's mint; a subscription
 * never changes customer or plan), written by a trigger from the customer and the plan on every
 * insert and on any update that names them, so no statement can write them otherwise: the
 * statements that insert subscriptions (and an instance of the build before, during a rolling
 * upgrade) do not name them. A customer or plan that does not exist is the foreign key's error,
 * as it was (raised by the trigger, which runs before the key is checked). Existing rows are filled in the upgrade's transaction, which holds
 * `subscriptions` exclusively meanwhile (seconds per million subscriptions on a 2-core machine).
 */
export class Migration20261203010000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "subscriptions" add column "wallet" varchar(44) null, add column "mint" varchar(8) null;`,
    );
    this.addSql(
      `update "subscriptions" s set "wallet" = c."wallet_address", "mint" = p."mint" from "customers" c, "plans" p where c."id" = s."customer_id" and p."id" = s."plan_id";`,
    );
    this.addSql(
      `create function "subscriptions_payer"() returns trigger language plpgsql as $$ begin ` +
        `select c."wallet_address" into new."wallet" from "customers" c where c."id" = new."customer_id"; ` +
        `if not found then raise foreign_key_violation using message = 'subscriptions.customer_id ' || new."customer_id" || ' names no customer'; end if; ` +
        `select p."mint" into new."mint" from "plans" p where p."id" = new."plan_id"; ` +
        `if not found then raise foreign_key_violation using message = 'subscriptions.plan_id ' || new."plan_id" || ' names no plan'; end if; ` +
        `return new; end $$;`,
    );
    this.addSql(
      `create trigger "subscriptions_payer" before insert or update of "customer_id", "plan_id", "wallet", "mint" on "subscriptions" for each row execute function "subscriptions_payer"();`,
    );
    this.addSql(
      `alter table "subscriptions" alter column "wallet" set not null, alter column "mint" set not null;`,
    );
    this.addSql(
      `create index "subscriptions_wallet_idx" on "subscriptions" ("wallet", "mint") where "scheme" = 'token-delegate';`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger "subscriptions_payer" on "subscriptions";`);
    this.addSql(`drop function "subscriptions_payer"();`);
    this.addSql(`alter table "subscriptions" drop column "wallet", drop column "mint";`);
  }
}
