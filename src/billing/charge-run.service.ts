import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { AppConfig } from '../config/app-config';
import { Metrics } from '../metrics/metrics';
import { ChainPort, ChargeFailedError, ChargeInput, TxOutcome } from '../solana/chain.port';
import { ISSUER_SIDE_FAILURES } from '../solana/issuer-side';
import {
  addResults,
  ChargeRunResult,
  ChargeSettlement,
  ChargeTry,
  emptyResult,
  retried,
} from './charge-settlement';
import { ChargeClaims, chargeInputOf } from './charge-claims';
import { ChargeLeases, HandedBack, walletKey } from './charge-leases';
import { UsageService } from '../usage/usage.service';
import { drainBatches } from './concurrency';
import { AttemptRow, ChargeAttemptsRepository } from './repositories/charge-attempts.repository';
import {
  ReservationSelf,
  WalletReservation,
  WalletReservationsRepository,
  WalletSeen,
} from './repositories/wallet-reservations.repository';

export type { ChargeRunResult } from './charge-settlement';

/** How often a run's free lanes look for new work while other lanes are still busy. */
const REPOLL_MS = 1_000;

/** Failed tries whose bytes may still land that one run follows (`followFailedTries`). */
const FOLLOWED_PER_RUN = 100;

/** How long a charge waits for another charge of the same wallet and mint to settle. */
const SIBLING_WAIT_MS = 100;

/**
 * How long a charge bears with the wallet's other charges in the same mint: reads of its
 * reservation while one is in flight (`SIBLING_WAIT_MS` apart), and signings while they keep
 * moving, before it leaves the attempt to a later run.
 */
interface Patience {
  waits: number;
  signings: number;
}
/** A run: up to 5 s of waiting per reading. */
const PATIENT: Patience = { waits: 50, signings: 20 };
/** A customer's request (the first charge after a subscribe): no waiting. */
const IMPATIENT: Patience = { waits: 1, signings: 2 };

/**
 * The charge run (DESIGN section 8): claims due `Active` subscriptions, writes each period's
 * attempt row before anything is sent, sends the charge once and settles it by its signature.
 *
 * Exactly once, across instances and crashes:
 * - The claim is one statement: due subscriptions `FOR UPDATE SKIP LOCKED`, and an attempt row
 *   per (subscription, period) inserted (unique) or re-armed from a final failure. Two
 *   instances never hold one period; a period whose attempt is open is not claimed again.
 * - The signed transaction's signature and bytes are recorded (compare-and-set on a row with no
 *   signature, while the subscription is still `Active`) before they are sent. A later try of
 *   the same attempt first settles that signature: landed is a success; still live, the very
 *   same bytes are sent again (the chain takes one copy); expired, a new transaction may be
 *   signed. No second transaction for a period can exist while the first may land.
 * - Outcomes are applied in short transactions of their own; none is held open across an RPC
 *   call. An attempt whose instance died is resumed by any instance once its lease (database
 *   time) ends.
 * - On shutdown nothing new is claimed, signed or sent: an attempt not sent yet is handed back
 *   as it is; one whose outcome is awaited is given what is left of the close's grace
 *   (`SHUTDOWN_GRACE_MS`), then handed back too (`ChargeLeases`): another instance resumes it
 *   at once and settles it by its signature.
 */
@Injectable()
export class ChargeRunService {
  private readonly logger = new Logger(ChargeRunService.name);

  constructor(
    private readonly attempts: ChargeAttemptsRepository,
    private readonly reservations: WalletReservationsRepository,
    private readonly chain: ChainPort,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly settlement: ChargeSettlement,
    private readonly claims: ChargeClaims,
    private readonly metrics: Metrics,
    private readonly leases: ChargeLeases,
    private readonly usage: UsageService,
  ) {}

  /**
   * Charges everything due now: attempts claimed (stale ones first) as lanes come free, worked
   * on `CHARGE_CONCURRENCY` at a time, until nothing is left to claim.
   */
  async run(): Promise<ChargeRunResult> {
    const result = emptyResult();
    await this.settlement.clearRestoredAccounts().catch((error: unknown) => {
      this.logger.warn({ err: error }, 'Could not check the missing receiving accounts');
    });
    const followed = emptyResult();
    await this.settlement.followFailedTries(FOLLOWED_PER_RUN, followed).catch((error: unknown) => {
      this.logger.warn({ err: error }, 'Could not follow the failed tries still able to land');
    });
    addResults(result, followed);
    this.metrics.chargesSettled(followed);
    const walk = this.claims.walk();
    await drainBatches(
      this.config.CHARGE_CONCURRENCY,
      // Only as many as there are free lanes: a claimed attempt is worked on at once, within its
      // lease, never queued behind slow charges while its lease runs out.
      async (room) => {
        if (this.leases.closing) return []; // shutting down: nothing new is taken up
        const size = Math.min(room, this.config.CHARGE_BATCH_SIZE);
        const rows = await this.claims.resumeStale(size, this.leases.ids);
        if (rows.length < size) {
          const busy = [...this.leases.wallets, ...rows.map(walletKey)];
          rows.push(...(await this.claims.claimDue(size - rows.length, undefined, busy, walk)));
        }
        result.attempts += rows.length;
        this.metrics.chargesTakenUp(rows.length);
        return this.leases.take(rows);
      },
      (row) => this.process(row, result),
      // A charge can wait a minute or two for its transaction's fate: meanwhile the free lanes
      // take up what falls due and what a dead or stalled instance left.
      { repollMs: REPOLL_MS, minBatch: Math.ceil(this.config.CHARGE_CONCURRENCY / 8) },
    );
    return result;
  }

  /**
   * Charges one subscription now if it is due (a confirmed subscribe's first period): the same
   * claim and path as a run, for that subscription alone.
   */
  async chargeNow(subscriptionId: string): Promise<ChargeRunResult> {
    const result = emptyResult();
    if (this.leases.closing) return result; // shutting down: another instance's run charges it
    const rows = this.leases.take(await this.claims.claimDue(1, subscriptionId));
    result.attempts = rows.length;
    this.metrics.chargesTakenUp(rows.length);
    // A customer's request is waiting: no waiting on the wallet's other charges (see
    // `quietReservation`); if one is in flight, the next run charges this one.
    for (const row of rows) await this.process(row, result, IMPATIENT);
    return result;
  }

  /**
   * One attempt, from wherever it stands, to an outcome (or deferred to a later run), added to
   * the run's `result` (and to the metrics) when it is done.
   */
  private process(
    row: AttemptRow,
    result: ChargeRunResult,
    patience: Patience = PATIENT,
  ): Promise<void> {
    return this.leases.track(this.processOne(row, result, patience));
  }

  private async processOne(
    row: AttemptRow,
    result: ChargeRunResult,
    patience: Patience,
  ): Promise<void> {
    const own = emptyResult();
    try {
      await this.attempt(row, own, patience);
    } catch (error) {
      if (error instanceof HandedBack) {
        // Stopped for the shutdown: its lease ends now, for another instance to resume.
        await this.leases.handBack(row);
        own.deferred++;
        return;
      }
      // The RPC or the database failed under us: the lease lets a later run take it up.
      this.logger.warn({ err: error, attemptId: row.id }, 'Charge attempt deferred after an error');
      own.deferred++;
    } finally {
      this.leases.release(row);
      addResults(result, own);
      this.metrics.chargesSettled(own);
    }
  }

  /** @param row as claimed or resumed: this instance holds its lease. */
  private async attempt(
    row: AttemptRow,
    result: ChargeRunResult,
    patience: Patience,
  ): Promise<void> {
    if (row.state !== 'pending' && row.state !== 'sent') return;
    const input = chargeInputOf(row);

    // 1. A recorded transaction is settled before anything else is signed.
    if (row.signature && row.transaction) {
      const tx = {
        signature: row.signature,
        transaction: row.transaction,
        lastValidBlockHeight: Number(row.last_valid_block_height),
      };
      const known = await this.chain.outcome(tx.signature, tx.lastValidBlockHeight);
      if (known.state === 'pending' && (row.s_status !== 'Active' || row.s_revoked)) {
        // Paused or cancelled since it was recorded: a copy already sent may still land (and
        // then pays its period), but the service does not send it again. Followed by its
        // signature until it lands or expires.
        await this.settlement.defer(
          { id: row.id, signature: tx.signature },
          'the subscription is no longer active: its try is followed, not sent again',
        );
        result.deferred++;
        return;
      }
      // Still live: the very same bytes again (one copy lands at most); else what it became.
      if (known.state === 'pending') this.leases.stopIfClosing();
      const outcome =
        known.state === 'pending'
          ? await this.leases.holding(row.id, tx.signature, () => this.chain.sendAndConfirm(tx))
          : known;
      if (await this.settle(row, input, outcome, result, tx)) return;
      // Expired (or never seen and replaceable): it can never land; a new try may be signed,
      // unless another instance has settled the attempt, recorded a try of its own or taken it
      // over meanwhile.
      const cleared = await this.attempts.clearExpiredTry(
        { id: row.id, signature: tx.signature, owner: this.claims.instance },
        this.clock.now(),
      );
      if (!cleared) return;
    }

    // 2. Nothing recorded: only an Active subscription is charged; one whose authorisation the
    //    customer revoked ends now, at the end of the period it paid for.
    if (row.s_status !== 'Active') return this.settlement.abandon(row, result);
    if (row.s_revoked) return this.settlement.complete(row, 'authorization_gone', result);

    // 3. What the pull is under the subscription's scheme now (a try of an earlier scheme may
    //    have recorded another): under a shared approval the price plus the mint's transfer fee
    //    (the price arrives whole: the rule invoices follow too), and its own share of the
    //    approval must hold it; under the program the plan's amount. A metered plan's is its
    //    fixed fee plus the usage of the period before, closed now (docs/usage.md).
    const price = row.metered ? await this.usage.chargeOf(usageKey(row)) : BigInt(row.price);
    const pull = await this.chain.pullAmount(row.mint, price, row.s_scheme);
    row.amount = pull.toString();
    input.amount = pull;
    if (this.chain.approvalOf(row.s_scheme)) {
      const left = BigInt(row.s_authorized_amount) - BigInt(row.s_charged_amount);
      // Used up; unless the customer moved to the program meanwhile (nobody confirmed it).
      if (left < pull) {
        if (await this.settlement.movedToProgram(row, result)) return;
        return this.settlement.complete(row, 'term_ended', result);
      }
    }

    // 4. Sign (a charge the accounts already doom is not sent), then record it before sending,
    //    while the subscription is still Active (under its row lock, so a pause or cancel that
    //    commits first stops the charge). Under a shared approval (`ChainPort.approval`) it is
    //    judged on a reservation read while none of the wallet's other charges in this mint was
    //    in flight, and the charge is recorded only if that still holds (`walletReservation`);
    //    otherwise it waits a moment and signs again.
    let signed;
    // The reservation read with the claim, when nothing was tried before it: the first reading.
    let claimed = row.signature === null ? row.seen : undefined;
    for (let tries = 1; ; tries++) {
      this.leases.stopIfClosing();
      let unchanged: WalletSeen | undefined;
      let seen: WalletReservation | null = null;
      if (this.chain.approvalOf(row.s_scheme)) {
        const self = { createdAt: row.s_created_at, id: row.subscription_id };
        seen =
          claimed?.inFlight === 0
            ? claimed
            : await this.quietReservation(row, self, patience.waits);
        claimed = undefined;
        if (!seen) {
          await this.settlement.defer(
            { id: row.id, signature: null },
            'other charges of the wallet stayed in flight',
          );
          result.deferred++;
          return;
        }
        // A claim's reading is an upper bound: the exact sum is read only if the bound does not fit.
        input.reservedForEarlier = this.reservations.judged(seen, row.subscriber, row.mint, self);
        // With no other live subscription there is nothing earlier to reserve for.
        if (seen.siblings > 0) unchanged = { wallet: row.subscriber, mint: row.mint, seen };
      }
      try {
        signed = await this.chain.signCharge(input);
      } catch (error) {
        if (!(error instanceof ChargeFailedError)) throw error;
        // Nobody's fault of the customer's (the merchant's account, the issuer's side, not
        // pullable now): nothing was sent, the charge waits, the subscription stays as it is.
        if (await this.settlement.waitBeforeSigning(row, error, result)) return;
        // Doomed by the accounts as read; but if another charge of the wallet moved meanwhile,
        // the allowance and the reservation were not read of one state: read both again.
        if (seen && tries < patience.signings && (await this.walletMoved(row, seen))) continue;
        const gone = error.reason === 'authorization_gone';
        if (gone && (await this.settlement.movedToProgram(row, result))) return;
        return this.settlement.fail(row, input, error.reason, error.message, null, result);
      }
      const recorded = await this.attempts.recordTry({
        id: row.id,
        subscriptionId: row.subscription_id,
        signature: signed.signature,
        transaction: signed.transaction,
        lastValidBlockHeight: signed.lastValidBlockHeight,
        amount: row.amount,
        leaseSeconds: this.config.CHARGE_LEASE_SECONDS,
        owner: this.claims.instance,
        now: this.clock.now(),
        scheme: row.s_scheme,
        unchanged,
      });
      if (recorded) break;
      const attempt = { subscriptionId: row.subscription_id, id: row.id, scheme: row.s_scheme };
      const now = await this.attempts.standing(attempt, this.claims.instance);
      // Taken over (this instance stalled past its lease) or handed back: not this one's to do.
      if (!now?.held) return;
      if (now.status !== 'Active') return this.settlement.abandon(row, result);
      if (now.revoked) return this.settlement.complete(row, 'authorization_gone', result);
      if (!now.open) return; // another instance recorded its own transaction first: it settles it
      // Its customer moved it to the Subscriptions program meanwhile: claimed again, charged there.
      if (now.moved) {
        await this.settlement.defer({ id: row.id, signature: null }, 'moved to another scheme');
        result.deferred++;
        return;
      }
      // Another charge of the wallet moved meanwhile: what was read may not match; read again.
      if (tries >= patience.signings) {
        await this.settlement.defer(
          { id: row.id, signature: null },
          'other charges of the wallet kept moving',
        );
        result.deferred++;
        return;
      }
    }

    // 6. Send once, settle by the outcome. The lease is renewed while the outcome is awaited
    //    (it can take longer than the lease); should this instance stall past it anyway, the
    //    instance that takes over settles this very try by its signature first. Shutting down,
    //    the recorded try is handed back unsent: whoever resumes it sends these very bytes.
    this.leases.stopIfClosing();
    const sent = signed;
    const outcome = await this.leases.holding(row.id, sent.signature, () =>
      this.chain.sendAndConfirm(sent),
    );
    if (!(await this.settle(row, input, outcome, result, sent))) {
      // It can never land: a later run may sign a new try, unless the attempt moved on meanwhile.
      const deferred = await this.settlement.defer(
        { id: row.id, signature: sent.signature },
        'the charge expired before it landed',
        { clear: true },
      );
      if (deferred) result.deferred++;
    }
  }

  /**
   * Applies an outcome. @returns false only when the transaction can never land and a new one
   * may be signed (expired, or refused with signatures that do not verify).
   */
  private async settle(
    row: AttemptRow,
    input: ChargeInput,
    outcome: TxOutcome,
    result: ChargeRunResult,
    tried: ChargeTry,
  ): Promise<boolean> {
    if (this.chain.approvalOf(row.s_scheme) && outcome.state !== 'succeeded') {
      // A failure is explained from the accounts as they are now: the reservation too.
      const self = { createdAt: row.s_created_at, id: row.subscription_id };
      input.reservedForEarlier = () => this.reservations.earlier(row.subscriber, row.mint, self);
    }
    switch (outcome.state) {
      case 'succeeded':
        await this.settlement.succeed(row, tried, outcome.slot, outcome.finalized, result);
        return true;
      case 'failed': {
        const reason = await this.settlement.failureOf(row, input, outcome.error);
        // Landed failed, through no fault of the customer's: it moved nothing, sign anew (a
        // receiving account closed meanwhile is found missing before anything is signed).
        if (retried(reason)) {
          await this.settlement.landedFailed({ id: row.id, ...tried });
          return false;
        }
        await this.settlement.fail(row, input, reason, outcome.error, tried, result, true);
        return true;
      }
      case 'rejected': {
        if (outcome.replaceable) return false;
        const reason = await this.settlement.failureOf(row, input, outcome.error);
        if (retried(reason)) {
          const deferred = ISSUER_SIDE_FAILURES.includes(reason)
            ? await this.settlement.waitForIssuer(row, reason, outcome.error, tried.signature)
            : await this.settlement.defer(
                { id: row.id, signature: tried.signature },
                outcome.error,
              );
          if (deferred) result.deferred++;
          return true;
        }
        // Refused now; the bytes stay recorded, so a later try settles them before re-signing.
        await this.settlement.fail(row, input, reason, outcome.error, tried, result);
        return true;
      }
      case 'expired':
        return false;
      case 'pending':
      case 'unknown':
        // Its fate is not known yet: the lease ends and a later run settles it by signature.
        result.deferred++;
        return true;
    }
  }

  /**
   * The wallet's reservation for this charge (what its live subscriptions in this mint that are
   * older than this one, any merchant's, still need: they are covered first), read once none of
   * its charges in this mint is in flight; waits up to `waits` readings `SIBLING_WAIT_MS` apart
   * for that, else null.
   */
  private async quietReservation(
    row: AttemptRow,
    self: ReservationSelf,
    waits: number,
  ): Promise<WalletReservation | null> {
    for (let i = 0; ; i++) {
      const seen = await this.reservations.walletReservation(row.subscriber, row.mint, self);
      if (seen.inFlight === 0) return seen;
      if (i + 1 >= waits) return null;
      await new Promise((resolve) => setTimeout(resolve, SIBLING_WAIT_MS));
      this.leases.stopIfClosing();
    }
  }

  /** Whether the wallet's subscriptions in the mint changed since `seen` (see `walletReservation`). */
  private async walletMoved(row: AttemptRow, seen: WalletReservation): Promise<boolean> {
    const self = { createdAt: row.s_created_at, id: row.subscription_id };
    const now = await this.reservations.walletReservation(row.subscriber, row.mint, self);
    return now.version !== seen.version;
  }
}

/** The usage period a charge bills: the subscription's, the period before the charge's. */
const usageKey = (row: AttemptRow) => ({
  merchantId: row.merchant_id,
  subscriptionId: row.subscription_id,
  period: row.period,
});
