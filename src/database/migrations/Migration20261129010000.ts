import { Migration } from '@mikro-orm/migrations';

/**
 * Refunds (docs/refunds.md): money a merchant gives back of a ledger line, sent from its own
 * wallet and found on-chain by its reference. A Succeeded refund is a negative ledger line
 * (`payments.kind = 'refund'`), one per transfer instruction, and adds to its invoice's
 * `amount_refunded`.
 */
export class Migration20261129010000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "refunds" ("id" uuid not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "merchant_id" uuid not null, "payment_id" uuid not null, "invoice_id" uuid null, "subscription_id" uuid null, "customer_id" uuid null, "status" text check ("status" in ('Pending', 'Succeeded', 'Expired')) not null, "mint" varchar(8) not null, "amount" bigint not null, "reason" varchar(500) null, "reference" varchar(44) not null, "recipient" varchar(44) not null, "destination" varchar(44) not null, "last_valid_block_height" bigint not null, "signature" varchar(88) null, "slot" bigint null, "fee" bigint not null default 0, "ledger_payment_id" uuid null, "succeeded_at" timestamptz(3) null, "expired_at" timestamptz(3) null, constraint "refunds_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "refunds_pending_idx" on "refunds" ("last_valid_block_height") where "status" = 'Pending';`,
    );
    this.addSql(`create index "refunds_payment_idx" on "refunds" ("payment_id");`);
    this.addSql(
      `create index "refunds_merchant_created_idx" on "refunds" ("merchant_id", "created_at", "id");`,
    );
    this.addSql(
      `alter table "refunds" add constraint "refunds_reference_unique" unique ("reference");`,
    );
    this.addSql(
      `alter table "refunds" add constraint "refunds_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(`alter table "invoices" add column "amount_refunded" bigint not null default 0;`);
    this.addSql(`alter table "payments" drop constraint if exists "payments_kind_check";`);
    this.addSql(
      `alter table "payments" add constraint "payments_kind_check" check("kind" in ('invoice', 'subscription', 'unattributed', 'refund'));`,
    );
    this.addSql(
      `create unique index "payments_refund_signature_unique" on "payments" ("signature", "instruction") where "kind" = 'refund';`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "payments_refund_signature_unique";`);
    this.addSql(`delete from "payments" where "kind" = 'refund';`);
    this.addSql(`alter table "payments" drop constraint if exists "payments_kind_check";`);
    this.addSql(
      `alter table "payments" add constraint "payments_kind_check" check("kind" in ('invoice', 'subscription', 'unattributed'));`,
    );
    this.addSql(`alter table "invoices" drop column "amount_refunded";`);
    this.addSql(`drop table "refunds";`);
  }
}
