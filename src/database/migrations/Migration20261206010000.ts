import { Migration } from '@mikro-orm/migrations';

/**
 * Every token-delegate try that may land holds its wallet's turn (`charge_attempts.wallet`):
 * the wallet's reservation now finds the charges in flight by it, one probe of the turn index
 * (`walletReservation`, docs/billing.md), where it looked up each sibling's attempt by its
 * (subscription, period) key. The claim and a resume write the wallet, and a put-off with
 * nothing sent clears it; this trigger makes sure of the rest, whatever writes the attempt (a
 * statement of this build, of the build before during a rolling upgrade, or an operator's): an
 * open attempt given a signature without a wallet takes its subscription's, under the
 * token-delegate scheme (in flight as the reservation counts it: sent, or pending with a
 * signature). It fires on writes of the signature, the state or the wallet only, so
 * a lease renewal or a network fee added reads nothing. The attempts already in flight without
 * one get theirs here.
 */
export class Migration20261206010000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create function "charge_attempts_turn_held"() returns trigger language plpgsql as $$ begin ` +
        `select s."wallet" into new."wallet" from "subscriptions" s ` +
        `where s."id" = new."subscription_id" and s."scheme" = 'token-delegate'; return new; end $$;`,
    );
    this.addSql(
      `create trigger "charge_attempts_turn_held" before insert or update of "signature", "state", "wallet" on "charge_attempts" for each row ` +
        `when (new."wallet" is null and (new."state" = 'sent' or (new."state" = 'pending' and new."signature" is not null))) execute function "charge_attempts_turn_held"();`,
    );
    this.addSql(
      `update "charge_attempts" a set "wallet" = s."wallet" from "subscriptions" s where s."id" = a."subscription_id" and s."scheme" = 'token-delegate' and a."wallet" is null and (a."state" = 'sent' or (a."state" = 'pending' and a."signature" is not null));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger "charge_attempts_turn_held" on "charge_attempts";`);
    this.addSql(`drop function "charge_attempts_turn_held"();`);
  }
}
