import { Migration } from '@mikro-orm/migrations';

/** An attempt whose try may land at any moment: the reservation nets its charge out. */
const IN_FLIGHT = (row: 'old' | 'new') =>
  `(${row}."state" = 'sent' or (${row}."state" = 'pending' and ${row}."signature" is not null))`;

/**
 * The bumps run when the change's transaction commits, after every lock it takes otherwise: a
 * settlement updates the attempts, then locks their subscriptions, while a cancel, pause,
 * revocation or re-authorisation locks its subscription first; bumping at each statement, the
 * two could each hold what the other waits for (the wallet's row, the subscription's).
 */
const AT_COMMIT = 'deferrable initially deferred';

/** What a wallet's reservation reads of a token-delegate subscription (docs/billing.md). */
const READ = [
  'status',
  'revoked_at',
  'authorized_amount',
  'charged_amount',
  'periods_charged',
  'scheme',
  'wallet',
  'mint',
  'created_at',
];
const read = (row: 'old' | 'new') => READ.map((column) => `${row}."${column}"`).join(', ');

/**
 * One more version of the approval of `wallet` in `mint` (the first is 1): an update of the row
 * there is, else an insert (which, should another transaction insert it first, updates it).
 */
const bump = (wallet: string, mint: string) =>
  `update "wallet_approval_versions" set "version" = "version" + 1 where "wallet" = ${wallet} and "mint" = ${mint}; ` +
  `if not found then insert into "wallet_approval_versions" as v ("wallet", "mint", "version") values (${wallet}, ${mint}, 1) ` +
  `on conflict ("wallet", "mint") do update set "version" = v."version" + 1; end if;`;

/**
 * A version per wallet and mint of what a token-delegate charge's reservation reads
 * (`wallet_approval_versions`): one more whenever any of it changes, in the same transaction
 * as the change, written by triggers, so no statement (nor an instance of the build before)
 * can change it unseen:
 * - a token-delegate subscription inserted or deleted, or updated in anything the reservation
 *   reads (its status, revocation, authorised and charged amounts, periods charged, scheme;
 *   under both wallets should its wallet change);
 * - an attempt's charge going in flight or out of it (sent, or re-armed with its bytes kept),
 *   or its amount changing while in flight: looked up by its subscription's wallet and mint.
 * The triggers are deferred to the commit (`AT_COMMIT`): the version moves with the commit of
 * the change, never before another lock the transaction takes.
 *
 * A charge is recorded only while the version it was judged under is still the wallet's
 * (`recordTries`): one row read by its key, where the recording read the wallet's
 * subscriptions and each one's open attempt again to compare a fingerprint of them (about
 * four fifths of the recording's time in `npm run bench:engine`, where each wallet has 20).
 * A wallet with no row has version 0: the table starts empty.
 */
export class Migration20261205010000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "wallet_approval_versions" ("wallet" varchar(44) not null, "mint" varchar(8) not null, "version" bigint not null default 0, constraint "wallet_approval_versions_pkey" primary key ("wallet", "mint"));`,
    );
    // Each charge updates its wallet's row two or three times: room on every page for the new
    // versions (a HOT update, pruned as pages are read), or each probe by the key walks the
    // dead ones (13 buffers a probe in `bench:engine` with pages packed full).
    this.addSql(`alter table "wallet_approval_versions" set (fillfactor = 20);`);
    this.addSql(
      `create function "subscriptions_approval_moved"() returns trigger language plpgsql as $$ begin ` +
        `if tg_op <> 'INSERT' and old."scheme" = 'token-delegate' then ${bump('old."wallet"', 'old."mint"')} end if; ` +
        `if tg_op <> 'DELETE' and new."scheme" = 'token-delegate' and (tg_op = 'INSERT' or old."scheme" <> 'token-delegate' ` +
        `or old."wallet" <> new."wallet" or old."mint" <> new."mint") then ${bump('new."wallet"', 'new."mint"')} end if; ` +
        `return null; end $$;`,
    );
    this.addSql(
      `create constraint trigger "subscriptions_approval_inserted" after insert on "subscriptions" ${AT_COMMIT} for each row ` +
        `when (new."scheme" = 'token-delegate') execute function "subscriptions_approval_moved"();`,
    );
    this.addSql(
      `create constraint trigger "subscriptions_approval_deleted" after delete on "subscriptions" ${AT_COMMIT} for each row ` +
        `when (old."scheme" = 'token-delegate') execute function "subscriptions_approval_moved"();`,
    );
    this.addSql(
      `create constraint trigger "subscriptions_approval_updated" after update on "subscriptions" ${AT_COMMIT} for each row ` +
        `when ((old."scheme" = 'token-delegate' or new."scheme" = 'token-delegate') ` +
        `and (${read('old')}) is distinct from (${read('new')})) ` +
        `execute function "subscriptions_approval_moved"();`,
    );
    this.addSql(
      `create function "charge_attempts_approval_moved"() returns trigger language plpgsql as $$ ` +
        `declare w text; m text; begin ` +
        `select s."wallet", s."mint" into w, m from "subscriptions" s ` +
        `where s."id" = case when tg_op = 'DELETE' then old."subscription_id" else new."subscription_id" end and s."scheme" = 'token-delegate'; ` +
        `if found then ${bump('w', 'm')} end if; ` +
        `return null; end $$;`,
    );
    this.addSql(
      `create constraint trigger "charge_attempts_approval_inserted" after insert on "charge_attempts" ${AT_COMMIT} for each row ` +
        `when ${IN_FLIGHT('new')} execute function "charge_attempts_approval_moved"();`,
    );
    this.addSql(
      `create constraint trigger "charge_attempts_approval_deleted" after delete on "charge_attempts" ${AT_COMMIT} for each row ` +
        `when ${IN_FLIGHT('old')} execute function "charge_attempts_approval_moved"();`,
    );
    this.addSql(
      `create constraint trigger "charge_attempts_approval_updated" after update on "charge_attempts" ${AT_COMMIT} for each row ` +
        `when (${IN_FLIGHT('old')} is distinct from ${IN_FLIGHT('new')} ` +
        `or (${IN_FLIGHT('new')} and old."amount" <> new."amount")) ` +
        `execute function "charge_attempts_approval_moved"();`,
    );
  }

  override async down(): Promise<void> {
    for (const [trigger, table] of [
      ['subscriptions_approval_inserted', 'subscriptions'],
      ['subscriptions_approval_deleted', 'subscriptions'],
      ['subscriptions_approval_updated', 'subscriptions'],
      ['charge_attempts_approval_inserted', 'charge_attempts'],
      ['charge_attempts_approval_deleted', 'charge_attempts'],
      ['charge_attempts_approval_updated', 'charge_attempts'],
    ]) {
      this.addSql(`drop trigger "${trigger}" on "${table}";`);
    }
    this.addSql(`drop function "subscriptions_approval_moved"();`);
    this.addSql(`drop function "charge_attempts_approval_moved"();`);
    this.addSql(`drop table "wallet_approval_versions";`);
  }
}
