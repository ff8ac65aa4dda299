import { Migration } from '@mikro-orm/migrations';

/** A token-delegate subscription that holds a share of its wallet's approval (docs/billing.md). */
export const LIVE = (row: string) =>
  `(${row}."scheme" = 'token-delegate' and ${row}."status" in ('Active', 'PastDue') and ${row}."revoked_at" is null)`;

/** What a live subscription still needs of the approval: its share less what it was charged. */
export const NEED = (row: string) =>
  `greatest(${row}."authorized_amount" - ${row}."charged_amount", 0)`;

/**
 * One more version of the approval of `wallet` in `mint`, its kept totals moved by `need` and
 * `live`: an update of the row there is, else an insert (which, should another transaction
 * insert it first, updates it).
 */
const move = (wallet: string, mint: string, need: string, live: string) =>
  `update "wallet_approval_versions" set "version" = "version" + 1, "need" = "need" + ${need}, "live" = "live" + ${live} ` +
  `where "wallet" = ${wallet} and "mint" = ${mint}; ` +
  `if not found then insert into "wallet_approval_versions" as v ("wallet", "mint", "version", "need", "live") ` +
  `values (${wallet}, ${mint}, 1, ${need}, ${live}) on conflict ("wallet", "mint") do update ` +
  `set "version" = v."version" + 1, "need" = v."need" + excluded."need", "live" = v."live" + excluded."live"; end if;`;

/** The version function of Migration20261205010000, which this one replaces (for `down`). */
const bump = (wallet: string, mint: string) =>
  `update "wallet_approval_versions" set "version" = "version" + 1 where "wallet" = ${wallet} and "mint" = ${mint}; ` +
  `if not found then insert into "wallet_approval_versions" as v ("wallet", "mint", "version") values (${wallet}, ${mint}, 1) ` +
  `on conflict ("wallet", "mint") do update set "version" = v."version" + 1; end if;`;

/**
 * Each wallet's approval row (`wallet_approval_versions`) keeps, beside its version, what the
 * wallet's live token-delegate subscriptions in the mint still need of the approval (`need`:
 * the sum of each one's `greatest(authorized_amount - charged_amount, 0)`) and how many they
 * are (`live`), moved by the same triggers in the same transaction as every change to them
 * (each applying its row's change: what the old row held is taken off its wallet, what the new
 * one holds added to its wallet; deferred to the commit like the version). So they hold
 * whatever writes the subscriptions: this build, the build before during a rolling upgrade, an
 * operator.
 *
 * A charge's claim judges the charge on them (`claimDueOneAtATime`): what the others need in
 * all is at least what those created before it need, so an approval that covers the charge
 * and all of them covers it with what is reserved for the earlier ones; only an approval that
 * falls short of that reads the earlier ones exactly (`walletReservation`). The claim read each
 * sibling's row for every charge (139 µs of its ~300 a charge in `npm run bench:engine`, where
 * each wallet has 20).
 *
 * The totals of the subscriptions there are now are written here, with writes of
 * `subscriptions` held off until this commits (a change committed between the sums and the new
 * function would be in neither). The share lock is taken before the new columns' exclusive lock
 * of the approval rows: a settlement, which writes subscriptions and then (at its commit) the
 * approval row, waits for the upgrade or goes before it. A transaction that read the approval
 * rows and then wrote subscriptions would deadlock with it; none does, and PostgreSQL would
 * abort one side whole, the upgrade then running again at the next start (nothing half-kept).
 */
export class Migration20261207010000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`lock table "subscriptions" in share mode;`);
    this.addSql(
      `alter table "wallet_approval_versions" add column "need" numeric(40,0) not null default 0, add column "live" int not null default 0;`,
    );
    this.addSql(
      `create or replace function "subscriptions_approval_moved"() returns trigger language plpgsql as $$ ` +
        `declare before_need numeric := 0; before_live int := 0; after_need numeric := 0; after_live int := 0; begin ` +
        `if tg_op <> 'INSERT' and ${LIVE('old')} then before_need := ${NEED('old')}; before_live := 1; end if; ` +
        `if tg_op <> 'DELETE' and ${LIVE('new')} then after_need := ${NEED('new')}; after_live := 1; end if; ` +
        `if tg_op <> 'DELETE' and new."scheme" = 'token-delegate' and tg_op <> 'INSERT' and old."scheme" = 'token-delegate' ` +
        `and old."wallet" = new."wallet" and old."mint" = new."mint" then ` +
        `${move('new."wallet"', 'new."mint"', 'after_need - before_need', 'after_live - before_live')} return null; end if; ` +
        `if tg_op <> 'INSERT' and old."scheme" = 'token-delegate' then ${move('old."wallet"', 'old."mint"', '-before_need', '-before_live')} end if; ` +
        `if tg_op <> 'DELETE' and new."scheme" = 'token-delegate' then ${move('new."wallet"', 'new."mint"', 'after_need', 'after_live')} end if; ` +
        `return null; end $$;`,
    );
    this.addSql(
      `insert into "wallet_approval_versions" as v ("wallet", "mint", "version", "need", "live") ` +
        `select s."wallet", s."mint", 1, sum(${NEED('s')}), count(*) from "subscriptions" s ` +
        `where ${LIVE('s')} group by s."wallet", s."mint" ` +
        `on conflict ("wallet", "mint") do update set "version" = v."version" + 1, "need" = excluded."need", "live" = excluded."live";`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(
      `create or replace function "subscriptions_approval_moved"() returns trigger language plpgsql as $$ begin ` +
        `if tg_op <> 'INSERT' and old."scheme" = 'token-delegate' then ${bump('old."wallet"', 'old."mint"')} end if; ` +
        `if tg_op <> 'DELETE' and new."scheme" = 'token-delegate' and (tg_op = 'INSERT' or old."scheme" <> 'token-delegate' ` +
        `or old."wallet" <> new."wallet" or old."mint" <> new."mint") then ${bump('new."wallet"', 'new."mint"')} end if; ` +
        `return null; end $$;`,
    );
    this.addSql(`alter table "wallet_approval_versions" drop column "need", drop column "live";`);
  }
}
