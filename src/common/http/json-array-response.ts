import type { Response } from 'express';
import { drainedWrite } from './drained-write';

export { DRAIN_TIMEOUT_MS } from './drained-write';

/**
 * Writes a JSON array to the response from batches of already-serialized elements (comma-joined),
 * with backpressure: the next batch is asked for once the socket has taken the last. The status
 * and headers go out with the first batch, so an error before it is still answered normally.
 */
export class JsonArrayResponse {
  private started = false;
  private empty = true;

  constructor(private readonly res: Response) {}

  /** @returns false once the client has gone away (stop producing). */
  async write(json: string): Promise<boolean> {
    if (this.res.destroyed) return false;
    if (!this.started) {
      this.started = true;
      this.res.status(200).type('application/json');
      this.res.write('[');
    }
    if (json.length === 0) return true;
    const chunk = this.empty ? json : `,${json}`;
    this.empty = false;
    return drainedWrite(this.res, chunk);
  }

  end(): void {
    if (this.res.destroyed) return;
    if (!this.started) this.res.status(200).type('application/json').end('[]');
    else this.res.end(']');
  }
}
