import { Migration } from '@mikro-orm/migrations';

export class Migration20261124161000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "invoices" add column "line_items_json" text null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "invoices" drop column "line_items_json";`);
  }
}
