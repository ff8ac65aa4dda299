import { Migration } from '@mikro-orm/migrations';

/**
 * The due index orders equal due times by id, so that a charge run's claims walk it from where
 * the last one stopped (`(current_period_end, id)` after the last claimed; docs/billing.md):
 * the charges under way sit at its front until they settle, and every claim read past all of
 * them again. Rebuilt inside the upgrade's transaction, which holds `subscriptions` exclusively
 * meanwhile (reads too: seconds per million subscriptions on a 2-core machine). It runs after
 * `Migration20261202010000`, which locks `charge_attempts`: the tables are taken in the order
 * the charge engine's settlement takes them (attempts, then subscriptions), so an instance of
 * the build before settling charges during the upgrade waits for it rather than deadlocking
 * with it. Should PostgreSQL still find a cycle, it aborts one side: a statement (retried), or
 * the upgrade (run again at the next start).
 */
export class Migration20261202020000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop index "subscriptions_due_idx";`);
    this.addSql(
      `create index "subscriptions_due_idx" on "subscriptions" ("scheme", "current_period_end", "id") where "status" = 'Active';`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "subscriptions_due_idx";`);
    this.addSql(
      `create index "subscriptions_due_idx" on "subscriptions" ("scheme", "current_period_end") where "status" = 'Active';`,
    );
  }
}
