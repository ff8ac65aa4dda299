import { Migration } from '@mikro-orm/migrations';

/** ISO 8601 UTC with milliseconds, as `Date.prototype.toISOString` writes it (JSON string). */
const iso = (column: string) =>
  `'"' || to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"'`;

/**
 * The parts of the invoice list's JSON that hold no money, kept on the rows by triggers (D11 list
 * performance, docs/performance.md): `invoices.list_json_head` (`{"id":…,"mint":"…"`),
 * `list_json_due_date` (the `dueDate` value) and `list_json_tail` (`"customerId":…,"updatedAt":…`),
 * and `customers.list_json` (the whole customer object). A trigger renders them on every insert
 * and update, whichever code writes the row, so they can never go stale; the list then reads them
 * instead of formatting 10 000 rows of timestamps per request. Free text goes through `to_json`,
 * which escapes as `JSON.stringify` does. The invoices e2e test holds the list equal to
 * `GET /api/invoices/:id`.
 */
export class Migration20261124170000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "invoices" add column "list_json_head" text null,
         add column "list_json_due_date" text null, add column "list_json_tail" text null;`,
    );
    this.addSql(`alter table "customers" add column "list_json" text null;`);
    this.addSql(
      `create function invoices_render_list_json() returns trigger language plpgsql as $$
       begin
         new.list_json_head := '{"id":"' || new.id || '","number":"' || invoice_number(new.number) ||
           '","status":"' || new.status || '","onchainId":"' || new.onchain_id || '","memo":' ||
           coalesce(to_json(new.memo)::text, 'null') || ',"mint":"' || new.mint || '"';
         new.list_json_due_date := coalesce(${iso('new.due_date')}, 'null');
         new.list_json_tail := '"customerId":"' || new.customer_id || '","paidAt":' ||
           coalesce(${iso('new.paid_at')}, 'null') || ',"paymentSignature":' ||
           coalesce('"' || new.payment_signature || '"', 'null') || ',"createdAt":' ||
           ${iso('new.created_at')} || ',"updatedAt":' || ${iso('new.updated_at')};
         return new;
       end $$;`,
    );
    this.addSql(
      `create function customers_render_list_json() returns trigger language plpgsql as $$
       begin
         new.list_json := '{"id":"' || new.id || '","merchantId":"' || new.merchant_id ||
           '","walletAddress":"' || new.wallet_address || '","email":' ||
           coalesce(to_json(new.email)::text, 'null') || ',"label":' ||
           coalesce(to_json(new.label)::text, 'null') || ',"createdAt":' ||
           ${iso('new.created_at')} || ',"updatedAt":' || ${iso('new.updated_at')} || '}';
         return new;
       end $$;`,
    );
    this.addSql(
      `create trigger invoices_render_list_json before insert or update on "invoices"
         for each row execute function invoices_render_list_json();`,
    );
    this.addSql(
      `create trigger customers_render_list_json before insert or update on "customers"
         for each row execute function customers_render_list_json();`,
    );
    // Rows written before the triggers: rendered by them now.
    this.addSql(`update "invoices" set "list_json_head" = null;`);
    this.addSql(`update "customers" set "list_json" = null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger customers_render_list_json on "customers";`);
    this.addSql(`drop trigger invoices_render_list_json on "invoices";`);
    this.addSql(`drop function customers_render_list_json();`);
    this.addSql(`drop function invoices_render_list_json();`);
    this.addSql(`alter table "customers" drop column "list_json";`);
    this.addSql(
      `alter table "invoices" drop column "list_json_head", drop column "list_json_due_date",
         drop column "list_json_tail";`,
    );
  }
}
