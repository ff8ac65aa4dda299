import { Migration } from '@mikro-orm/migrations';

export class Migration20261122022858 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "merchants" ("id" uuid not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "name" varchar(100) not null, "wallet_address" varchar(44) not null, "webhook_url" text null, "webhook_secret" varchar(80) not null, "previous_webhook_secret" varchar(80) null, "previous_webhook_secret_expires_at" timestamptz(3) null, constraint "merchants_pkey" primary key ("id"));`,
    );

    this.addSql(
      `create table "customers" ("id" uuid not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "merchant_id" uuid not null, "wallet_address" varchar(44) not null, "email" varchar(254) null, "label" varchar(100) null, constraint "customers_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "customers_merchant_created_idx" on "customers" ("merchant_id", "created_at", "id");`,
    );
    this.addSql(
      `alter table "customers" add constraint "customers_merchant_wallet_unique" unique ("merchant_id", "wallet_address");`,
    );

    this.addSql(
      `create table "api_keys" ("id" uuid not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "merchant_id" uuid not null, "label" varchar(100) null, "key_hash" varchar(64) not null, "prefix" varchar(8) not null, "last_used_at" timestamptz(3) null, "revoked_at" timestamptz(3) null, constraint "api_keys_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "api_keys" add constraint "api_keys_key_hash_unique" unique ("key_hash");`,
    );
    this.addSql(
      `create index "api_keys_merchant_active_idx" on "api_keys" ("merchant_id", "created_at");`,
    );

    this.addSql(
      `alter table "customers" add constraint "customers_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "api_keys" add constraint "api_keys_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );
  }
}
