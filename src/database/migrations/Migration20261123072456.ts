import { Migration } from '@mikro-orm/migrations';

/**
 * `webhook_deliveries` is a queue: rows are inserted, updated once or a few times and then left.
 * The default autovacuum thresholds (a fifth of the table changed before vacuum, a tenth before
 * analyze) let the planner's picture of the pending rows go stale during a burst, and the claim
 * query then scans every due row instead of the first few in order. These thresholds keep it
 * current. Storage parameters are not part of MikroORM's schema model, so this adds no drift.
 */
export class Migration20261123072456 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "webhook_deliveries" set (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.01, autovacuum_analyze_threshold = 200);`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(
      `alter table "webhook_deliveries" reset (autovacuum_vacuum_scale_factor, autovacuum_analyze_scale_factor, autovacuum_analyze_threshold);`,
    );
  }
}
