import { Migration } from '@mikro-orm/migrations';

/**
 * Metered subscriptions (docs/usage.md): a plan's meter (`plans.meter_*`, `usage_grace_seconds`;
 * `plans.amount` stays what one period may charge at most, the fixed fee plus the meter's cap),
 * `usage_events` keyed by the merchant's own event id, and `usage_periods`, each metered period
 * as usage sees it: open, then closed by the charge that bills it, with what it came to.
 */
export class Migration20261130020000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "usage_events" ("merchant_id" uuid not null, "event_id" varchar(100) not null, "subscription_id" uuid not null, "meter" varchar(64) not null, "quantity" bigint not null, "period" int not null, "occurred_at" timestamptz(3) not null, "created_at" timestamptz(3) not null, constraint "usage_events_pkey" primary key ("merchant_id", "event_id"));`,
    );
    this.addSql(
      `create index "usage_events_period_idx" on "usage_events" ("subscription_id", "period") include ("quantity");`,
    );
    this.addSql(
      `create table "usage_periods" ("subscription_id" uuid not null, "period" int not null, "merchant_id" uuid not null, "closed_at" timestamptz(3) null, "units" bigint null, "usage_amount" bigint null, "charged_amount" bigint null, "breakdown" jsonb null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, constraint "usage_periods_pkey" primary key ("subscription_id", "period"));`,
    );
    this.addSql(
      `alter table "usage_events" add constraint "usage_events_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "usage_periods" add constraint "usage_periods_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "plans" add column "meter_name" varchar(64) null, add column "meter_unit_price" bigint null, add column "meter_unit_size" bigint null, add column "meter_included_units" bigint null, add column "meter_cap" bigint null, add column "usage_grace_seconds" int not null default 0;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(
      `alter table "plans" drop column "meter_name", drop column "meter_unit_price", drop column "meter_unit_size", drop column "meter_included_units", drop column "meter_cap", drop column "usage_grace_seconds";`,
    );
    this.addSql(`drop table "usage_periods";`);
    this.addSql(`drop table "usage_events";`);
  }
}
