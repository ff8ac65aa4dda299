import { Migration } from '@mikro-orm/migrations';

/**
 * Money paths, round two (issue 20): every accepted subscribe, re-authorise and cancel signature
 * is stored once under its own key (`subscription_signatures`), taking over the subscription's
 * own `subscribe_signature` and `revoke_signature` columns (their values are carried over).
 */
export class Migration20261125200000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "subscription_signatures" ("signature" varchar(88) not null, "subscription_id" uuid not null, "use" text check ("use" in ('subscribe', 'reauthorize', 'cancel')) not null, "created_at" timestamptz(3) not null, constraint "subscription_signatures_pkey" primary key ("signature"));`,
    );
    this.addSql(
      `create index "subscription_signatures_subscription_idx" on "subscription_signatures" ("subscription_id");`,
    );
    this.addSql(
      `alter table "subscription_signatures" add constraint "subscription_signatures_subscription_id_foreign" foreign key ("subscription_id") references "subscriptions" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `insert into "subscription_signatures" ("signature", "subscription_id", "use", "created_at") select "subscribe_signature", "id", 'subscribe', "created_at" from "subscriptions" where "subscribe_signature" is not null on conflict do nothing;`,
    );
    this.addSql(
      `insert into "subscription_signatures" ("signature", "subscription_id", "use", "created_at") select "revoke_signature", "id", 'cancel', coalesce("revoked_at", "updated_at") from "subscriptions" where "revoke_signature" is not null on conflict do nothing;`,
    );
    this.addSql(
      `alter table "subscriptions" drop constraint "subscriptions_subscribe_signature_unique";`,
    );
    this.addSql(
      `alter table "subscriptions" drop column "subscribe_signature", drop column "revoke_signature";`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(
      `alter table "subscriptions" add column "subscribe_signature" varchar(88) null, add column "revoke_signature" varchar(88) null;`,
    );
    this.addSql(
      `update "subscriptions" s set "subscribe_signature" = g."signature" from "subscription_signatures" g where g."subscription_id" = s."id" and g."use" = 'subscribe';`,
    );
    this.addSql(
      `update "subscriptions" s set "revoke_signature" = g."signature" from "subscription_signatures" g where g."subscription_id" = s."id" and g."use" = 'cancel';`,
    );
    this.addSql(
      `alter table "subscriptions" add constraint "subscriptions_subscribe_signature_unique" unique ("subscribe_signature");`,
    );
    this.addSql(`drop table if exists "subscription_signatures" cascade;`);
  }
}
