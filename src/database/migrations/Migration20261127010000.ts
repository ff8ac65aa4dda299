import { Migration } from '@mikro-orm/migrations';

/**
 * Retention (the production issue): the retention job deletes final webhook deliveries and
 * e-mails by age. Partial indexes hold just the final rows, by their last change, so each batch
 * costs what it deletes, not the table's size; pending rows (the delivery workers' queue) are
 * not in them. `if not exists`: an operator of a large installation may have built them
 * beforehand with `CREATE INDEX CONCURRENTLY` (docs/operations.md#retention).
 */
export class Migration20261127010000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index if not exists "email_outbox_final_idx" on "email_outbox" ("updated_at") where "status" <> 'pending';`,
    );
    this.addSql(
      `create index if not exists "webhook_deliveries_final_idx" on "webhook_deliveries" ("updated_at") where "status" <> 'pending';`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "email_outbox_final_idx";`);
    this.addSql(`drop index "webhook_deliveries_final_idx";`);
  }
}
