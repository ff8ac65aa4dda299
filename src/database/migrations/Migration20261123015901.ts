import { Migration } from '@mikro-orm/migrations';

export class Migration20261123015901 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "events" ("id" uuid not null, "merchant_id" uuid not null, "type" varchar(64) not null, "payload" json not null, "created_at" timestamptz(3) not null, constraint "events_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "events_merchant_type_created_idx" on "events" ("merchant_id", "type", "created_at", "id");`,
    );
    this.addSql(
      `create index "events_merchant_created_idx" on "events" ("merchant_id", "created_at", "id");`,
    );

    this.addSql(
      `create table "webhook_deliveries" ("id" uuid not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "event_id" uuid not null, "merchant_id" uuid not null, "status" text check ("status" in ('pending', 'delivered', 'failed', 'skipped')) not null, "attempts" int not null default 0, "next_attempt_at" timestamptz(3) null, "last_attempt_at" timestamptz(3) null, "last_http_status" smallint null, "last_error" varchar(500) null, "delivered_at" timestamptz(3) null, "lock_token" uuid null, constraint "webhook_deliveries_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "webhook_deliveries_merchant_id_index" on "webhook_deliveries" ("merchant_id");`,
    );
    this.addSql(
      `create index "webhook_deliveries_event_idx" on "webhook_deliveries" ("event_id", "created_at");`,
    );
    this.addSql(
      `create index "webhook_deliveries_due_idx" on "webhook_deliveries" ("next_attempt_at") where "status" = 'pending';`,
    );

    this.addSql(
      `alter table "events" add constraint "events_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_event_id_foreign" foreign key ("event_id") references "events" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(
      `alter table "webhook_deliveries" drop constraint "webhook_deliveries_event_id_foreign";`,
    );

    this.addSql(`drop table if exists "events" cascade;`);

    this.addSql(`drop table if exists "webhook_deliveries" cascade;`);
  }
}
