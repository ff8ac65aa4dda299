import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Clock } from '../common/clock';
import { AppConfig } from '../config/app-config';
import { pgQuery } from '../database/pg-transaction';
import { ChainPort } from '../solana/chain.port';
import { attemptSelect, AttemptRow } from './charge-settlement';

/**
 * How charge attempts are taken up: due periods claimed (an attempt row per subscription and
 * period, written before anything is signed), and attempts whose holder's lease ended resumed.
 * Each is one statement with `FOR UPDATE SKIP LOCKED`, so any number of instances share the
 * work and never hold one attempt together.
 */
@Injectable()
export class ChargeClaims {
  /** Who holds the leases this instance takes (`lease_owner`): host, process and instance. */
  readonly instance = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

  constructor(
    private readonly em: EntityManager,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly chain: ChainPort,
  ) {}

  /**
   * Claims due Active subscriptions and writes (or re-arms) their period's attempt, leased to
   * this instance, in one statement. A subscription whose attempt for this period is still open
   * (another instance holds it, or it waits on an outcome) is not claimed; that open attempt can
   * only be the next period's, so it is looked up by its (subscription, period) key (see
   * `reservedAllowance` for why not by state).
   *
   * Token-delegate scheme: a wallet's charges in one mint are judged on its one approval, one at
   * a time (`walletReservation`), so a claim takes at most one of them, and none of a wallet and
   * mint this instance has a charge in hand for (`busy`, `wallet:mint`), rather than siblings
   * that could only wait for it, each holding a lane. Both are cheap: a look-up of the wallet's
   * other attempts on every candidate cost 130 index scans a charge. A sibling in another
   * instance's hands is waited for by `walletReservation`. (`subscriptionId`: a customer's first
   * charge is claimed as it is.)
   */
  async claimDue(
    limit: number,
    subscriptionId?: string,
    busy: string[] = [],
  ): Promise<AttemptRow[]> {
    const now = this.clock.now();
    const oneAtATime = this.chain.scheme === 'token-delegate' && !subscriptionId;
    return pgQuery<AttemptRow[]>(
      this.em,
      `WITH candidates AS (
         SELECT s.id, s.merchant_id, s.periods_charged + 1 AS period, p.amount, p.mint,
                s.current_period_end, c.wallet_address AS wallet
           FROM subscriptions s JOIN plans p ON p.id = s.plan_id
           JOIN customers c ON c.id = s.customer_id
          WHERE s.status = 'Active' AND s.current_period_end <= ?
            ${subscriptionId ? 'AND s.id = ?' : ''}
            AND NOT EXISTS (
              SELECT 1 FROM charge_attempts o
               WHERE o.subscription_id = s.id AND o.period = s.periods_charged + 1
                 AND o.state IN ('pending', 'sent'))
            ${oneAtATime ? `AND NOT (c.wallet_address || ':' || p.mint = ANY(?::text[]))` : ''}
          ORDER BY s.current_period_end
          LIMIT ?
          FOR UPDATE OF s SKIP LOCKED
       ), due AS (
         ${
           oneAtATime
             ? `SELECT * FROM (SELECT DISTINCT ON (wallet, mint) * FROM candidates
                  ORDER BY wallet, mint, current_period_end, id) one
                 ORDER BY current_period_end LIMIT ?`
             : 'SELECT * FROM candidates'
         }
       ), claimed AS (
       INSERT INTO charge_attempts AS a (id, created_at, updated_at, merchant_id, subscription_id,
         period, amount, mint, state, tries, lease_until, lease_owner)
       SELECT gen_random_uuid(), ?, ?, due.merchant_id, due.id, due.period, due.amount, due.mint,
              'pending', 1, now() + make_interval(secs => ?), ?
         FROM due
       ON CONFLICT (subscription_id, period) DO UPDATE
          SET state = 'pending', tries = a.tries + 1, lease_until = EXCLUDED.lease_until,
              lease_owner = EXCLUDED.lease_owner,
              amount = CASE WHEN a.signature IS NULL THEN EXCLUDED.amount ELSE a.amount END,
              failure_reason = NULL, updated_at = EXCLUDED.updated_at
        WHERE a.state IN ('failed', 'abandoned')
       RETURNING a.*
       )
       ${attemptSelect('claimed')}`,
      [
        now,
        ...(subscriptionId ? [subscriptionId] : []),
        ...(oneAtATime ? [busy] : []),
        // Siblings of one wallet among the candidates are left for later: look further ahead.
        // (A re-armed try whose bytes are kept keeps its amount: it is settled first, for what
        // those bytes pull.)
        oneAtATime ? limit * 4 : limit,
        ...(oneAtATime ? [limit] : []),
        now,
        now,
        this.config.CHARGE_LEASE_SECONDS,
        this.instance,
      ],
    );
  }

  /**
   * Takes up attempts whose holder's lease ended (it crashed, or stalled past its lease: it no
   * longer renews it). `takeovers` counts them, `lease_owner` says who holds each now.
   * @param inHand attempts this instance is working on (left alone even if their lease ended).
   */
  resumeStale(limit: number, inHand: string[] = []): Promise<AttemptRow[]> {
    return pgQuery<AttemptRow[]>(
      this.em,
      `WITH resumed AS (
         UPDATE charge_attempts SET lease_until = now() + make_interval(secs => ?),
                lease_owner = ?, takeovers = takeovers + 1
          WHERE id IN (
            SELECT id FROM charge_attempts
             WHERE state IN ('pending', 'sent') AND lease_until < now()
               AND NOT (id = ANY(?::uuid[]))
             ORDER BY lease_until
             LIMIT ?
             FOR UPDATE SKIP LOCKED)
         RETURNING *
       )
       ${attemptSelect('resumed')}`,
      [this.config.CHARGE_LEASE_SECONDS, this.instance, inHand, limit],
    );
  }
}
