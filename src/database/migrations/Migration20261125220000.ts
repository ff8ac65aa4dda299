import { Migration } from '@mikro-orm/migrations';

/**
 * Money paths, round two (issue 20): the service key pays only for what it must. A merchant's
 * missing receiving account is told once (`receiving_account_alerts`) while its charges wait,
 * and each charge attempt counts the network fees the service key paid for it.
 */
export class Migration20261125220000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "receiving_account_alerts" ("merchant_id" uuid not null, "mint" varchar(8) not null, "address" varchar(44) not null, "created_at" timestamptz(3) not null, constraint "receiving_account_alerts_pkey" primary key ("merchant_id", "mint"));`,
    );
    this.addSql(
      `alter table "receiving_account_alerts" add constraint "receiving_account_alerts_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "charge_attempts" add column "network_fee" bigint not null default 0;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "receiving_account_alerts" cascade;`);
    this.addSql(`alter table "charge_attempts" drop column "network_fee";`);
  }
}
