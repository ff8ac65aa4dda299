import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppConfig } from '../config/app-config';
import { Metrics } from './metrics';

/** What a scrape gets from. */
export interface MetricsSource {
  readonly contentType: string;
  scrape(): Promise<string>;
}

/**
 * The handler of the metrics port: `GET /metrics` (and `HEAD`) in Prometheus' text format;
 * with a `token`, only for `Authorization: Bearer <token>` (compared in constant time), 401
 * otherwise; anything else 404. Errors in the API's shape (`{"error":{"code","message"}}`).
 */
export function metricsHandler(
  metrics: MetricsSource,
  token: string | undefined,
  logger: Pick<Logger, 'error'> = new Logger(MetricsServer.name),
): (req: IncomingMessage, res: ServerResponse) => void {
  const expected = token === undefined ? undefined : digest(token);
  return (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      return answer(res, 404, 'NOT_FOUND', 'The metrics are served at GET /metrics');
    }
    if (expected && !authorized(req.headers.authorization, expected)) {
      res.setHeader('www-authenticate', 'Bearer realm="metrics"');
      return answer(res, 401, 'UNAUTHORIZED', 'A valid metrics token is required');
    }
    metrics.scrape().then(
      (body) => {
        res.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' });
        res.end(body);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'The metrics could not be rendered');
        answer(res, 500, 'INTERNAL_ERROR', 'The metrics could not be rendered');
      },
    );
  };
}

/** SHA-256 of a token: equal lengths for `timingSafeEqual`, whatever was sent. */
function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

function authorized(header: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? '');
  return match !== null && timingSafeEqual(digest(match[1]), expected);
}

function answer(res: ServerResponse, status: number, code: string, message: string): void {
  const body = JSON.stringify({ error: { code, message } });
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

/** How long a scraper has to send its request, and how long an idle connection is kept. */
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * The metrics server: its own HTTP server on `METRICS_PORT` (and `METRICS_HOST`), never the
 * API's port, so that it stays out of the load balancer; none when `METRICS_PORT` is unset. It
 * runs on every `ROLE`. Started when the app has bootstrapped, closed when it shuts down (after
 * the drain, so the last scrapes of a stopping instance are still answered).
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MetricsServer.name);
  private server?: Server;

  constructor(
    private readonly metrics: Metrics,
    private readonly config: AppConfig,
  ) {}

  /** The port it listens on (the one picked when `METRICS_PORT=0`); undefined when off. */
  get port(): number | undefined {
    return (this.server?.address() as AddressInfo | null)?.port;
  }

  async onApplicationBootstrap(): Promise<void> {
    const port = this.config.METRICS_PORT;
    if (port === undefined) return;
    const server = createServer(
      metricsHandler(this.metrics, this.config.METRICS_TOKEN, this.logger),
    );
    server.requestTimeout = REQUEST_TIMEOUT_MS;
    server.headersTimeout = REQUEST_TIMEOUT_MS;
    await new Promise<void>((resolve, reject) => {
      const refused = (error: Error) =>
        reject(
          new Error(`The metrics server cannot listen (METRICS_PORT=${port}): ${error.message}`),
        );
      server.once('error', refused);
      server.listen(port, this.config.METRICS_HOST, () => {
        server.off('error', refused);
        resolve();
      });
    });
    server.on('error', (error) => this.logger.error({ err: error }, 'Metrics server error'));
    this.server = server;
    this.logger.log(
      { host: this.config.METRICS_HOST, port: this.port, token: !!this.config.METRICS_TOKEN },
      'Metrics served at GET /metrics',
    );
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }
}
