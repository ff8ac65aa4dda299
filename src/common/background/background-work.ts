import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleDestroy } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';

/** What background work needs to know of the process (given by its config). */
export interface BackgroundOptions {
  /** Whether this process runs background work (`ROLE` worker or all). */
  readonly runsWorkers: boolean;
  /**
   * How long a close lets the attempts under way finish (`SHUTDOWN_GRACE_MS`, default 10 s),
   * counted once from its first step for everything that drains: what is still in flight then
   * is handed back (its lease ended at once) for another instance to resume.
   */
  readonly shutdownGraceMs?: number;
}

/** `SHUTDOWN_GRACE_MS`'s default. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;
export const BACKGROUND_OPTIONS = Symbol('BACKGROUND_OPTIONS');

/**
 * The one switch for background work (`ROLE`): webhook delivery, charge runs, payment watchers.
 * On an `api` instance nothing here runs; on `worker` and `all` instances jobs run on their
 * interval. `@nestjs/schedule` only triggers: every job claims its rows with
 * `FOR UPDATE SKIP LOCKED`, so any number of instances can run the same job without doing the
 * same work twice. Jobs are registered here (visible in the `SchedulerRegistry`), and one run of a
 * job never overlaps the previous one on the same instance.
 */
@Injectable()
export class BackgroundWork implements OnModuleDestroy, OnApplicationShutdown {
  private readonly logger = new Logger(BackgroundWork.name);
  private readonly running = new Map<string, Promise<void>>();
  private stopped = false;
  /** When the close began (`Date.now()`), once it has. */
  private closingSince?: number;

  constructor(
    @Inject(BACKGROUND_OPTIONS) private readonly options: BackgroundOptions,
    private readonly registry: SchedulerRegistry,
  ) {}

  /** Whether this instance runs background work at all. */
  get enabled(): boolean {
    return this.options.runsWorkers;
  }

  /** Whether the app is closing: jobs stop between steps, and nothing new is started. */
  get closing(): boolean {
    return this.stopped;
  }

  /**
   * What is left of the close's grace (`SHUTDOWN_GRACE_MS`), one bound shared by everything that
   * drains: the whole grace before the close began, 0 once it has run out.
   */
  graceLeftMs(): number {
    const grace = this.options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
    if (this.closingSince === undefined) return grace;
    return Math.max(0, this.closingSince + grace - Date.now());
  }

  /**
   * Waits for `work` to settle, for at most what is left of the close's grace.
   * @returns whether it settled in time (false: the grace ran out first).
   */
  async withinGrace(work: readonly Promise<unknown>[]): Promise<boolean> {
    if (work.length === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), this.graceLeftMs());
    });
    const settled = Promise.allSettled(work).then(() => true as const);
    try {
      return await Promise.race([settled, graceOver]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Runs `job` every `ms` milliseconds on instances that run background work (and does nothing
   * elsewhere). A run still going when the next is due is not started twice; a failing run is
   * logged and the schedule goes on. @returns whether the job was scheduled.
   */
  every(name: string, ms: number, job: () => Promise<unknown> | void): boolean {
    if (!this.enabled) return false;
    const timer = setInterval(() => void this.runOnce(name, job), ms);
    timer.unref();
    this.registry.addInterval(name, timer);
    return true;
  }

  /** Runs `job` now unless a run of it is under way here (then waits for that one). */
  runOnce(name: string, job: () => Promise<unknown> | void): Promise<void> {
    const current = this.running.get(name);
    if (current || this.stopped) return current ?? Promise.resolve();
    // Started on the next microtask, after the run is registered: a job that throws at once
    // must still be unregistered when it ends, or it would never run again.
    const run = Promise.resolve()
      .then(job)
      .then(
        () => undefined,
        (error: unknown) => {
          this.logger.error(
            { err: error, job: name },
            'Background job failed; it runs again later',
          );
        },
      )
      .finally(() => this.running.delete(name));
    this.running.set(name, run);
    return run;
  }

  /**
   * The first step of a close, before any module drains: no schedule fires and no run starts
   * from here on. (Stopped only at the last step, the schedules kept starting sweeps and charge
   * runs all through the drain, and the close then waited for each of them to end.)
   */
  onModuleDestroy(): void {
    this.closingSince ??= Date.now();
    this.stopped = true;
    for (const name of this.registry.getIntervals()) this.registry.deleteInterval(name);
  }

  /** Stops the schedules (if the close did not already) and lets the runs under way finish. */
  async onApplicationShutdown(): Promise<void> {
    this.onModuleDestroy();
    await Promise.allSettled([...this.running.values()]);
  }
}
