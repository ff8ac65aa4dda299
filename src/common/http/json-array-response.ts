import type { Response } from 'express';

/** How long a client may leave the socket full before the response is abandoned. */
export const DRAIN_TIMEOUT_MS = 30_000;

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
    const ok = this.res.write(this.empty ? json : `,${json}`);
    this.empty = false;
    if (!ok && !this.res.destroyed) {
      await new Promise<void>((resolve) => {
        // A client that stops reading is cut off rather than holding a database connection.
        const timer = setTimeout(() => this.res.destroy(), DRAIN_TIMEOUT_MS);
        const done = () => {
          clearTimeout(timer);
          this.res.off('drain', done);
          this.res.off('close', done);
          resolve();
        };
        this.res.on('drain', done);
        this.res.on('close', done);
      });
    }
    return !this.res.destroyed;
  }

  end(): void {
    if (this.res.destroyed) return;
    if (!this.started) this.res.status(200).type('application/json').end('[]');
    else this.res.end(']');
  }
}
