import { Migration } from '@mikro-orm/migrations';

/** An attempt whose try may land at any moment (as Migration20261205010000). */
const IN_FLIGHT = (row: 'old' | 'new') =>
  `(${row}."state" = 'sent' or (${row}."state" = 'pending' and ${row}."signature" is not null))`;

/** The bumps run at the commit of their change (as Migration20261205010000). */
const AT_COMMIT = 'deferrable initially deferred';

/**
 * One more version of the approval of `wallet` in `mint` (the first is 1), its totals as they
 * are: an attempt's charge going in flight or out of it changes no subscription.
 */
const bump = (wallet: string, mint: string) =>
  `update "wallet_approval_versions" set "version" = "version" + 1 where "wallet" = ${wallet} and "mint" = ${mint}; ` +
  `if not found then insert into "wallet_approval_versions" as v ("wallet", "mint", "version") values (${wallet}, ${mint}, 1) ` +
  `on conflict ("wallet", "mint") do update set "version" = v."version" + 1; end if;`;

/**
 * An attempt's charge going in flight or out of it moves the version of the wallet whose turn
 * it holds (`charge_attempts.wallet`, with its own `mint`): the very wallet and mint under which
 * the reservation finds it (`ia.wallet = $wallet AND ia.mint = $mint`). An attempt in flight
 * always holds its wallet's turn (`charge_attempts_turn_held`, Migration20261206010000), and
 * one that ends loses it in the same write: then the old row's is the one. Only an attempt
 * with no turn on either side (under the Subscriptions program, or written before the turn)
 * looks up its subscription's wallet, as the trigger did for every attempt: one read of
 * `subscriptions` by its key at each charge's recording and at its settlement (~10 µs of
 * PostgreSQL a charge in `npm run bench:engine`). A try in flight whose turn moves to another
 * wallet, or to none, moves both (it fired on the state and the amount only before).
 */
export class Migration20261207020000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create or replace function "charge_attempts_approval_moved"() returns trigger language plpgsql as $$ ` +
        `declare w text; m text; ow text; om text; begin ` +
        `if tg_op <> 'DELETE' and new."wallet" is not null then w := new."wallet"; m := new."mint"; end if; ` +
        `if tg_op <> 'INSERT' and old."wallet" is not null then ow := old."wallet"; om := old."mint"; end if; ` +
        `if w is null and ow is null then select s."wallet", s."mint" into w, m from "subscriptions" s ` +
        `where s."id" = case when tg_op = 'DELETE' then old."subscription_id" else new."subscription_id" end and s."scheme" = 'token-delegate'; ` +
        `end if; ` +
        `if w is not null then ${bump('w', 'm')} end if; ` +
        `if ow is not null and (w is null or ow <> w or om <> m) then ${bump('ow', 'om')} end if; ` +
        `return null; end $$;`,
    );
    // A try in flight whose turn moves (`resumeStale` writes the wallet again: none once its
    // subscription left the token-delegate scheme) leaves one wallet's reservation and joins
    // another's: both move.
    this.addSql(`drop trigger "charge_attempts_approval_updated" on "charge_attempts";`);
    this.addSql(
      `create constraint trigger "charge_attempts_approval_updated" after update on "charge_attempts" ${AT_COMMIT} for each row ` +
        `when (${IN_FLIGHT('old')} is distinct from ${IN_FLIGHT('new')} ` +
        `or (${IN_FLIGHT('new')} and old."amount" <> new."amount") ` +
        `or ((${IN_FLIGHT('old')} or ${IN_FLIGHT('new')}) and (old."wallet", old."mint") is distinct from (new."wallet", new."mint"))) ` +
        `execute function "charge_attempts_approval_moved"();`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger "charge_attempts_approval_updated" on "charge_attempts";`);
    this.addSql(
      `create constraint trigger "charge_attempts_approval_updated" after update on "charge_attempts" ${AT_COMMIT} for each row ` +
        `when (${IN_FLIGHT('old')} is distinct from ${IN_FLIGHT('new')} ` +
        `or (${IN_FLIGHT('new')} and old."amount" <> new."amount")) ` +
        `execute function "charge_attempts_approval_moved"();`,
    );
    this.addSql(
      `create or replace function "charge_attempts_approval_moved"() returns trigger language plpgsql as $$ ` +
        `declare w text; m text; begin ` +
        `select s."wallet", s."mint" into w, m from "subscriptions" s ` +
        `where s."id" = case when tg_op = 'DELETE' then old."subscription_id" else new."subscription_id" end and s."scheme" = 'token-delegate'; ` +
        `if found then ${bump('w', 'm')} end if; ` +
        `return null; end $$;`,
    );
  }
}
