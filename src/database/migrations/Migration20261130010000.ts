import { Migration } from '@mikro-orm/migrations';

/**
 * x402 pay-per-request (docs/x402.md): `x402_settlements`, each payment the service settles as
 * facilitator, written before its transaction is sent (its unique signature refuses a replay);
 * `x402_fee_days`, the network fees spent per merchant per UTC day against its budget; the
 * ledger's `per_request` kind, one line per settled signature; and `payments.details`, what a
 * line is for beyond its columns (a per-request payment's resource, a metered charge's usage).
 */
export class Migration20261130010000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "x402_fee_days" ("merchant_id" uuid not null, "day" date not null, "spent" bigint not null, constraint "x402_fee_days_pkey" primary key ("merchant_id", "day"));`,
    );
    this.addSql(
      `create table "x402_settlements" ("id" uuid not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "merchant_id" uuid not null, "status" text check ("status" in ('Pending', 'Settled', 'Failed')) not null, "signature" varchar(88) not null, "transaction" text not null, "last_valid_block_height" bigint not null, "network" varchar(64) not null, "payer" varchar(44) not null, "mint" varchar(8) not null, "amount" bigint not null, "network_fee" bigint not null, "resource_url" text null, "payment_id" uuid null, "error" varchar(200) null, constraint "x402_settlements_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "x402_settlements_pending_idx" on "x402_settlements" ("created_at") where "status" = 'Pending';`,
    );
    this.addSql(
      `create index "x402_settlements_merchant_created_idx" on "x402_settlements" ("merchant_id", "created_at", "id");`,
    );
    this.addSql(
      `alter table "x402_settlements" add constraint "x402_settlements_signature_unique" unique ("signature");`,
    );
    this.addSql(
      `alter table "x402_fee_days" add constraint "x402_fee_days_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "x402_settlements" add constraint "x402_settlements_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(`alter table "payments" drop constraint if exists "payments_kind_check";`);
    this.addSql(`alter table "payments" add column "details" jsonb null;`);
    this.addSql(
      `alter table "payments" add constraint "payments_kind_check" check("kind" in ('invoice', 'subscription', 'unattributed', 'refund', 'per_request'));`,
    );
    this.addSql(
      `create unique index "payments_per_request_signature_unique" on "payments" ("signature") where "kind" = 'per_request';`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`delete from "payments" where "kind" = 'per_request';`);
    this.addSql(`drop index "payments_per_request_signature_unique";`);
    this.addSql(`alter table "payments" drop constraint if exists "payments_kind_check";`);
    this.addSql(
      `alter table "payments" add constraint "payments_kind_check" check("kind" in ('invoice', 'subscription', 'unattributed', 'refund'));`,
    );
    this.addSql(`alter table "payments" drop column "details";`);
    this.addSql(`drop table "x402_settlements";`);
    this.addSql(`drop table "x402_fee_days";`);
  }
}
