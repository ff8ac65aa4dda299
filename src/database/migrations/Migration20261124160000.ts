import { Migration } from '@mikro-orm/migrations';

/**
 * `invoice_number(n)`: the SQL twin of the invoice mapper's `invoiceNumber` (`INV-000042`, more
 * digits past 999 999), for the invoice search (D11) and list. A plain SQL function without
 * `strict`, so the planner inlines it. A test holds the two equal.
 */
export class Migration20261124160000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create function invoice_number(n integer) returns text
         language sql immutable parallel safe as $$
           select 'INV-' || case when n < 1000000 then lpad(n::text, 6, '0') else n::text end
         $$;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop function invoice_number(integer);');
  }
}
