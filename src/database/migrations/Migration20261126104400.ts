import { Migration } from '@mikro-orm/migrations';

/** Migration20261124170000's ISO 8601 text (its `down` restores that migration's functions). */
const iso = (column: string) =>
  `'"' || to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"'`;

/**
 * The list triggers (`invoices_render_list_json`, `customers_render_list_json`) as generated from
 * the response shapes they render (`INVOICE_LIST_JSON` in src/invoices/invoice.mapper.ts,
 * `CUSTOMER_JSON` in src/customers/customer.mapper.ts, by `triggerFunctionSql` of
 * src/common/json-shape.ts): the mapper, the list's serializer and these function bodies are one
 * definition (issue 22). Written here as generated on this migration's day (a migration is
 * frozen text); `test/list-json-triggers.e2e-spec.ts` fails when a shape generates another body
 * than the migrated one, so a changed shape needs a migration like this one. Each run of keys
 * now carries its keys (`list_json_due_date` is `"dueDate":…`, not the value alone) and the
 * timestamps are `api_time`'s; the rows are rendered again by the new functions.
 */
export class Migration20261126104400 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create or replace function invoices_render_list_json() returns trigger language plpgsql as $$
begin
  new.list_json_head :=
    '{"id":"' || new.id || '"' ||
    ',"number":"' || invoice_number(new.number) || '"' ||
    ',"status":"' || new.status || '"' ||
    ',"onchainId":"' || new.onchain_id || '"' ||
    ',"memo":' || coalesce(to_json(new.memo)::text, 'null') ||
    ',"mint":"' || new.mint || '"';
  new.list_json_due_date :=
    '"dueDate":' || coalesce('"' || api_time(new.due_date) || '"', 'null');
  new.list_json_tail :=
    '"customerId":"' || new.customer_id || '"' ||
    ',"paidAt":' || coalesce('"' || api_time(new.paid_at) || '"', 'null') ||
    ',"paymentSignature":' || coalesce('"' || new.payment_signature || '"', 'null') ||
    ',"createdAt":"' || api_time(new.created_at) || '"' ||
    ',"updatedAt":"' || api_time(new.updated_at) || '"';
  return new;
end
$$;`,
    );
    this.addSql(
      `create or replace function customers_render_list_json() returns trigger language plpgsql as $$
begin
  new.list_json :=
    '{"id":"' || new.id || '"' ||
    ',"merchantId":"' || new.merchant_id || '"' ||
    ',"walletAddress":"' || new.wallet_address || '"' ||
    ',"email":' || coalesce(to_json(new.email)::text, 'null') ||
    ',"label":' || coalesce(to_json(new.label)::text, 'null') ||
    ',"createdAt":"' || api_time(new.created_at) || '"' ||
    ',"updatedAt":"' || api_time(new.updated_at) || '"}';
  return new;
end
$$;`,
    );
    this.addSql(`update "invoices" set "list_json_head" = null;`);
    this.addSql(`update "customers" set "list_json" = null;`);
  }

  override async down(): Promise<void> {
    this.addSql(
      `create or replace function invoices_render_list_json() returns trigger language plpgsql as $$
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
      `create or replace function customers_render_list_json() returns trigger language plpgsql as $$
       begin
         new.list_json := '{"id":"' || new.id || '","merchantId":"' || new.merchant_id ||
           '","walletAddress":"' || new.wallet_address || '","email":' ||
           coalesce(to_json(new.email)::text, 'null') || ',"label":' ||
           coalesce(to_json(new.label)::text, 'null') || ',"createdAt":' ||
           ${iso('new.created_at')} || ',"updatedAt":' || ${iso('new.updated_at')} || '}';
         return new;
       end $$;`,
    );
    this.addSql(`update "invoices" set "list_json_head" = null;`);
    this.addSql(`update "customers" set "list_json" = null;`);
  }
}
