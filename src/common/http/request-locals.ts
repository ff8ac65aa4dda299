import type { Response } from 'express';

/**
 * One thing the service keeps about a request while serving it (its id, who it acts for, its
 * idempotency claim, its portal grant), kept in `res.locals`: the dictionary express makes for
 * each response. Never a property added to express's request: express gives every request a new
 * prototype, and each property added to it afterwards cost ~14 µs of CPU a request (7% of
 * `GET /health/live`; passport's seven cost ~45 µs on every authenticated request), where a key
 * added to `res.locals` costs nothing measurable (paired rounds, docs/performance.md).
 * `test/structure.spec.ts` keeps such assignments out of `src/`.
 */
export class RequestLocal<T> {
  private readonly key: symbol;

  constructor(name: string) {
    this.key = Symbol(name);
  }

  /** The value the request holds, if it was set. */
  get(res: Response): T | undefined {
    return (res.locals as Record<symbol, T | undefined>)[this.key];
  }

  set(res: Response, value: T): void {
    (res.locals as Record<symbol, T>)[this.key] = value;
  }
}
