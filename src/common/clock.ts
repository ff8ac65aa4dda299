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
