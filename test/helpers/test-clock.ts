import { Clock, CLOCK_CEILING } from '../../src/common/clock';

/** Domain time for tests: starts at the real time and moves only when told. */
export class TestClock extends Clock {
  private current = new Date();

  now(): Date {
    return new Date(this.current.getTime());
  }

  /** As the service's clock: never past the ceiling (2200). */
  advance(ms: number): void {
    if (this.current.getTime() + ms > CLOCK_CEILING.getTime()) {
      throw new RangeError(`The clock cannot pass ${CLOCK_CEILING.toISOString()}`);
    }
    this.current = new Date(this.current.getTime() + ms);
  }

  set(date: Date): void {
    this.current = new Date(date.getTime());
  }
}
