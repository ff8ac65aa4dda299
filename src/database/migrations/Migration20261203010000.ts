import { Migration } from '@mikro-orm/migrations';

/**
 * Each subscription carries its payer's wallet and its plan's mint (`wallet`, `mint`), so that a
 * token-delegate charge reads its wallet's reservation (docs/billing.md, "One approval, many
 * subscriptions") from one range of an index of `subscriptions`: before, every reading went
 * customers by wallet, each customer's subscriptions, and each one's plan for its mint, twice a
 * charge (the claim's reading and the recording's fingerprint).
 *
 * Both are copies of what cannot change (a customer's wallet, a plan's mint; a subscription
 * never changes customer or plan), written by a trigger from the customer and the plan on every
 * insert and on any update that names them, so no statement can write them otherwise: the
 * statements that insert subscriptions (and an instance of the build before, during a rolling
 * upgrade) do not name them. That the originals never change is held by the database too: an
 * update of a customer's wallet or a plan's mint is refused (`restrict_violation`). A customer
 * or plan that does not exist is the foreign key's error, as it was (raised by the trigger,
 * which runs before the key is checked).
 *
 * Existing rows are filled in the upgrade's transaction, one pass over the table and its new
 * index, which holds `subscriptions` exclusively meanwhile: every instance's statements on it
 * wait for the upgrade. The guards of `customers` and `plans` are created first (each holds its
 * table against writes while it is created), then `subscriptions` is taken: the order a
 * subscribe writes them in (its customer, then its subscription), and the charge engine only
 * reads customers and plans, so neither can deadlock with the upgrade.
 */
/** What subscriptions copy, each refused to change by a trigger of its own. */
const FIXED = [
  {
    name: 'customers_wallet_fixed',
    table: 'customers',
    column: 'wallet_address',
    message: "a customer''s wallet never changes (its subscriptions carry it)",
  },
  {
    name: 'plans_mint_fixed',
    table: 'plans',
    column: 'mint',
    message: "a plan''s mint never changes (its subscriptions carry it)",
  },
] as const;

export class Migration20261203010000 extends Migration {
  override async up(): Promise<void> {
    // What the copies are copies of never changes: held by the database, not only by the code.
    // Created first: a subscribe writes its customer, then its subscription, so the upgrade
    // takes the tables in that order too.
    for (const guard of FIXED) {
      this.addSql(
        `create function "${guard.name}"() returns trigger language plpgsql as $$ begin ` +
          `if new."${guard.column}" is distinct from old."${guard.column}" then raise restrict_violation using message = '${guard.message}'; end if; ` +
          `return new; end $$;`,
      );
      this.addSql(
        `create trigger "${guard.name}" before update of "${guard.column}" on "${guard.table}" for each row execute function "${guard.name}"();`,
      );
    }
    this.addSql(
      `alter table "subscriptions" add column "wallet" varchar(44) null, add column "mint" varchar(8) null;`,
    );
    this.addSql(
      `update "subscriptions" s set "wallet" = c."wallet_address", "mint" = p."mint" from "customers" c, "plans" p where c."id" = s."customer_id" and p."id" = s."plan_id";`,
    );
    // A missing customer or plan is the foreign key's error, as it was (this runs before the
    // key is checked); a null id is left to its own NOT NULL.
    this.addSql(
      `create function "subscriptions_payer"() returns trigger language plpgsql as $$ begin ` +
        `if new."customer_id" is null or new."plan_id" is null then return new; end if; ` +
        `select c."wallet_address" into new."wallet" from "customers" c where c."id" = new."customer_id"; ` +
        `if not found then raise foreign_key_violation using message = format('subscriptions.customer_id %s names no customer', new."customer_id"); end if; ` +
        `select p."mint" into new."mint" from "plans" p where p."id" = new."plan_id"; ` +
        `if not found then raise foreign_key_violation using message = format('subscriptions.plan_id %s names no plan', new."plan_id"); end if; ` +
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
    for (const guard of FIXED) {
      this.addSql(`drop trigger "${guard.name}" on "${guard.table}";`);
      this.addSql(`drop function "${guard.name}"();`);
    }
    this.addSql(`drop trigger "subscriptions_payer" on "subscriptions";`);
    this.addSql(`drop function "subscriptions_payer"();`);
    this.addSql(`alter table "subscriptions" drop column "wallet", drop column "mint";`);
  }
}
