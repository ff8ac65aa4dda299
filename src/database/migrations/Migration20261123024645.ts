import { Migration } from '@mikro-orm/migrations';

export class Migration20261123024645 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "webhook_deliveries" add column "leased_until" timestamptz(3) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "webhook_deliveries" drop column "leased_until";`);
  }
}
