import { Migration } from '@mikro-orm/migrations';

/**
 * An attempt's `wallet` is its wallet's turn (docs/billing.md): written when a token-delegate
 * charge is claimed or resumed, cleared when it is put off with nothing sent, and now cleared
 * too when the attempt ends (succeeded, failed, abandoned), by a trigger, so that no statement
 * (nor an instance of the build before, during a rolling upgrade) can leave it behind. A row
 * with a wallet is then an attempt holding its wallet's turn, and nothing else (a check holds
 * it).
 *
 * That lets the claim's turn probe name the wallet alone, which only the turn index can serve.
 * With the open states in the probe, its condition also implied the predicate of the partial
 * index of open attempts (`charge_attempts_open_idx`), and a planner whose statistics saw few
 * attempts open took that one: every attempt under way read again for each candidate and its
 * wallet matched after (1 536 rows, a third of a claim of 8 in `npm run bench:engine`). The
 * turn index now holds the rows with a wallet (`where wallet is not null`): the same rows.
 *
 * The upgrade clears the ended attempts' wallets (one pass over the table, which it holds
 * exclusively meanwhile, as it does to check the constraint) and builds the index again.
 */
export class Migration20261204010000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create function "charge_attempts_turn_ends"() returns trigger language plpgsql as $$ begin ` +
        `new."wallet" := null; return new; end $$;`,
    );
    this.addSql(
      `create trigger "charge_attempts_turn_ends" before insert or update on "charge_attempts" for each row ` +
        `when (new."wallet" is not null and new."state" not in ('pending', 'sent')) execute function "charge_attempts_turn_ends"();`,
    );
    this.addSql(
      `update "charge_attempts" set "wallet" = null where "wallet" is not null and "state" not in ('pending', 'sent');`,
    );
    this.addSql(
      `alter table "charge_attempts" add constraint "charge_attempts_turn_open" check ("wallet" is null or "state" in ('pending', 'sent'));`,
    );
    this.addSql(`drop index "charge_attempts_open_wallet_idx";`);
    this.addSql(
      `create index "charge_attempts_open_wallet_idx" on "charge_attempts" ("wallet", "mint") where "wallet" is not null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "charge_attempts_open_wallet_idx";`);
    this.addSql(
      `create index "charge_attempts_open_wallet_idx" on "charge_attempts" ("wallet", "mint") where "state" in ('pending', 'sent') and "wallet" is not null;`,
    );
    this.addSql(`alter table "charge_attempts" drop constraint "charge_attempts_turn_open";`);
    this.addSql(`drop trigger "charge_attempts_turn_ends" on "charge_attempts";`);
    this.addSql(`drop function "charge_attempts_turn_ends"();`);
  }
}
