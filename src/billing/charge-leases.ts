import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { BackgroundWork } from '../common/background/background-work';
import { AppConfig } from '../config/app-config';
import { ChargeSettlement } from './charge-settlement';
import type { AttemptRow } from './repositories/charge-attempts.repository';
import { setMaxListeners } from 'node:events';

/**
 * Thrown where a charge stops because the instance is shutting down: before anything new is
 * signed or sent, or when the close's grace ends while its outcome is awaited. Its attempt is
 * handed back, never settled by this instance.
 */
export class HandedBack extends Error {
  constructor() {
    super('The instance is shutting down: the attempt is handed back');
  }
}

/**
 * The charge attempts this instance holds, and their leases: which are in hand (and their
 * wallets), the renewal of a lease while a try's outcome is awaited, and the hand-back on
 * shutdown (docs/billing.md, the lease rule).
 *
 * The close, from its first step (`BackgroundWork.closing`): nothing new is claimed, signed or
 * sent (`stopIfClosing`), and an attempt that stops there is handed back at once, unsent. An
 * attempt whose outcome is awaited is given what is left of the close's grace
 * (`SHUTDOWN_GRACE_MS`); still awaited then, every attempt in hand is handed back in one
 * statement and the waits end (`HandedBack`). Handed back, an attempt's lease ends now, fenced on
 * this instance holding it, so another instance resumes it at once rather than when the lease
 * would have ended, and settles a recorded try by its signature first (never a second send);
 * every later write of this instance to it is refused by the lease fence.
 */
@Injectable()
export class ChargeLeases implements BeforeApplicationShutdown {
  private readonly logger = new Logger(ChargeLeases.name);
  /**
   * The attempts this instance is working on now. Their leases may run out meanwhile (a sibling
   * wait, a slow RPC), but they are not stale to this instance: it never takes over its own.
   */
  private readonly inHand = new Set<string>();
  /** The wallet and mint (`wallet:mint`) of each attempt in hand, counted. */
  private readonly walletsInHand = new Map<string, number>();
  /** The attempts being worked on (`track`), for the close to wait for. */
  private readonly working = new Set<Promise<void>>();
  /** Aborted when the close's grace has run out: outcomes still awaited are given up. */
  /** One listener per attempt in flight (up to the concurrency): no cap on them is a leak sign. */
  private readonly graceOver = unboundedController();
  /** What the close handed back when its grace ran out. */
  private readonly handedBack = new Set<string>();

  constructor(
    private readonly settlement: ChargeSettlement,
    private readonly background: BackgroundWork,
    private readonly config: AppConfig,
  ) {}

  /** Whether the app is closing: nothing new is claimed, signed or sent. */
  get closing(): boolean {
    return this.background.closing;
  }

  /** The attempts in hand (a resume leaves them alone). */
  get ids(): string[] {
    return [...this.inHand];
  }

  /** The wallets and mints (`wallet:mint`) with an attempt in hand. */
  get wallets(): string[] {
    return [...this.walletsInHand.keys()];
  }

  /** Notes the attempts as in hand here; each is let go by `release`. */
  take(rows: AttemptRow[]): AttemptRow[] {
    for (const row of rows) {
      this.inHand.add(row.id);
      const key = walletKey(row);
      this.walletsInHand.set(key, (this.walletsInHand.get(key) ?? 0) + 1);
    }
    return rows;
  }

  /** Lets go of an attempt `take` noted. */
  release(row: AttemptRow): void {
    this.inHand.delete(row.id);
    const key = walletKey(row);
    const left = (this.walletsInHand.get(key) ?? 1) - 1;
    if (left > 0) this.walletsInHand.set(key, left);
    else this.walletsInHand.delete(key);
  }

  /** Counts `work` (one attempt worked on) among what the close waits for. */
  track(work: Promise<void>): Promise<void> {
    const tracked = work.finally(() => this.working.delete(tracked));
    this.working.add(tracked);
    return tracked;
  }

  /** @throws HandedBack once the instance is closing: nothing new is signed or sent. */
  stopIfClosing(): void {
    if (this.closing) throw new HandedBack();
  }

  /**
   * Hands back an attempt that stopped for the close (`HandedBack`), unless the close handed it
   * back already with every attempt in hand. A failure leaves it to its lease.
   */
  async handBack(row: AttemptRow): Promise<void> {
    if (this.handedBack.has(row.id)) return;
    try {
      await this.settlement.handBack([row.id]);
    } catch (error) {
      this.logger.warn({ err: error, attemptId: row.id }, 'Could not hand back a charge attempt');
    }
  }

  /**
   * Runs `work` (the wait for a try's outcome) while renewing the attempt's lease every third of
   * `CHARGE_LEASE_SECONDS`, so that no other instance takes over an attempt whose outcome this
   * one is still waiting for. Renewal is a compare-and-set on the try and its holder: it stops
   * on its own once the attempt is settled, was taken over (this instance stalled past its
   * lease) or handed back. When the close's grace runs out the wait is given up (`HandedBack`),
   * `work` left to end on its own: the outcome is another instance's to settle.
   */
  async holding<T>(id: string, signature: string, work: () => Promise<T>): Promise<T> {
    const seconds = this.config.CHARGE_LEASE_SECONDS;
    let held = true;
    const timer = setInterval(
      () => {
        if (!held) return;
        this.settlement.renewLease({ id, signature }, seconds).then(
          (still) => (held = still),
          (error: unknown) =>
            this.logger.warn({ err: error, attemptId: id }, 'Could not renew a charge lease'),
        );
      },
      Math.max(250, (seconds * 1000) / 3),
    );
    timer.unref();
    try {
      return await this.untilGraceOver(work());
    } finally {
      clearInterval(timer);
    }
  }

  /**
   * The close (after `BackgroundWork` stopped the schedules, so no run starts): the attempts
   * worked on get what is left of the grace; those still in hand then are handed back, and the
   * waits for their outcomes end.
   */
  async beforeApplicationShutdown(): Promise<void> {
    if (await this.background.withinGrace([...this.working])) return;
    const held = this.ids;
    for (const id of held) this.handedBack.add(id);
    this.graceOver.abort();
    try {
      const handed = await this.settlement.handBack(held);
      this.logger.log(
        { attemptIds: handed, inHand: held.length },
        'Shutdown: charge attempts still in hand handed back',
      );
    } catch (error) {
      // Their leases end in their own time instead; each is resumed then.
      this.logger.warn({ err: error }, 'Could not hand back the charge attempts in hand');
    }
  }

  /** `waiting`, or `HandedBack` as soon as the close's grace has run out. */
  private untilGraceOver<T>(waiting: Promise<T>): Promise<T> {
    const signal = this.graceOver.signal;
    return new Promise<T>((resolve, reject) => {
      const giveUp = () => reject(new HandedBack());
      if (signal.aborted) giveUp();
      else signal.addEventListener('abort', giveUp, { once: true });
      waiting.then(resolve, reject).finally(() => signal.removeEventListener('abort', giveUp));
    });
  }
}

/** The wallet and mint of an attempt: its charges share one approval. */
export function walletKey(row: AttemptRow): string {
  return `${row.subscriber}:${row.mint}`;
}

/** An AbortController whose signal takes any number of listeners without Node's leak warning. */
function unboundedController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
