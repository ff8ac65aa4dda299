import { Migration } from '@mikro-orm/migrations';

/**
 * Data at scale: the list searches (D11) read an index instead of every row of the merchant, and
 * the overdue sweep reads only the invoices it still has to mark.
 *
 * - `pg_trgm` (a trusted extension shipped with PostgreSQL: the embedded server, Debian's
 *   packages; a managed service must allow it) and a GIN index of trigrams over the columns
 *   each `search` matches: `ILIKE '%text%'` reads the rows holding the text's trigrams, not
 *   every row. One multicolumn index per table; the planner ORs its per-column scans.
 * - `invoices_newly_overdue_idx`: Open invoices not yet marked overdue, by due date.
 *
 * On an existing install the indexes are built inside the upgrade's transaction, which holds off
 * writes to the two tables meanwhile: about a minute per million invoices and ten seconds per
 * 200 000 customers on a 2-core machine (docs/performance.md, "Data at scale").
 */
export class Migration20261127020000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create extension if not exists pg_trgm;`);
    this.addSql(
      `create index "customers_search_idx" on "customers" using gin ("wallet_address" gin_trgm_ops, "label" gin_trgm_ops, "email" gin_trgm_ops);`,
    );
    this.addSql(
      `create index "invoices_search_idx" on "invoices" using gin ("onchain_id" gin_trgm_ops, "memo" gin_trgm_ops, (invoice_number("number")) gin_trgm_ops);`,
    );
    this.addSql(
      `create index "invoices_newly_overdue_idx" on "invoices" ("due_date") where "status" = 'Open' and "overdue_at" is null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "customers_search_idx";`);
    this.addSql(`drop index "invoices_search_idx";`);
    this.addSql(`drop index "invoices_newly_overdue_idx";`);
    // The extension stays: other objects (another application's) may use it.
  }
}
