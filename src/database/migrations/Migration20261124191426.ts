import { Migration } from '@mikro-orm/migrations';

/**
 * The billing engine (issue 11): charge attempts keyed by (subscription, period), the payments
 * ledger, the watchers' scan cursors, the subscription's share of its approval and what it has
 * been charged, the invoice's `overdueAt`, and a wallet index (one wallet's subscriptions across
 * merchants share one approval).
 */
export class Migration20261124191426 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "chain_cursors" ("address" varchar(44) not null, "kind" text check ("kind" in ('merchant_account', 'plan_subscribes')) not null, "merchant_id" uuid not null, "plan_id" uuid null, "mint" varchar(8) not null, "cursor" varchar(88) null, "updated_at" timestamptz(3) not null, constraint "chain_cursors_pkey" primary key ("address"));`,
    );

    this.addSql(
      `create table "payments" ("id" uuid not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "merchant_id" uuid not null, "kind" text check ("kind" in ('invoice', 'subscription')) not null, "status" text check ("status" in ('confirmed', 'finalized', 'failed')) not null, "customer_id" uuid null, "invoice_id" uuid null, "subscription_id" uuid null, "period" int null, "signature" varchar(88) null, "mint" varchar(8) not null, "amount" bigint not null, "excess" bigint not null default 0, "payer" varchar(44) null, "note" varchar(64) null, "slot" bigint null, "finalized_at" timestamptz(3) null, constraint "payments_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "payments_unfinalized_idx" on "payments" ("created_at") where "status" = 'confirmed';`,
    );
    this.addSql(
      `create unique index "payments_charge_signature_unique" on "payments" ("signature") where "kind" = 'subscription' and "status" <> 'failed';`,
    );
    this.addSql(
      `create unique index "payments_invoice_signature_unique" on "payments" ("signature", "invoice_id") where "kind" = 'invoice';`,
    );
    this.addSql(`create index "payments_subscription_idx" on "payments" ("subscription_id");`);
    this.addSql(`create index "payments_invoice_idx" on "payments" ("invoice_id");`);
    this.addSql(
      `create index "payments_merchant_created_idx" on "payments" ("merchant_id", "created_at", "id");`,
    );

    this.addSql(
      `create table "charge_attempts" ("id" uuid not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "merchant_id" uuid not null, "subscription_id" uuid not null, "period" int not null, "amount" bigint not null, "mint" varchar(8) not null, "state" text check ("state" in ('pending', 'sent', 'succeeded', 'failed', 'abandoned')) not null, "signature" varchar(88) null, "transaction" text null, "last_valid_block_height" bigint null, "tries" int not null default 1, "lease_until" timestamptz(3) null, "failure_reason" varchar(64) null, "last_error" varchar(1000) null, constraint "charge_attempts_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "charge_attempts_open_idx" on "charge_attempts" ("lease_until") where "state" in ('pending', 'sent');`,
    );
    this.addSql(
      `alter table "charge_attempts" add constraint "charge_attempts_period_unique" unique ("subscription_id", "period");`,
    );

    this.addSql(
      `alter table "chain_cursors" add constraint "chain_cursors_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "payments" add constraint "payments_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "charge_attempts" add constraint "charge_attempts_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "charge_attempts" add constraint "charge_attempts_subscription_id_foreign" foreign key ("subscription_id") references "subscriptions" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(`alter table "invoices" add column "overdue_at" timestamptz(3) null;`);
    this.addSql(
      `create index "invoices_open_due_idx" on "invoices" ("due_date") where "status" = 'Open';`,
    );

    this.addSql(
      `alter table "subscriptions" add column "subscribe_signature" varchar(88) null, add column "authorized_amount" bigint not null default 0, add column "charged_amount" bigint not null default 0, add column "periods_charged" int not null default 0;`,
    );
    this.addSql(
      `alter table "subscriptions" add constraint "subscriptions_subscribe_signature_unique" unique ("subscribe_signature");`,
    );
    this.addSql(`create index "customers_wallet_idx" on "customers" ("wallet_address");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "customers_wallet_idx";`);
    this.addSql(`drop table if exists "chain_cursors" cascade;`);

    this.addSql(`drop table if exists "payments" cascade;`);

    this.addSql(`drop table if exists "charge_attempts" cascade;`);

    this.addSql(`drop index "invoices_open_due_idx";`);
    this.addSql(`alter table "invoices" drop column "overdue_at";`);

    this.addSql(
      `alter table "subscriptions" drop constraint "subscriptions_subscribe_signature_unique";`,
    );
    this.addSql(
      `alter table "subscriptions" drop column "subscribe_signature", drop column "authorized_amount", drop column "charged_amount", drop column "periods_charged";`,
    );
  }
}
