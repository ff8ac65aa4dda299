import { Migration } from '@mikro-orm/migrations';

/**
 * Money paths, round two (issue 20): a charge attempt says who holds its lease and how often it
 * was taken over from an instance that died or stalled.
 */
export class Migration20261125190000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "charge_attempts" add column "lease_owner" varchar(128) null, add column "takeovers" int not null default 0;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(
      `alter table "charge_attempts" drop column "lease_owner", drop column "takeovers";`,
    );
  }
}
