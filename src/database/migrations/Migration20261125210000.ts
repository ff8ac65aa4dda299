import { Migration } from '@mikro-orm/migrations';

/**
 * Money paths, round two (issue 20): payments attributed per transfer instruction, net of the
 * chain's fee; money that pays no invoice recorded once as `unattributed`; merchant-account scans
 * in bounded, resumable windows that start where the merchant's first invoice does.
 *
 * Existing invoice lines keep a null `destination` and `instruction` (they were recorded per
 * transaction); the new unique key holds for every line written from now on.
 */
export class Migration20261125210000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "payments" drop constraint if exists "payments_kind_check";`);
    this.addSql(`alter table "invoices" add column "chain_slot" bigint null;`);
    this.addSql(
      `alter table "chain_cursors" add column "window_top" varchar(88) null, add column "window_before" varchar(88) null, add column "start_slot" bigint null, add column "lease_until" timestamptz(3) null;`,
    );
    this.addSql(`drop index "payments_invoice_signature_unique";`);
    this.addSql(
      `alter table "payments" add column "fee" bigint not null default 0, add column "destination" varchar(44) null, add column "instruction" int null, add column "references" text[] null;`,
    );
    this.addSql(
      `alter table "payments" add constraint "payments_kind_check" check("kind" in ('invoice', 'subscription', 'unattributed'));`,
    );
    this.addSql(
      `create index "payments_unattributed_idx" on "payments" ("merchant_id", "created_at") where "kind" = 'unattributed';`,
    );
    this.addSql(
      `create unique index "payments_receipt_unique" on "payments" ("signature", "destination", coalesce("instruction", -1)) where "kind" in ('invoice', 'unattributed');`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "payments_receipt_unique";`);
    this.addSql(`drop index "payments_unattributed_idx";`);
    this.addSql(`delete from "payments" where "kind" = 'unattributed';`);
    this.addSql(`alter table "payments" drop constraint if exists "payments_kind_check";`);
    this.addSql(
      `alter table "payments" add constraint "payments_kind_check" check("kind" in ('invoice', 'subscription'));`,
    );
    this.addSql(
      `alter table "payments" drop column "fee", drop column "destination", drop column "instruction", drop column "references";`,
    );
    this.addSql(
      `create unique index "payments_invoice_signature_unique" on "payments" ("signature", "invoice_id") where "kind" = 'invoice';`,
    );
    this.addSql(
      `alter table "chain_cursors" drop column "window_top", drop column "window_before", drop column "start_slot", drop column "lease_until";`,
    );
    this.addSql(`alter table "invoices" drop column "chain_slot";`);
  }
}
