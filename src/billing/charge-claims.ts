import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Clock } from '../common/clock';
import { AppConfig } from '../config/app-config';
import { ChainPort, type ChargeInput } from '../solana/chain.port';
import {
  AttemptRow,
  ChargeAttemptsRepository,
  DueWalk,
} from './repositories/charge-attempts.repository';

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
    private readonly attempts: ChargeAttemptsRepository,
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
   * other attempts on every candidate cost 130 index scans a charge. Nor does it take a sibling
   * of a charge open in another instance: each attempt records its wallet while it holds the
   * wallet's turn (claimed, resumed, or with a try that may land; not put off with nothing
   * sent), one probe a candidate. One claimed by two instances at the same moment is waited for
   * by `walletReservation`, as before. (`subscriptionId`: a customer's first
   * charge is claimed as it is.) `walk`: where a run's claims have got to (`DueWalk`); each
   * claim walks on from there rather than from the front.
   */
  async claimDue(
    limit: number,
    subscriptionId?: string,
    busy: string[] = [],
    walk?: DueWalk,
  ): Promise<AttemptRow[]> {
    const now = this.clock.now();
    // Token-delegate subscriptions (any deployment may hold them: a subscription keeps its
    // scheme) are claimed one per wallet and mint; a customer's first charge as it is.
    const oneAtATime = !subscriptionId;
    return this.attempts.claimDue({
      now,
      limit,
      subscriptionId,
      oneAtATime,
      busy,
      leaseSeconds: this.config.CHARGE_LEASE_SECONDS,
      owner: this.instance,
      walk,
    });
  }

  /** Where a run's claims start: the front of what is due (`DueWalk`). */
  walk(): DueWalk {
    return new DueWalk();
  }

  /**
   * Takes up attempts whose holder's lease ended (it crashed, or stalled past its lease: it no
   * longer renews it). `takeovers` counts them, `lease_owner` says who holds each now.
   * @param inHand attempts this instance is working on (left alone even if their lease ended).
   */
  resumeStale(limit: number, inHand: string[] = []): Promise<AttemptRow[]> {
    return this.attempts.resumeStale(
      limit,
      inHand,
      this.config.CHARGE_LEASE_SECONDS,
      this.instance,
    );
  }
}

/** What the chain needs to build an attempt's charge, under its subscription's scheme. */
export function chargeInputOf(row: AttemptRow): ChargeInput {
  return {
    chargeId: row.id,
    scheme: row.s_scheme,
    subscriber: row.subscriber,
    merchantWallet: row.merchant_wallet,
    planId: row.s_plan_id,
    mint: row.mint,
    amount: BigInt(row.amount),
  };
}
