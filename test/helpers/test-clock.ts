import { Clock } from '../../src/common/clock';

/** Domain time for tests: starts at the real time and moves only when told. */
export class TestClock extends Clock {
  private current = new Date();

  now(): Date {
    return new Date(this.current.getTime());
  }

  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }

  set(date: Date): void {
    this.current = new Date(date.getTime());
  }
}
