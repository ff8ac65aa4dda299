import {
  BeforeApplicationShutdown,
  Logger,
  OnApplicationBootstrap,
  OnModuleInit,
} from '@nestjs/common';
import { BackgroundWork } from '../common/background/background-work';
import { Clock } from '../common/clock';
import { PgListener } from '../database/pg-listener';

/** A leased outbox row: its id and the fence its result is written under. */
export interface OutboxJob {
  readonly id: string;
  readonly lock_token: string;
}

/** A finished attempt, waiting for its result to be written. */
export interface OutboxResult<Job, Outcome> {
  readonly job: Job;
  readonly outcome: Outcome;
  /** Domain time the attempt finished. */
  readonly at: Date;
}

/** How one outbox is worked. */
export interface OutboxOptions<Job, Outcome> {
  /** The background job's name (logs, the schedule). */
  readonly name: string;
  /** The NOTIFY channel a new row is announced on. */
  readonly channel: string;
  readonly pollIntervalMs: number;
  /** Sends under way on this instance, at most. */
  readonly concurrency: number;
  /** Claims in batches of at least this many while sends are under way (1: one per free slot). */
  readonly minClaim?: number;
  /**
   * Fairness: sends under way per key (a merchant) are capped at `cap`; a key whose claim filled
   * its room claims again when it is back to half of it.
   *
   * `burst`: a key with more due than its cap whose endpoint answers fast (its last `cap`
   * attempts answered, each within `fastMs`, and none of its sends under way older than that)
   * may also fill the slots no share needs: `cap` slots always stay free for the other keys'
   * shares, so the keys bursting together hold at most `concurrency - cap`. A key that stops
   * answering fast holds what it has until those sends end (at most their timeout) and is back
   * to its cap from its next claim.
   */
  readonly fairness?: {
    readonly key: (job: Job) => string;
    readonly cap: number;
    readonly burst?: { readonly fastMs: number; readonly answered: (outcome: Outcome) => boolean };
  };
  /**
   * At most this many results go in one write; while as many wait to be written, nothing more
   * is claimed.
   */
  readonly resultBatch: number;
  /**
   * Results are written at most once per this many ms (0: as soon as the previous write is
   * done); the attempts finishing meanwhile share the write.
   */
  readonly resultIntervalMs?: number;
}

/** Why a handed-back attempt has no result (stored as its last error). */
export const HANDED_BACK_ERROR =
  'Attempt interrupted: the instance shut down before it finished; due again at once';

/**
 * The delivery loop every outbox shares (webhooks, e-mail): any number of instances work one
 * table, each claiming due rows with `FOR UPDATE SKIP LOCKED` and leasing them (real time, under
 * a fresh `lock_token`), so no two instances attempt one row at once and a row whose instance died
 * mid-attempt is taken again when its lease ends (at least once, never lost).
 *
 * It wakes on NOTIFY on `channel` (a row queued by any instance, or the listener reconnected),
 * every `pollIntervalMs` for retries that come due, and when a send ends while more may be due
 * (the last claim was full, or a key that filled its share is back to half of it).
 *
 * A send's slot (and its key's share) is free again as soon as the send ends; its result is
 * written afterwards, in a batch: results are written at most once per `resultIntervalMs`, and
 * those of the attempts finishing meanwhile go in the same write (one statement and one commit
 * for many). The row stays leased until its result is written. A crash between a send and its
 * write means the attempt is made again when the lease runs out: at least once.
 *
 * On shutdown it stops claiming and lets the attempts under way finish within what is left of
 * the close's grace (`SHUTDOWN_GRACE_MS`); those still sending then are handed back: due again
 * at once with their lease ended (each fenced on its `lock_token`), so another instance takes
 * them up at once rather than when the lease would have ended. Their late results are not
 * written (and a write under the old `lock_token` would change nothing). The results of sends
 * that did end are written before it returns: an answered send is never handed back.
 *
 * A subclass supplies its table's four steps: `claim` (lease due rows), `send` (the attempt; it
 * never throws for a failed delivery, it returns the outcome), `write` (the results, each
 * fenced on its `lock_token`) and `handBack` (abandoned attempts, fenced the same way).
 */
export abstract class OutboxWorker<Job extends OutboxJob, Outcome>
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown
{
  protected abstract readonly logger: Logger;
  /** The attempts under way (claimed, result not written yet), and the job of each. */
  private readonly inFlight = new Map<Promise<void>, Job>();
  /** The attempts whose send is under way, by id: the slots in use, and what a shutdown hands back. */
  private readonly sendsUnderWay = new Map<string, Job>();
  /** Jobs handed back on shutdown: their late results are dropped. */
  private readonly handedBack = new Set<string>();
  /** Sends under way per fairness key. */
  private readonly sendingByKey = new Map<string, number>();
  /**
   * Keys whose last claim filled their room (more of theirs may be due), each with the count of
   * sends under way at which it claims again (half the room it was given).
   */
  private readonly atCap = new Map<string, number>();
  /** When each send under way began (`performance.now()`), by id. */
  private readonly sendStarted = new Map<string, number>();
  /** Per key, its attempts in a row that were answered fast (bursts). */
  private readonly fastStreak = new Map<string, number>();
  /** Keys whose last claim gave them all the room they had: more of theirs may be due. */
  private readonly wanting = new Set<string>();
  private running = false;
  private pumping?: Promise<void>;
  private wakeAgain = false;
  /** The last claim was held back or came back full: more may be due, so a free slot claims again. */
  private backlog = false;
  private readonly results: (OutboxResult<Job, Outcome> & {
    resolve: () => void;
    reject: (error: unknown) => void;
  })[] = [];
  private writing = false;
  /** The loop writing the queued results (the last one, once it has ended). */
  private writer?: Promise<void>;
  /** When the last write began (`performance.now()`). */
  private lastWriteAt = -Infinity;

  protected constructor(
    private readonly options: OutboxOptions<Job, Outcome>,
    protected readonly clock: Clock,
    private readonly listener: PgListener,
    private readonly background: BackgroundWork,
  ) {}

  /**
   * Leases up to `limit` due rows. `inFlight` counts this instance's sends under way per fairness
   * key (empty without fairness): a key at its cap is passed over, and none gets more than its
   * room.
   */
  protected abstract claim(limit: number, inFlight: ReadonlyMap<string, number>): Promise<Job[]>;

  /** One attempt. A failure to deliver is an outcome; a throw leaves the row to its lease. */
  protected abstract send(job: Job): Promise<Outcome>;

  /** Writes the results, each only while its `lock_token` still holds the row. */
  protected abstract write(results: readonly OutboxResult<Job, Outcome>[]): Promise<void>;

  /**
   * Makes abandoned attempts' rows due again now with their lease ended, each only while its
   * `lock_token` still holds it (`WHERE id = … AND lock_token = …`). @returns the ids handed back.
   */
  protected abstract handBack(jobs: readonly Job[]): Promise<string[]>;

  /** Told of each attempt's outcome as it comes (the metrics count them), before it is written. */
  protected attempted?(job: Job, outcome: Outcome): void;

  onModuleInit(): void {
    if (!this.background.enabled) return;
    this.listener.subscribe(this.options.channel, {
      onMessage: () => this.wake(),
      onUp: () => this.wake(),
    });
  }

  onApplicationBootstrap(): void {
    if (!this.background.enabled) return;
    this.running = true;
    this.background.every(this.options.name, this.options.pollIntervalMs, () => this.wake());
    this.wake();
  }

  /**
   * Stops claiming, then lets the attempts under way finish and write their results within what
   * is left of the close's grace; hands back those still sending then, and waits for the results
   * of the others to be written.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.running = false;
    await this.pumping;
    if (await this.background.withinGrace([...this.inFlight.keys()])) return;
    const abandoned = [...this.sendsUnderWay.values()];
    for (const job of abandoned) this.handedBack.add(job.id);
    if (abandoned.length > 0) {
      try {
        const handed = await this.handBack(abandoned);
        this.logger.log(
          { ids: handed, inFlight: abandoned.length },
          `Shutdown: attempts still in flight handed back (${this.options.name})`,
        );
      } catch (error) {
        // Their leases end in their own time instead: taken again then, at least once.
        this.logger.warn({ err: error }, `Could not hand back attempts (${this.options.name})`);
      }
    }
    await this.writer;
  }

  private wake(): void {
    if (!this.running) return;
    if (this.pumping) {
      this.wakeAgain = true;
      return;
    }
    this.pumping = this.pump().finally(() => {
      this.pumping = undefined;
    });
  }

  private async pump(): Promise<void> {
    const { concurrency, minClaim = 1, fairness, resultBatch } = this.options;
    do {
      this.wakeAgain = false;
      while (this.running) {
        const free = concurrency - this.sendsUnderWay.size;
        // Claim in batches rather than one row per finished send, unless idle; and not while
        // a full batch of results waits to be written (the database is behind).
        if (
          free <= 0 ||
          (this.sendsUnderWay.size > 0 && free < minClaim) ||
          this.results.length >= resultBatch
        ) {
          this.backlog = true; // ending sends and writes wake the pump again
          break;
        }
        const busy = new Map(this.sendingByKey);
        // A bursting key's extra slots are passed as fewer sends under way: the claim gives
        // each key `cap` minus what it is told.
        const rooms = this.burstRooms(free);
        const told = new Map(busy);
        for (const [key, room] of rooms) told.set(key, fairness!.cap - room);
        let claimed: Job[];
        try {
          claimed = await this.claim(free, told);
        } catch (error) {
          this.logger.warn({ err: error }, `Could not claim (${this.options.name}); will retry`);
          return;
        }
        this.backlog = claimed.length === free;
        for (const job of claimed) this.start(job);
        if (fairness) this.noteClaim(claimed, busy, told, free);
        if (!this.backlog) break;
      }
    } while (this.wakeAgain && this.running);
  }

  /**
   * After a claim: a key that got all the room it was given has more due (it claims again at
   * half of what it may hold, and may burst); one that got less has nothing more due.
   */
  private noteClaim(
    claimed: readonly Job[],
    busy: ReadonlyMap<string, number>,
    told: ReadonlyMap<string, number>,
    limit: number,
  ): void {
    const { key, cap } = this.options.fairness!;
    const got = new Map<string, number>();
    for (const job of claimed) got.set(key(job), (got.get(key(job)) ?? 0) + 1);
    for (const k of new Set([...got.keys(), ...this.wanting])) {
      const before = busy.get(k) ?? 0;
      const room = cap - (told.get(k) ?? before);
      const taken = got.get(k) ?? 0;
      if (taken >= room && taken > 0) {
        this.wanting.add(k);
        this.atCap.set(k, Math.floor((before + room) / 2));
      } else if (taken < room && claimed.length < limit) {
        this.wanting.delete(k);
      }
    }
  }

  /**
   * The room of each bursting key in the next claim (see `OutboxOptions.fairness.burst`): the
   * slots beyond `cap` kept free for the others' shares, split between the keys that want more
   * and answer fast, and never less than a key's own share.
   */
  private burstRooms(free: number): Map<string, number> {
    const rooms = new Map<string, number>();
    const fairness = this.options.fairness;
    const burst = fairness?.burst;
    if (!fairness || !burst || this.wanting.size === 0) return rooms;
    const budget = free - fairness.cap;
    if (budget <= 0) return rooms;
    const now = performance.now();
    const slow = new Set<string>();
    for (const [id, started] of this.sendStarted) {
      const job = this.sendsUnderWay.get(id);
      if (job && now - started > burst.fastMs) slow.add(fairness.key(job));
    }
    const fast = [...this.wanting].filter(
      (k) => !slow.has(k) && (this.fastStreak.get(k) ?? 0) >= fairness.cap,
    );
    if (fast.length === 0) return rooms;
    const share = Math.floor(budget / fast.length);
    for (const k of fast) {
      const own = fairness.cap - (this.sendingByKey.get(k) ?? 0);
      if (share > own) rooms.set(k, share);
    }
    return rooms;
  }

  private start(job: Job): void {
    const key = this.options.fairness?.key(job);
    if (key !== undefined) this.sendingByKey.set(key, (this.sendingByKey.get(key) ?? 0) + 1);
    this.sendsUnderWay.set(job.id, job);
    this.sendStarted.set(job.id, performance.now());
    const task: Promise<void> = this.attempt(job, key).finally(() => this.inFlight.delete(task));
    this.inFlight.set(task, job);
  }

  /**
   * A send ended: its slot and its key's share are free at once, not when its result is written
   * (holding them through the batched write and its commit left the endpoint idle that long).
   */
  private sent(job: Job, key: string | undefined, outcome?: Outcome): void {
    this.sendsUnderWay.delete(job.id);
    const started = this.sendStarted.get(job.id) ?? performance.now();
    this.sendStarted.delete(job.id);
    let released = false;
    if (key !== undefined) {
      const left = (this.sendingByKey.get(key) ?? 1) - 1;
      if (left > 0) this.sendingByKey.set(key, left);
      else this.sendingByKey.delete(key);
      // A key that filled its room claims again at half of it (claiming per finished send
      // would cost a query each).
      const at = this.atCap.get(key);
      released = at !== undefined && left <= at;
      if (released) this.atCap.delete(key);
      const burst = this.options.fairness?.burst;
      if (burst) {
        const fast =
          outcome !== undefined &&
          burst.answered(outcome) &&
          performance.now() - started <= burst.fastMs;
        if (fast) this.fastStreak.set(key, (this.fastStreak.get(key) ?? 0) + 1);
        else this.fastStreak.delete(key);
      }
    }
    if (this.backlog || released) this.wake();
  }

  /** One attempt and its result written. Never throws. */
  private async attempt(job: Job, key: string | undefined): Promise<void> {
    try {
      let outcome: Outcome | undefined;
      try {
        outcome = await this.send(job);
      } finally {
        this.sent(job, key, outcome);
      }
      this.attempted?.(job, outcome);
      await this.complete(job, outcome);
    } catch (error) {
      // The lease runs out and another attempt follows: at least once, never lost.
      this.logger.error({ err: error, id: job.id }, `Attempt not recorded (${this.options.name})`);
    }
  }

  /** Queues the result for the next batched write; resolves once it is written. */
  private complete(job: Job, outcome: Outcome): Promise<void> {
    // Handed back on shutdown: the row is another attempt's now (and the fence would refuse it).
    if (this.handedBack.has(job.id)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.results.push({ job, outcome, at: this.clock.now(), resolve, reject });
      if (!this.writing) {
        this.writing = true;
        this.writer = this.writeResults();
      }
    });
  }

  /** Writes the queued results in batches until none is left. Never throws. */
  private async writeResults(): Promise<void> {
    while (this.results.length > 0) {
      // The attempts finishing until the next write is due share it (on the next turn at the
      // soonest, so that those finishing together do).
      const wait = this.lastWriteAt + (this.options.resultIntervalMs ?? 0) - performance.now();
      await new Promise((turn) => (wait > 0 ? setTimeout(turn, wait) : setImmediate(turn)));
      this.lastWriteAt = performance.now();
      const batch = this.results.splice(0, this.options.resultBatch);
      try {
        await this.write(batch);
        for (const result of batch) result.resolve();
      } catch (error) {
        if (batch.length === 1) {
          batch[0].reject(error);
        } else {
          // One row the database refuses must not cost the others their results (their leases
          // would run out and they would be attempted again): each is written on its own.
          for (const result of batch) {
            await this.write([result]).then(result.resolve, result.reject);
          }
        }
      }
      if (this.backlog) this.wake(); // claims held back while the results waited
    }
    this.writing = false;
  }
}

/** The lease of an attempt bounded by `timeoutMs`: long enough that a slow attempt keeps its row. */
export function outboxLeaseMs(timeoutMs: number): number {
  return Math.max(60_000, 3 * timeoutMs);
}

/** Error text as a result row stores it: at most 500 characters, well-formed, without NUL. */
export function storableError(error: string | null | undefined, max = 500): string | null {
  if (error === null || error === undefined) return null;
  // By code points, so that a cut never splits a surrogate pair; lone surrogates and NUL (which
  // PostgreSQL's text and jsonb refuse) become U+FFFD.
  const text = [...error.slice(0, 2 * max)].slice(0, max).join('');
  return text.replace(/\p{Cs}/gu, '\uFFFD').replaceAll(String.fromCharCode(0), '\uFFFD');
}
