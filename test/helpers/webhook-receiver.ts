import { createServer, IncomingHttpHeaders, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

/** One POST the receiver got. */
export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: { id: string; type: string; createdAt: string; data: { object: Record<string, unknown> } };
  receivedAt: number;
}

/**
 * How the receiver answers: a status (and headers), after `delayMs` if given, or `hang` (never
 * answers).
 */
export type Behaviour =
  { status: number; headers?: Record<string, string>; delayMs?: number } | 'hang';

/**
 * A real HTTP webhook endpoint on loopback. It records every POST (raw body and headers) and
 * answers as told; `stop()` takes it down (connections refused) and `start()` brings it back on
 * the same port.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  behaviour: Behaviour = { status: 200 };
  /** The most POSTs it has held unanswered at once. */
  maxConcurrent = 0;
  private concurrent = 0;
  private server?: Server;
  private port = 0;
  private readonly hung = new Set<ServerResponse>();

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      this.maxConcurrent = Math.max(this.maxConcurrent, ++this.concurrent);
      res.on('close', () => this.concurrent--);
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const rawBody = Buffer.concat(chunks).toString('utf8');
        this.received.push({
          headers: req.headers,
          rawBody,
          body: JSON.parse(rawBody) as ReceivedWebhook['body'],
          receivedAt: Date.now(),
        });
        const behaviour = this.behaviour;
        if (behaviour === 'hang') {
          this.hung.add(res);
          return;
        }
        const answer = () => {
          res.writeHead(behaviour.status, behaviour.headers ?? {});
          res.end('ok');
        };
        if (behaviour.delayMs) setTimeout(answer, behaviour.delayMs);
        else answer();
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const res of this.hung) res.destroy();
    this.hung.clear();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** What arrived for one event id. */
  forEvent(eventId: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.body.id === eventId);
  }

  /** Waits until `count` POSTs have arrived in all (or `timeoutMs` passes, then throws). */
  async waitForCount(count: number, timeoutMs = 5000): Promise<ReceivedWebhook[]> {
    await waitFor(
      () => this.received.length >= count,
      timeoutMs,
      () => `expected ${count} webhooks, got ${this.received.length}`,
    );
    return this.received;
  }
}

/** Polls `check` every 20 ms until it is true; throws with `describe()` after `timeoutMs`. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
  describe: () => string = () => 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`Timed out waiting: ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
