import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { ValidationError } from '../common/errors/domain-error';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { EventsService } from '../events/events.service';
import { Metrics } from '../metrics/metrics';
import { PaymentsService } from '../payments/payments.service';
import { ChainPort, ChargeFailedError, ChargeFailure, ChargeInput } from '../solana/chain.port';
import { ISSUER_SIDE_FAILURES } from '../solana/issuer-side';
import { SubscriptionsService } from '../subscriptions/subscriptions.service';
import { BillingNotices } from './billing-notices';
import { ChargeClaims } from './charge-claims';
import { chargeLine, ChargeSuccesses, type ChargeTry } from './charge-successes';
import { AttemptRow, ChargeAttemptsRepository } from './repositories/charge-attempts.repository';
import { ReceivingAccountAlertsRepository } from './repositories/receiving-account-alerts.repository';
import { SchemeMovesService } from './scheme-moves.service';

export type { ChargeTry } from './charge-successes';

/** What one charge run did. */
export interface ChargeRunResult {
  /** Attempts taken up (new periods claimed and stale attempts resumed). */
  attempts: number;
  succeeded: number;
  /** Charges that failed: the subscription is PastDue. */
  failed: number;
  /** Subscriptions completed: authorisation gone, or their authorised term used up. */
  completed: number;
  /** Attempts left for a later run: a transient failure, or an outcome not known yet. */
  deferred: number;
  /** Attempts dropped because the subscription stopped being Active before anything was sent. */
  abandoned: number;
}

export function emptyResult(): ChargeRunResult {
  return { attempts: 0, succeeded: 0, failed: 0, completed: 0, deferred: 0, abandoned: 0 };
}

/** Adds the outcomes of `done` (some attempts of a run) to the run's `result`. */
export function addResults(result: ChargeRunResult, done: ChargeRunResult): void {
  result.succeeded += done.succeeded;
  result.failed += done.failed;
  result.completed += done.completed;
  result.deferred += done.deferred;
  result.abandoned += done.abandoned;
}

/**
 * Failures after which the charge is simply tried again later, nobody's fault but the network's,
 * the merchant's or the issuer's: the subscription stays as it is.
 */
export function retried(reason: ChargeFailure): boolean {
  return (
    reason === 'transient' ||
    reason === 'merchant_account_missing' ||
    ISSUER_SIDE_FAILURES.includes(reason)
  );
}

/**
 * How long a charge refused before signing as `transient` waits (seconds): the chain's state says
 * the pull would be refused for a reason that is not the customer's and not momentary (a plan
 * whose owner removed the service key from its pullers), so it is read again in five minutes.
 */
export const NOT_PULLABLE_RETRY_SECONDS = 300;

/** How long a transiently failed attempt waits before a run takes it up again (seconds). */
const TRANSIENT_RETRY_SECONDS = 20;
/** How long a charge waits for a merchant to create its receiving account (seconds). */
const MERCHANT_ACCOUNT_RETRY_SECONDS = 300;
/** How long a charge waits when the mint's issuer refuses every transfer (paused, hook absent). */
const ISSUER_RETRY_SECONDS = 300;

/**
 * Applies a charge attempt's outcome, each in one short transaction of its own (never across an
 * RPC call): the attempt row moves only from an open state (compare-and-set), so when two
 * instances settle one attempt only the first writes the ledger line, the subscription's move
 * and the events. Every write of an open attempt is fenced on this instance holding its lease
 * (`ChargeClaims.instance`): once it was taken over or handed back, this instance writes
 * nothing more to it.
 */
@Injectable()
export class ChargeSettlement {
  private readonly logger = new Logger(ChargeSettlement.name);

  constructor(
    private readonly db: Db,
    private readonly attempts: ChargeAttemptsRepository,
    private readonly alerts: ReceivingAccountAlertsRepository,
    private readonly chain: ChainPort,
    private readonly clock: Clock,
    private readonly events: EventsService,
    private readonly payments: PaymentsService,
    private readonly subscriptions: SubscriptionsService,
    private readonly notices: BillingNotices,
    private readonly metrics: Metrics,
    private readonly claims: ChargeClaims,
    private readonly successes: ChargeSuccesses,
    private readonly moves: SchemeMovesService,
  ) {}

  /**
   * The money moved: attempt, ledger, subscription and events in one transaction, shared with
   * the other successes being settled at the moment (`ChargeSuccesses`: all of it commits, or
   * none; each kind of row written for the whole group in one statement).
   */
  async succeed(
    row: AttemptRow,
    tried: ChargeTry,
    slot: number,
    finalized: boolean,
    result: ChargeRunResult,
    /** `failed`: a try given up as failed whose bytes landed after all (`followFailedTries`). */
    from: 'open' | 'failed' = 'open',
  ): Promise<void> {
    // What arrived of the pull (net of the fee in force where it landed: a new fee may have
    // started since).
    const fee = await this.chain.feeOn(row.mint, BigInt(row.amount), slot);
    const networkFee = this.chain.networkFee(tried.transaction);
    const settled = await this.successes.settle({
      row,
      tried,
      networkFee,
      slot,
      finalized,
      fee,
      from,
    });
    if (settled) {
      result.succeeded++;
      this.metrics.serviceKeyPaid(networkFee);
    }
  }

  /**
   * A final failure of this try: the attempt is `failed`, a failed ledger line records it, and
   * the subscription moves (DESIGN section 8): authorisation gone -> `Completed`; insufficient
   * funds, a frozen account or another payment failure -> `PastDue` with `failureReason` and
   * `subscription.past_due`, and the customer is told.
   */
  async fail(
    row: AttemptRow,
    input: ChargeInput,
    reason: ChargeFailure,
    message: string,
    /** The try the caller read (null: nothing was signed). */
    tried: ChargeTry | null,
    result: ChargeRunResult,
    /** The transaction landed and failed: it can never land again, so it is not kept. */
    landed = false,
  ): Promise<void> {
    const settled = await this.db.transaction(async (tx) => {
      const won = await this.attempts.markFailed(tx, {
        id: row.id,
        owner: this.claims.instance,
        tried: tried?.signature ?? null,
        reason,
        message: message.slice(0, 1000),
        networkFee: landed && tried ? this.chain.networkFee(tried.transaction) : 0n,
        landed,
        now: this.clock.now(),
      });
      if (!won) return false;
      await this.payments.insertIn(tx, {
        ...chargeLine(row, landed ? (tried?.signature ?? null) : null),
        status: 'failed',
        amount: input.amount,
        note: reason,
      });
      const action = reason === 'authorization_gone' ? 'complete' : 'chargeFailed';
      const moved = await this.move(tx, row, action, reason);
      if (moved && action === 'chargeFailed') {
        await this.notices.chargeFailed(tx, moved, reason);
      }
      return true;
    });
    if (settled) {
      if (reason === 'authorization_gone') result.completed++;
      else result.failed++;
      this.metrics.chargeFailed(reason);
      if (landed && tried) this.metrics.serviceKeyPaid(this.chain.networkFee(tried.transaction));
    }
  }

  /** Its authorised term is used up: `Completed`, nothing sent. */
  async complete(row: AttemptRow, reason: string, result: ChargeRunResult): Promise<void> {
    const done = await this.db.transaction(async (tx) => {
      const won = await this.attempts.markCompleted(tx, {
        id: row.id,
        owner: this.claims.instance,
        reason,
        now: this.clock.now(),
      });
      if (!won) return false;
      await this.move(tx, row, 'complete', reason);
      return true;
    });
    if (done) {
      result.completed++;
      this.metrics.chargeFailed(reason);
    }
  }

  /** The subscription stopped being Active before anything was sent: nothing to charge. */
  async abandon(row: AttemptRow, result: ChargeRunResult): Promise<void> {
    if (await this.attempts.abandon(row.id, this.claims.instance, this.clock.now())) {
      result.abandoned++;
    }
  }

  /**
   * Leaves the attempt for a later run (a transient failure). `clear`: its try can never land
   * (expired), so a later run may sign a new one. Compare-and-set on the try the caller read and
   * on its holder: when another instance has taken the attempt over (and recorded a try of its
   * own) meanwhile, this writes nothing (clearing that try's record would let a third be signed
   * while it may still land: one period charged twice; pushing its lease back would hold up an
   * attempt this instance handed back).
   * @returns whether it wrote.
   */
  async defer(
    attempt: { id: string; signature: string | null },
    message: string,
    options: { clear?: boolean; retrySeconds?: number } = {},
  ): Promise<boolean> {
    return this.attempts.defer({
      id: attempt.id,
      owner: this.claims.instance,
      signature: attempt.signature,
      message: message.slice(0, 1000),
      retrySeconds: options.retrySeconds ?? TRANSIENT_RETRY_SECONDS,
      clear: options.clear ?? false,
      now: this.clock.now(),
    });
  }

  /**
   * A try that landed and failed through no fault of the customer's (it moved nothing, a new
   * one will be signed): the service key paid its network fee all the same.
   */
  async landedFailed(attempt: { id: string } & ChargeTry): Promise<void> {
    await this.attempts.addNetworkFee(
      {
        id: attempt.id,
        owner: this.claims.instance,
        signature: attempt.signature,
        fee: this.chain.networkFee(attempt.transaction),
      },
      this.clock.now(),
    );
    this.metrics.serviceKeyPaid(this.chain.networkFee(attempt.transaction));
  }

  /**
   * Extends the lease of an attempt while its try is being confirmed (a confirmation can take
   * longer than the lease). Compare-and-set on that try and its holder: nothing is renewed once
   * the attempt was settled, taken over by another instance or handed back.
   * @returns whether the lease is still this holder's.
   */
  async renewLease(attempt: { id: string; signature: string }, seconds: number): Promise<boolean> {
    return this.attempts.renewLease(attempt.id, attempt.signature, this.claims.instance, seconds);
  }

  /**
   * Hands back the open attempts of `ids` this instance holds (it is shutting down): their
   * leases end now, so any instance resumes them at once, settling a recorded try by its
   * signature before anything is signed again. @returns the ids handed back.
   */
  handBack(ids: readonly string[]): Promise<string[]> {
    return this.attempts.handBack(ids, this.claims.instance, this.clock.now());
  }

  /**
   * A charge refused before signing for a reason that is not the customer's: the merchant's
   * receiving account missing (`waitForMerchantAccount`), the issuer's side (the mint paused,
   * its hook program absent, the merchant's account frozen: `waitForIssuer`), or not pullable
   * now (e.g. the plan dropped the service key: read again in `NOT_PULLABLE_RETRY_SECONDS`).
   * @returns whether it waits (else the refusal is the customer's to answer for).
   */
  async waitBeforeSigning(
    row: AttemptRow,
    error: ChargeFailedError,
    result: ChargeRunResult,
  ): Promise<boolean> {
    if (error.reason === 'merchant_account_missing') {
      await this.waitForMerchantAccount(row, error.message);
    } else if (ISSUER_SIDE_FAILURES.includes(error.reason)) {
      await this.waitForIssuer(row, error.reason, error.message);
    } else if (error.reason === 'transient') {
      await this.defer({ id: row.id, signature: null }, error.message, {
        retrySeconds: NOT_PULLABLE_RETRY_SECONDS,
      });
    } else {
      return false;
    }
    result.deferred++;
    return true;
  }

  /**
   * Why a sent try failed (`ChainPort.classifyChargeFailure`). An approval gone where
   * subscriptions move to the program may be the customer's move landing while the try was in
   * flight: retried like a transient failure (the try settled by its signature first), the next
   * try's pre-check decides (`movedToProgram`), never the end of the subscription here.
   */
  async failureOf(row: AttemptRow, input: ChargeInput, error: string): Promise<ChargeFailure> {
    const reason = await this.chain.classifyChargeFailure(input, error);
    const moving = reason === 'authorization_gone' && this.chain.movable(row.s_scheme);
    return moving ? 'transient' : reason;
  }

  /**
   * A token-delegate charge whose approval is gone (or used up), before signing, where
   * subscriptions move to the program: the customer may have moved unconfirmed (or subscribed
   * under the program, carrying this one along). The wallet's moves are taken up (`adopt`):
   * moved (here, or by anyone meanwhile), the attempt is taken up again at once under the
   * program; unreadable now (the RPC, a sibling's charge in flight), it waits.
   * @returns whether it was handled (else the failure stands: no program subscription runs).
   */
  async movedToProgram(row: AttemptRow, result: ChargeRunResult): Promise<boolean> {
    if (!this.chain.movable(row.s_scheme)) return false;
    let moved: boolean;
    try {
      moved = (await this.moves.adopt(row.subscriber, row.mint)).includes(row.subscription_id);
    } catch (error) {
      this.logger.warn({ err: error }, 'Could not take up a move to the program');
      const why = error instanceof Error ? error.message : 'unknown';
      await this.defer({ id: row.id, signature: null }, `the move could not be read: ${why}`);
      result.deferred++;
      return true;
    }
    const attempt = { subscriptionId: row.subscription_id, id: row.id, scheme: row.s_scheme };
    if (!moved && !(await this.attempts.standing(attempt, this.claims.instance))?.moved) {
      return false;
    }
    await this.defer({ id: row.id, signature: null }, 'moved to the Subscriptions program', {
      retrySeconds: 0,
    });
    result.deferred++;
    return true;
  }

  /**
   * The merchant's receiving account of the mint does not exist: nothing is sent (the service
   * never pays its rent), the attempt waits `MERCHANT_ACCOUNT_RETRY_SECONDS` and the
   * subscription stays as it is, and the merchant is told once
   * (`merchant.receiving_account_missing`) until the account exists again.
   */
  async waitForMerchantAccount(row: AttemptRow, message: string): Promise<void> {
    await this.defer({ id: row.id, signature: null }, message, {
      retrySeconds: MERCHANT_ACCOUNT_RETRY_SECONDS,
    });
    const address = await this.chain.tokenAccount(row.merchant_wallet, row.mint);
    const now = this.clock.now();
    await this.db.transaction(async (tx) => {
      const added = await this.alerts.add(
        tx,
        { merchant_id: row.merchant_id, mint: row.mint, address },
        now,
      );
      if (!added) return; // told already
      await this.events.record(tx, row.merchant_id, 'merchant.receiving_account_missing', {
        object: 'receiving_account',
        walletAddress: row.merchant_wallet,
        mint: row.mint,
        address,
        missingSince: now.toISOString(),
      });
    });
  }

  /**
   * The issuer's side refuses every transfer of the mint for now (`mint_paused`: paused;
   * `transfer_hook_failed`: its hook program absent or refusing): the attempt waits
   * `ISSUER_RETRY_SECONDS` (its `last_error` says which, `<reason>: <message>`) and the
   * subscription stays as it is: never PastDue, the customer did nothing wrong.
   */
  async waitForIssuer(
    row: { id: string },
    reason: ChargeFailure,
    message: string,
    /** The try the node refused (its bytes are kept and settled by signature), or none. */
    signature: string | null = null,
  ): Promise<boolean> {
    // Not a failure of the period (`chargeFailed` counts those): it waits, as a transient one.
    return this.defer({ id: row.id, signature }, `${reason}: ${message}`, {
      retrySeconds: ISSUER_RETRY_SECONDS,
    });
  }

  /**
   * Forgets the alerts of receiving accounts that exist again (one account read for all of
   * them; usually there are none), so that a later disappearance is told again.
   */
  async clearRestoredAccounts(): Promise<void> {
    const alerts = await this.alerts.list();
    if (alerts.length === 0) return;
    const present = await this.chain.existingAccounts(alerts.map((a) => a.address));
    for (const alert of alerts.filter((a) => present.has(a.address))) {
      await this.alerts.remove(alert);
    }
  }

  /**
   * A try its node refused in preflight (a failed simulation: funds moved away, say) is
   * `failed` at once, the subscription `PastDue`, but its bytes are kept: a copy sent earlier
   * (before a crash, or rebroadcast by a node) can still land while its blockhash lives, and
   * nothing re-arms the attempt while the subscription is not Active. Each run follows such tries
   * (`limit`, the oldest first) by signature: one that landed is the period's charge
   * after all (ledger line, period moved, as any success); one that expired or landed failed is
   * let go (bytes and signature cleared: it can never move money).
   */
  async followFailedTries(limit: number, result: ChargeRunResult): Promise<void> {
    const rows = await this.attempts.failedWithBytes(limit);
    if (rows.length === 0) return;
    const outcomes = await this.chain.outcomes(
      rows.map((row) => ({
        signature: row.signature!,
        lastValidBlockHeight: Number(row.last_valid_block_height),
      })),
    );
    for (const row of rows) {
      const outcome = outcomes.get(row.signature!)!;
      if (outcome.state === 'succeeded') {
        const tried = { signature: row.signature!, transaction: row.transaction! };
        await this.succeed(row, tried, outcome.slot, outcome.finalized, result, 'failed');
      } else if (outcome.state === 'expired' || outcome.state === 'failed') {
        await this.attempts.forgetFailedTry(row.id, row.signature!, this.clock.now());
      }
    }
  }

  /** Moves the subscription if it is still in a status the move starts from. */
  private async move(
    tx: SqlTx,
    row: AttemptRow,
    action: 'complete' | 'chargeFailed',
    reason: string,
  ) {
    try {
      return await this.subscriptions.transition(tx, row.merchant_id, row.subscription_id, action, {
        failureReason: reason,
      });
    } catch (error) {
      if (error instanceof ValidationError) return null; // paused or cancelled meanwhile
      throw error;
    }
  }
}
