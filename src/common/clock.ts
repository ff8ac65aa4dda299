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

/** A clock that can be moved forward (localnet's, and the tests'). */
export interface AdjustableClock extends Clock {
  advance(ms: number): void;
}

export function isAdjustable(clock: Clock): clock is AdjustableClock {
  return typeof (clock as Partial<AdjustableClock>).advance === 'function';
}

/**
 * The service clock on localnet: real time plus an offset that `POST /api/dev/clock/advance`
 * moves together with the chain's clock. At start-up it takes the chain's offset, so a restarted
 * instance agrees with a chain whose clock was moved before.
 */
@Injectable()
export class OffsetClock extends Clock implements AdjustableClock {
  private offsetMs = 0;

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  advance(ms: number): void {
    this.offsetMs += ms;
  }

  /** Aligns with the chain's clock, which moves in whole seconds. */
  syncTo(chainUnixSeconds: number): void {
    const offsetSeconds = chainUnixSeconds - Math.floor(Date.now() / 1000);
    // Within a second of real time is real time (the two read the wall clock a moment apart).
    this.offsetMs = Math.abs(offsetSeconds) <= 1 ? 0 : offsetSeconds * 1000;
  }
}
