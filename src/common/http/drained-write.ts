import type { Response } from 'express';

/** How long a client may leave the socket full before the response is abandoned. */
export const DRAIN_TIMEOUT_MS = 30_000;

/**
 * Writes `chunk` and, when the socket's buffer is full, waits until the client has taken it:
 * the caller asks for its next batch only then, so a streamed response of any length holds a
 * batch or two in memory. A client that stops reading is cut off after `DRAIN_TIMEOUT_MS`
 * rather than holding a database connection.
 * @returns false once the client has gone away (stop producing).
 */
export async function drainedWrite(res: Response, chunk: string): Promise<boolean> {
  if (res.destroyed) return false;
  const ok = res.write(chunk);
  if (!ok && !res.destroyed) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => res.destroy(), DRAIN_TIMEOUT_MS);
      const done = () => {
        clearTimeout(timer);
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
  }
  return !res.destroyed;
}
