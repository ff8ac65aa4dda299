import { Migration } from '@mikro-orm/migrations';

/**
 * Money paths, round two (issue 20): the payment watcher leaves the service's own charges out of
 * what arrives in merchants' accounts by their signature, a lookup per page of transactions; a
 * settlement wallet belongs to one merchant (what arrives in it is that merchant's); the
 * watchers find a merchant's cursors by merchant; each charge run follows the failed tries whose
 * bytes may still land.
 */
export class Migration20261125230000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index "charge_attempts_signature_idx" on "charge_attempts" ("signature") where "signature" is not null;`,
    );
    this.addSql(
      `create index "charge_attempts_failed_bytes_idx" on "charge_attempts" ("updated_at") where "state" = 'failed' and "transaction" is not null;`,
    );
    // An install with two merchant accounts at one wallet stops here with what to do, rather
    // than with PostgreSQL's "could not create unique index".
    this.addSql(`do $$
      declare shared text;
      begin
        select wallet_address into shared from merchants group by wallet_address
          having count(*) > 1 limit 1;
        if shared is not null then
          raise exception 'Several merchant accounts receive at wallet %: one wallet belongs to one merchant account now (docs/api-decisions.md, Merchants). Give all but one of them another wallet (UPDATE merchants SET wallet_address = ...), then start again.', shared;
        end if;
      end $$;`);
    this.addSql(
      `alter table "merchants" add constraint "merchants_wallet_address_unique" unique ("wallet_address");`,
    );
    this.addSql(
      `create index "chain_cursors_merchant_kind_idx" on "chain_cursors" ("merchant_id", "kind");`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "chain_cursors_merchant_kind_idx";`);
    this.addSql(`alter table "merchants" drop constraint "merchants_wallet_address_unique";`);
    this.addSql(`drop index "charge_attempts_failed_bytes_idx";`);
    this.addSql(`drop index "charge_attempts_signature_idx";`);
  }
}
