import { Migration } from '@mikro-orm/migrations';

/**
 * The two outboxes (`webhook_deliveries`, `email_outbox`) keep a fifth of each page free, so
 * that a claim's lease (which changes no indexed column) is written on the row's own page as a
 * heap-only tuple, with no new entry in any of the table's indexes (docs/performance.md,
 * webhooks). Pages written before this keep their layout until rewritten.
 */
export class Migration20261201010000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "webhook_deliveries" set (fillfactor = 80);`);
    this.addSql(`alter table "email_outbox" set (fillfactor = 80);`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "webhook_deliveries" reset (fillfactor);`);
    this.addSql(`alter table "email_outbox" reset (fillfactor);`);
  }
}
