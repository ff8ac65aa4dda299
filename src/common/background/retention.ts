import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { BackgroundWork } from './background-work';

/** A table whose old rows are deleted, as its owning module prunes it. */
export interface RetentionTarget {
  /** The table's name (the run's report and its log line). */
  readonly table: string;
  /**
   * Deletes up to `limit` of the rows past their retention, in one statement: rows that are
   * final (never one still due or being worked on) and older than the table's period. Its cost
   * is proportional to what it deletes (a partial index holds just the final rows, by age), and
   * it skips rows another instance is deleting at the moment (`FOR UPDATE SKIP LOCKED`).
   * @returns how many it deleted.
   */
  pruneBatch(limit: number): Promise<number>;
}

/** How much one run deletes of each table: `batch` rows per statement, at most `maxBatches`. */
export interface RetentionLimits {
  readonly batch: number;
  readonly maxBatches: number;
}

/**
 * 1,000 rows per statement (short locks, small WAL bursts), at most 100 statements per table per
 * run: a backlog (the first run after an upgrade, after an outage) is worked off over several
 * runs rather than in one long one.
 */
export const RETENTION_LIMITS: RetentionLimits = { batch: 1_000, maxBatches: 100 };

/** How often the retention job runs (on instances that run background work). */
export const RETENTION_EVERY_MS = 10 * 60_000;

/** What one run did to one table. */
export interface RetentionReport {
  table: string;
  deleted: number;
  /** Statements run. */
  batches: number;
  /** Whether the table is pruned up to now (false: the run's bound, a close or an error stopped it). */
  complete: boolean;
}

/**
 * The retention job (docs/operations.md#retention): every `RETENTION_EVERY_MS`, on instances
 * that run background work (`ROLE` worker or all), each registered table is pruned in bounded
 * batches until a batch comes back short or the run's bound is reached. The tables' owners
 * register them (`register`, from their services): the delete of each table stays in its owning
 * module's repository, called through that module's service, and this job knows no table. Any
 * number of instances may run it at once: each batch skips the rows another is deleting.
 */
@Injectable()
export class Retention implements OnApplicationBootstrap {
  private readonly logger = new Logger(Retention.name);
  private readonly targets: RetentionTarget[] = [];

  constructor(private readonly background: BackgroundWork) {}

  /** Adds a table to every run (call it while modules initialise). */
  register(target: RetentionTarget): void {
    this.targets.push(target);
  }

  onApplicationBootstrap(): void {
    this.background.every('retention', RETENTION_EVERY_MS, () => this.run());
  }

  /**
   * Prunes each registered table, one after the other. A table whose batch fails is logged and
   * left for the next run; the others are pruned all the same. A close stops the run between
   * batches.
   * @param limits the run's bounds (`RETENTION_LIMITS`; a test gives smaller ones).
   */
  async run(limits: RetentionLimits = RETENTION_LIMITS): Promise<RetentionReport[]> {
    const reports: RetentionReport[] = [];
    for (const target of this.targets) {
      const report = { table: target.table, deleted: 0, batches: 0, complete: false };
      reports.push(report);
      try {
        while (report.batches < limits.maxBatches && !this.background.closing) {
          const deleted = await target.pruneBatch(limits.batch);
          report.batches++;
          report.deleted += deleted;
          if (deleted < limits.batch) {
            report.complete = true;
            break;
          }
        }
      } catch (error) {
        this.logger.warn(
          { err: error, table: target.table, deleted: report.deleted },
          'Retention: a batch failed; the table is pruned again at the next run',
        );
        continue;
      }
      if (report.deleted > 0) {
        this.logger.log(
          { table: target.table, deleted: report.deleted, complete: report.complete },
          report.complete
            ? 'Retention: rows past their period deleted'
            : 'Retention: rows past their period deleted; the rest at the next run',
        );
      }
    }
    return reports;
  }
}
