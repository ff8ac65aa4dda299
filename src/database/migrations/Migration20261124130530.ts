import { Migration } from '@mikro-orm/migrations';

/**
 * The e-mail outbox (`src/email/`): one row per message, written in the caller's transaction and
 * sent by the delivery worker. `invoice_id` has no foreign key on purpose (a loose reference; the
 * invoices table belongs to another module); `merchant_id` cascades like every merchant's data.
 */
export class Migration20261124130530 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "email_outbox" ("id" uuid not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, "merchant_id" uuid not null, "invoice_id" uuid null, "recipient" varchar(320) not null, "subject" varchar(998) not null, "text_body" text not null, "html_body" text not null, "status" text check ("status" in ('pending', 'sent', 'failed', 'not_sent')) not null, "attempts" int not null default 0, "next_attempt_at" timestamptz(3) null, "leased_until" timestamptz(3) null, "lock_token" uuid null, "last_error" varchar(500) null, "sent_at" timestamptz(3) null, constraint "email_outbox_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index "email_outbox_invoice_idx" on "email_outbox" ("merchant_id", "invoice_id", "created_at");`,
    );
    this.addSql(
      `create index "email_outbox_due_idx" on "email_outbox" ("next_attempt_at") where "status" = 'pending';`,
    );

    this.addSql(
      `alter table "email_outbox" add constraint "email_outbox_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "email_outbox" cascade;`);
  }
}
