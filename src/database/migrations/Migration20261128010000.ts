import { Migration } from '@mikro-orm/migrations';

/**
 * Each subscription carries the scheme its customer authorised it under (docs/solana.md,
 * "Moving subscribers between schemes"): `SUBSCRIPTION_SCHEME` now says only which scheme new
 * subscriptions use, and a deployment moved from token-delegate to the program keeps charging the
 * subscriptions authorised before under their approvals until each customer moves.
 *
 * Existing rows are filled from what each scheme writes: a token-delegate subscription always
 * holds a share of the approval (`authorized_amount` = pull x periods, never 0); the program
 * scheme writes 0 there.
 *
 * The due index is rebuilt inside the upgrade's transaction, which holds off writes to
 * `subscriptions` meanwhile (seconds per million subscriptions on a 2-core machine).
 */
export class Migration20261128010000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "subscriptions" add column "scheme" text null;`);
    this.addSql(
      `update "subscriptions" set "scheme" = case when "authorized_amount" > 0 then 'token-delegate' else 'program' end;`,
    );
    // During a rolling upgrade, instances of the build before insert without the column: the
    // same rule fills it (theirs are authorised under the one scheme the deployment runs, which
    // writes what the rule reads). Kept until a later migration drops it.
    this.addSql(
      `create function "subscriptions_scheme_default"() returns trigger language plpgsql as $$ begin if new."scheme" is null then new."scheme" := case when new."authorized_amount" > 0 then 'token-delegate' else 'program' end; end if; return new; end $$;`,
    );
    this.addSql(
      `create trigger "subscriptions_scheme_default" before insert on "subscriptions" for each row execute function "subscriptions_scheme_default"();`,
    );
    this.addSql(`alter table "subscriptions" alter column "scheme" set not null;`);
    this.addSql(
      `alter table "subscriptions" add constraint "subscriptions_scheme_check" check ("scheme" in ('program', 'token-delegate'));`,
    );
    // A customer's move to the program is a use of its signature, once, as every other.
    this.addSql(
      `alter table "subscription_signatures" drop constraint "subscription_signatures_use_check";`,
    );
    this.addSql(
      `alter table "subscription_signatures" add constraint "subscription_signatures_use_check" check ("use" in ('subscribe', 'reauthorize', 'cancel', 'move'));`,
    );
    // The charge run claims each scheme's due subscriptions by a statement of its own.
    this.addSql(`drop index "subscriptions_due_idx";`);
    this.addSql(
      `create index "subscriptions_due_idx" on "subscriptions" ("scheme", "current_period_end") where "status" = 'Active';`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger "subscriptions_scheme_default" on "subscriptions";`);
    this.addSql(`drop function "subscriptions_scheme_default"();`);
    this.addSql(`delete from "subscription_signatures" where "use" = 'move';`);
    this.addSql(
      `alter table "subscription_signatures" drop constraint "subscription_signatures_use_check";`,
    );
    this.addSql(
      `alter table "subscription_signatures" add constraint "subscription_signatures_use_check" check ("use" in ('subscribe', 'reauthorize', 'cancel'));`,
    );
    this.addSql(`alter table "subscriptions" drop column "scheme";`);
    this.addSql(
      `create index "subscriptions_due_idx" on "subscriptions" ("current_period_end") where "status" = 'Active';`,
    );
  }
}
