import { Migration } from '@mikro-orm/migrations';

/**
 * The watchers' walks go on past a signature they could not settle (its transaction not served
 * by the RPC, or judging it failed) instead of reading the same page again forever: the
 * signature is parked in `unread_signatures`, tried again by every sweep that walks its address,
 * and removed once it is settled. A sweep takes its cursors up a few at a time (as lanes come
 * free), least recently walked first: an index serves that.
 */
export class Migration20261126000000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "unread_signatures" ("address" varchar(44) not null, "signature" varchar(88) not null, "kind" text check ("kind" in ('merchant_account', 'plan_subscribes')) not null, "merchant_id" uuid not null, "slot" bigint not null, "tries" int not null default 0, "first_seen_at" timestamptz(3) not null, "last_tried_at" timestamptz(3) null, constraint "unread_signatures_pkey" primary key ("address", "signature"));`,
    );
    this.addSql(
      `alter table "unread_signatures" add constraint "unread_signatures_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `create index "chain_cursors_kind_updated_idx" on "chain_cursors" ("kind", "updated_at", "address");`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "unread_signatures" cascade;`);
    this.addSql(`drop index "chain_cursors_kind_updated_idx";`);
  }
}
