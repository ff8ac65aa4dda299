import { Migration } from '@mikro-orm/migrations';

/**
 * Credit notes and customer credit balances (docs/refunds.md): `credit_notes` numbered per
 * merchant without gaps, `customer_credits` the entries of each customer's balance per mint, and
 * `invoices.amount_credited`, what credit notes and balances took off what an invoice asks for,
 * and `invoices.amount_credited_to_balance`, what credit notes turned of its payments into the
 * customer's balance.
 */
export class Migration20261129020000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "customer_credits" ("id" uuid not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "merchant_id" uuid not null, "customer_id" uuid not null, "mint" varchar(8) not null, "amount" bigint not null, "credit_note_id" uuid null, "invoice_id" uuid null, constraint "customer_credits_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "customer_credits_customer_idx" on "customer_credits" ("customer_id", "mint");`,
    );
    this.addSql(
      `create table "credit_notes" ("id" uuid not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "merchant_id" uuid not null, "invoice_id" uuid not null, "customer_id" uuid not null, "number" int not null, "mint" varchar(8) not null, "lines" jsonb not null, "subtotal" bigint not null, "tax" bigint not null, "amount" bigint not null, "reason" text check ("reason" in ('duplicate', 'fraudulent', 'order_change', 'product_unsatisfactory', 'other')) not null, "memo" varchar(500) null, "action" text check ("action" in ('reduce_due', 'refund', 'credit')) not null, "refund_id" uuid null, constraint "credit_notes_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "credit_notes_invoice_idx" on "credit_notes" ("invoice_id");`);
    this.addSql(
      `create index "credit_notes_merchant_created_idx" on "credit_notes" ("merchant_id", "created_at", "id");`,
    );
    this.addSql(
      `alter table "credit_notes" add constraint "credit_notes_merchant_number_unique" unique ("merchant_id", "number");`,
    );
    this.addSql(
      `alter table "customer_credits" add constraint "customer_credits_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "credit_notes" add constraint "credit_notes_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "invoices" add column "amount_credited" bigint not null default 0, add column "amount_credited_to_balance" bigint not null default 0;`,
    );
    // What refunds hold of each ledger line, kept with the line (its row lock decides them).
    this.addSql(`alter table "payments" add column "refund_held" bigint not null default 0;`);
    this.addSql(
      `update "payments" p set "refund_held" = r."held" from (select "payment_id", sum("amount") as "held" from "refunds" where "status" in ('Pending', 'Succeeded') group by "payment_id") r where r."payment_id" = p."id";`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "payments" drop column "refund_held";`);
    this.addSql(
      `alter table "invoices" drop column "amount_credited", drop column "amount_credited_to_balance";`,
    );
    this.addSql(`drop table "credit_notes";`);
    this.addSql(`drop table "customer_credits";`);
  }
}
