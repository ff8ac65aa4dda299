import { Injectable } from '@nestjs/common';

/**
 * Domain time. Services ask the clock, never `new Date()`, so tests and localnet can move time.
 */
export abstract class Clock {
  abstract now(): Date;
}

@Injectable()
export class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }
}

/**
 * How far a movable clock may go: 2200-01-01T00:00:00Z. Far enough for any test (a plan's whole
 * term from today), and a date PostgreSQL, JavaScript and the chain (an i64 of seconds) all hold
 * and format the usual way (docs/dev.md).
 */
export const CLOCK_CEILING = new Date('2200-01-01T00:00:00.000Z');
export const CLOCK_CEILING_UNIX_SECONDS = CLOCK_CEILING.getTime() / 1000;

/** A clock that can be moved forward (localnet's, and the tests'). */
export interface AdjustableClock extends Clock {
  advance(ms: number): void;
}

export function isAdjustable(clock: Clock): clock is AdjustableClock {
  return typeof (clock as Partial<AdjustableClock>).advance === 'function';
}

/**
 * The service clock on localnet: real time plus an offset that `POST /api/dev/clock/advance`
 * moves together with the chain's clock. It takes up the chain's offset at start-up and every
 * few seconds, so a restarted instance (or the merchant CLI) agrees with a chain whose clock was
 * moved before.
 *
 * Domain time never goes backwards: the offset only grows (a sync that reads the chain's clock
 * before another instance's advance and applies it after cannot undo the advance), and `now()`
 * never returns less than it returned before (even if the wall clock steps back).
 */
@Injectable()
export class OffsetClock extends Clock implements AdjustableClock {
  private offsetMs = 0;
  private last = 0;

  now(): Date {
    this.last = Math.max(this.last, Date.now() + this.offsetMs);
    return new Date(this.last);
  }

  advance(ms: number): void {
    if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError('The clock only moves forward');
    if (this.now().getTime() + ms > CLOCK_CEILING.getTime()) {
      throw new RangeError(`The clock cannot pass ${CLOCK_CEILING.toISOString()}`);
    }
    this.offsetMs += ms;
  }

  /**
   * Takes up the chain's clock (whole seconds): the offset becomes the chain's when that is
   * ahead of ours, and stays as it is otherwise. Any advance counts, a one-second one included.
   */
  syncTo(chainUnixSeconds: number): void {
    // A chain clock outside the bounds is not taken up (the chain refuses to start with one).
    if (!Number.isSafeInteger(chainUnixSeconds) || chainUnixSeconds > CLOCK_CEILING_UNIX_SECONDS) {
      return;
    }
    const offsetMs = (chainUnixSeconds - Math.floor(Date.now() / 1000)) * 1000;
    this.offsetMs = Math.max(this.offsetMs, offsetMs);
  }

  /** The current offset from real time, in milliseconds. */
  get offset(): number {
    return this.offsetMs;
  }
}
