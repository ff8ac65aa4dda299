import { Migration } from '@mikro-orm/migrations';

export class Migration20261124125959 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "invoice_numbers" ("merchant_id" uuid not null, "last" int not null, constraint "invoice_numbers_pkey" primary key ("merchant_id"));`,
    );

    this.addSql(
      `create table "idempotency_keys" ("id" uuid not null, "merchant_id" uuid not null, "key" varchar(255) not null, "fingerprint" varchar(64) not null, "owner" uuid not null, "locked_until" timestamptz(3) not null, "response_status" int null, "response_body" text null, "created_at" timestamptz(3) not null, "expires_at" timestamptz(3) not null, constraint "idempotency_keys_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "idempotency_keys_expires_idx" on "idempotency_keys" ("expires_at");`,
    );
    this.addSql(
      `alter table "idempotency_keys" add constraint "idempotency_keys_merchant_key_unique" unique ("merchant_id", "key");`,
    );

    this.addSql(
      `create table "invoices" ("id" uuid not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "merchant_id" uuid not null, "customer_id" uuid not null, "number" int not null, "status" text check ("status" in ('Open', 'Paid', 'Cancelled', 'Expired')) not null, "onchain_id" varchar(44) not null, "memo" varchar(500) null, "mint" varchar(8) not null, "line_items" jsonb not null, "subtotal" bigint not null, "tax_bps" int not null, "tax" bigint not null, "total" bigint not null, "amount_paid" bigint not null default 0, "due_date" timestamptz(3) null, "paid_at" timestamptz(3) null, "payment_signature" varchar(88) null, constraint "invoices_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "invoices_customer_created_idx" on "invoices" ("customer_id", "created_at", "id");`,
    );
    this.addSql(
      `create index "invoices_merchant_status_created_idx" on "invoices" ("merchant_id", "status", "created_at", "id");`,
    );
    this.addSql(
      `create index "invoices_merchant_created_idx" on "invoices" ("merchant_id", "created_at", "id");`,
    );
    this.addSql(
      `alter table "invoices" add constraint "invoices_onchain_id_unique" unique ("onchain_id");`,
    );
    this.addSql(
      `alter table "invoices" add constraint "invoices_merchant_number_unique" unique ("merchant_id", "number");`,
    );

    this.addSql(
      `create table "plans" ("id" uuid not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "merchant_id" uuid not null, "label" varchar(100) not null, "description" varchar(500) null, "mint" varchar(8) not null, "amount" bigint not null, "interval_seconds" int not null, "active" boolean not null default true, "onchain_plan_id" varchar(20) not null, "onchain_address" varchar(44) null, constraint "plans_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "plans_merchant_created_idx" on "plans" ("merchant_id", "created_at", "id");`,
    );

    this.addSql(
      `create table "subscriptions" ("id" uuid not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "merchant_id" uuid not null, "plan_id" uuid not null, "customer_id" uuid not null, "status" text check ("status" in ('Active', 'PastDue', 'Cancelled', 'Completed')) not null, "current_period_end" timestamptz(3) null, "cancelled_at" timestamptz(3) null, "paused_at" timestamptz(3) null, "last_charge_at" timestamptz(3) null, "failure_reason" varchar(64) null, "onchain_address" varchar(44) null, constraint "subscriptions_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "subscriptions_due_idx" on "subscriptions" ("current_period_end") where "status" = 'Active';`,
    );
    this.addSql(
      `create index "subscriptions_customer_created_idx" on "subscriptions" ("customer_id", "created_at", "id");`,
    );
    this.addSql(`create index "subscriptions_plan_idx" on "subscriptions" ("plan_id");`);
    this.addSql(
      `create index "subscriptions_merchant_status_created_idx" on "subscriptions" ("merchant_id", "status", "created_at", "id");`,
    );
    this.addSql(
      `create index "subscriptions_merchant_created_idx" on "subscriptions" ("merchant_id", "created_at", "id");`,
    );

    this.addSql(
      `alter table "invoice_numbers" add constraint "invoice_numbers_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "idempotency_keys" add constraint "idempotency_keys_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "invoices" add constraint "invoices_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "invoices" add constraint "invoices_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "plans" add constraint "plans_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "subscriptions" add constraint "subscriptions_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "subscriptions" add constraint "subscriptions_plan_id_foreign" foreign key ("plan_id") references "plans" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "subscriptions" add constraint "subscriptions_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "subscriptions" drop constraint "subscriptions_plan_id_foreign";`);

    this.addSql(`drop table if exists "invoice_numbers" cascade;`);

    this.addSql(`drop table if exists "idempotency_keys" cascade;`);

    this.addSql(`drop table if exists "invoices" cascade;`);

    this.addSql(`drop table if exists "plans" cascade;`);

    this.addSql(`drop table if exists "subscriptions" cascade;`);
  }
}
