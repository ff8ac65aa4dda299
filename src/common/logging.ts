import type { NextFunction, Request, Response } from 'express';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Params } from 'nestjs-pino';
import pino, { DestinationStream, Logger as PinoLogger } from 'pino';
import { AUTH } from './decorators/current-merchant.decorator';
import { batchedStdout } from './log-batch';
import { RequestLocal } from './http/request-locals';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The token under which the app's root pino logger is provided. */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

const PORTAL_PATH = /\/portal\//i;
const PORTAL_SEGMENT = /\/portal\/[^/?#]*/gi;

/** Query parameters whose value is a credential, whatever a client puts there. */
const SECRET_PARAMS = /([?&](?:access_token|session|portal_session|token|api_key|key)=)[^&#]*/gi;
/**
 * Credentials by their shape, wherever they sit (another parameter, a fragment, the path): a
 * portal session token (92 base64url characters, so any run of 64 or more) and an API key.
 */
const SECRET_SHAPES = /[A-Za-z0-9_-]{64,}|sbk_[1-9A-HJ-NP-Za-km-z]+/g;

/**
 * A URL for the logs: credentials are redacted: a customer portal session in the path
 * (`/portal/<token>`), a credential query parameter (`access_token`, `session`, `token`, ...,
 * any case), and anything shaped like a portal token or an API key wherever it appears.
 */
export function loggableUrl(url: string): string {
  // Wherever it sits and however it is spelled: routing ignores case, and a request line may be
  // an absolute URL or start with '//'.
  if (PORTAL_PATH.test(url)) url = url.replace(PORTAL_SEGMENT, '/portal/[redacted]');
  // Most URLs are short and carry no query parameter at all: no regular expression for them.
  if (url.length < 64 && !url.includes('=') && !url.includes('sbk_')) return url;
  return url.replace(SECRET_PARAMS, '$1[redacted]').replace(SECRET_SHAPES, '[redacted]');
}

/**
 * The request id: the caller's `x-request-id` when it is a short safe token, else a new UUID.
 * Echoed on every response and attached to every log line of the request.
 */
export function requestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const id =
    typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader('x-request-id', id);
  return id;
}

/**
 * The root logger: structured JSON lines, gathered and written asynchronously in batches
 * (`batchedStdout`; what is gathered is written when the process exits), so a request never
 * waits on a write to stdout.
 *
 * Request ids: every access line and every error line of a request carries its `requestId`.
 * Lines are not tagged through a per-request context (AsyncLocalStorage): on Node 20 that costs
 * ~20 µs per request, a tenth of a trivial request (docs/performance.md); code that logs while
 * serving a request passes the id, as the exception filter does.
 */
export function createRootLogger(
  level: string,
  destination: DestinationStream = batchedStdout(),
): PinoLogger {
  return pino({ level }, destination);
}

/**
 * nestjs-pino's Nest `LoggerService` over the root logger. Its own per-request middleware
 * (pino-http and a child logger per request) is not installed: `requestLogger` does that job.
 */
export function loggerModuleParams(logger: PinoLogger): Params {
  return { pinoHttp: { logger }, useExisting: true, forRoutes: [] };
}

/** The request id `requestLogger` gave the request. */
export const REQUEST_ID = new RequestLocal<string>('requestId');
/** The error code of an error response, for its access line (set by the exception filter). */
export const ERROR_CODE = new RequestLocal<string>('errorCode');

/** The request id `requestLogger` gave the request, when it ran. */
export function requestIdOf(res: Response): string | undefined {
  return REQUEST_ID.get(res);
}

/** What the access line of a request says. */
export interface AccessEntry {
  requestId: string;
  method: string;
  url: string;
  statusCode: number;
  responseTime: number;
  merchantId?: string;
  errorCode?: string;
}

const LEVEL = { info: 30, warn: 40, error: 50 } as const;

/**
 * One access line in pino's own format: level, time, the logger's bindings (`,"pid":…,"hostname":…`
 * as pino renders them), the entry, the message. Built by hand because it is written for every
 * request: one fixed shape costs a few microseconds less than pino's generic serializer (see
 * docs/performance.md); a test holds it equal to what pino writes.
 */
export function formatAccessLine(
  level: keyof typeof LEVEL,
  time: number,
  bindings: string,
  entry: AccessEntry,
  msg: string,
): string {
  let line =
    `{"level":${LEVEL[level]},"time":${time}${bindings},` +
    `"requestId":${JSON.stringify(entry.requestId)},"method":${JSON.stringify(entry.method)},` +
    `"url":${JSON.stringify(entry.url)},"statusCode":${entry.statusCode},` +
    `"responseTime":${entry.responseTime}`;
  if (entry.merchantId !== undefined) line += `,"merchantId":${JSON.stringify(entry.merchantId)}`;
  if (entry.errorCode !== undefined) line += `,"errorCode":${JSON.stringify(entry.errorCode)}`;
  return `${line},"msg":${JSON.stringify(msg)}}\n`;
}

/** Told of a request once its response is done or the client left: its duration in seconds. */
export type RequestDoneListener = (req: Request, res: Response, seconds: number) => void;

/**
 * The first middleware of the app: assigns the request id (every response carries it, even one
 * refused while parsing) and writes one access-log line when the response is done: method, URL (an `access_token` redacted), status, time,
 * merchant and error code. Headers (the API key) are never logged. `onDone` is told of every
 * request once its response is done (or the client left), with its duration.
 */
export function requestLogger(
  logger: PinoLogger,
  onDone?: RequestDoneListener,
): (req: Request, res: Response, next: NextFunction) => void {
  const internals = logger as unknown as Record<symbol, unknown>;
  const stream = internals[pino.symbols.streamSym] as DestinationStream;
  const bindings = internals[pino.symbols.chindingsSym] as string;
  return (req, res, next) => {
    const id = requestId(req, res);
    REQUEST_ID.set(res, id);
    const started = performance.now();
    // 'close' comes once, after 'finish' or instead of it (the client went away), so `on`, not
    // `once` (whose wrapper is made and removed again for every request). One listener serves
    // the access log and `onDone` (the request metrics): one clock reading at each end.
    res.on('close', () => {
      const elapsedMs = performance.now() - started;
      const status = res.statusCode;
      const finished = res.writableFinished;
      onDone?.(req, res, elapsedMs / 1000);
      const level =
        !finished || (status >= 400 && status < 500) ? 'warn' : status >= 500 ? 'error' : 'info';
      if (LEVEL[level] < logger.levelVal) return;
      const entry: AccessEntry = {
        requestId: id,
        method: req.method,
        url: loggableUrl(req.originalUrl),
        statusCode: status,
        responseTime: Math.round(elapsedMs),
      };
      const auth = AUTH.get(res);
      if (auth) entry.merchantId = auth.merchantId;
      const errorCode = ERROR_CODE.get(res);
      if (errorCode) entry.errorCode = errorCode;
      stream.write(
        formatAccessLine(
          level,
          Date.now(),
          bindings,
          entry,
          finished ? 'request completed' : 'request aborted',
        ),
      );
    });
    next();
  };
}
