import { Migration } from '@mikro-orm/migrations';

export class Migration20261124130936 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create unique index "subscriptions_live_unique" on "subscriptions" ("plan_id", "customer_id") where "status" in ('Active', 'PastDue');`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "subscriptions_live_unique";`);
  }
}
