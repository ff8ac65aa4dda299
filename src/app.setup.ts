import { ErrorCode } from './common/errors/error-codes';
import { ExpressAdapter, NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import express, { type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import { Logger } from 'nestjs-pino';
import type { Logger as PinoLogger } from 'pino';
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { UnsupportedMediaTypeError } from './common/errors/domain-error';
import { INVALID_UTF8 } from './common/filters/all-exceptions.filter';
import { requestLogger, ROOT_LOGGER } from './common/logging';
import { buildOpenApiDocument } from './common/swagger/openapi-document';
import { AppConfig } from './config/app-config';
import { httpMetrics } from './metrics/http-metrics';
import { Metrics } from './metrics/metrics';

/**
 * Everything applied to the HTTP app outside the module graph: request id and access log, the
 * request metrics, JSON body parsing with the size limit and content-type check, Swagger. Shared by the server, the
 * tests and the tools.
 */
export function configureApp(app: NestExpressApplication, config: AppConfig): void {
  app.useLogger(app.get(Logger));
  const logger = app.get<PinoLogger>(ROOT_LOGGER);
  app.disable('x-powered-by');
  // JSON API responses are not cached by validators; hashing every body for an ETag costs CPU.
  app.set('etag', false);
  // The client's address, for rate limits and the failed-authentication limit (D17).
  app.set('trust proxy', config.trustProxy);
  // First of all: every response, even one refused while parsing, carries its request id, and
  // every request gets its access-log line and is counted in the metrics.
  app.use(requestLogger(logger, httpMetrics(app.get(Metrics))));
  app.use(securityHeaders());
  app.use(transactionRequestCors());
  app.use(jsonBody(config));
  answerMalformedRequests(app.getHttpServer(), logger);
  serveDocs(app);
}

/** Solana Pay transaction-request endpoints: a wallet fetches them from any origin. */
const TRANSACTION_REQUEST = /^\/api\/checkout\/(?:invoices|plans)\/[^/]+\/transaction\/?$/;

/**
 * CORS on the Solana Pay transaction-request endpoints only (the public, unauthenticated
 * `GET`/`POST /api/checkout/{invoices,plans}/:id/transaction`): a browser-based wallet on another
 * origin must read them, as the Solana Pay specification asks. `Access-Control-Allow-Origin: *`
 * without credentials (they take none), and preflights answered 204. Every other route sends no
 * CORS header: merchant keys are never for browsers of other origins.
 */
function transactionRequestCors(): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    // A prefix check first: every other request passes without a URL parse or a regex.
    if (!req.url.startsWith('/api/checkout/') || !TRANSACTION_REQUEST.test(req.path)) {
      return next();
    }
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('cross-origin-resource-policy', 'cross-origin');
    if (req.method !== 'OPTIONS') return next();
    res.setHeader('access-control-allow-methods', 'GET, POST, OPTIONS');
    res.setHeader('access-control-allow-headers', 'Content-Type, Accept');
    res.setHeader('access-control-max-age', '86400');
    res.status(204).end();
  };
}

/**
 * The usual security headers on every response (helmet), with a Content-Security-Policy that
 * allows only the service's own scripts, styles, images and requests: no inline script or style
 * (`unsafe-inline`), no third party, no framing. Swagger UI (`/docs`) alone keeps inline styles,
 * which it sets in its markup.
 *
 * Helmet decides the same headers for every request (no nonce, nothing read from the request),
 * so it runs once here and each response gets the list it wrote: running its dozen middlewares
 * per request cost the trivial route about a tenth of its CPU (docs/performance.md).
 *
 * The JSON API (`/api/`, `/health`, `/x402/`) gets the headers that mean something for a
 * response that is not a page (`API_HEADERS`: no sniffing, no framing, no cross-origin read, no
 * referrer, HTTPS only, and the same CSP), with helmet's values; the headers that only a
 * browsing context reads (COOP, Origin-Agent-Cluster, DNS prefetch, the IE and Flash ones) are
 * left to the pages, as the OWASP REST cheat sheet lists them. Each header is a cost on every
 * request of the API (docs/performance.md). Any other path, in any case, gets helmet's whole
 * set: the prefixes are compared as written.
 */
function securityHeaders(): (req: Request, res: Response, next: NextFunction) => void {
  const strict = headersOf(helmet(HELMET_OPTIONS.strict));
  const docs = headersOf(helmet(HELMET_OPTIONS.docs));
  const api = strict.filter(([name]) => API_HEADERS.has(name.toLowerCase()));
  return (req, res, next) => {
    const url = req.url;
    const headers = isApiPath(url) ? api : url.startsWith('/docs') ? docs : strict;
    for (let i = 0; i < headers.length; i++) res.setHeader(headers[i][0], headers[i][1]);
    next();
  };
}

/** Helmet's headers a JSON API response carries (see `securityHeaders`). */
export const API_HEADERS: ReadonlySet<string> = new Set([
  'content-security-policy',
  'cross-origin-resource-policy',
  'referrer-policy',
  'strict-transport-security',
  'x-content-type-options',
  'x-frame-options',
]);

/** The JSON API's paths, as written (a page is never under them). */
export function isApiPath(url: string): boolean {
  return url.startsWith('/api/') || url.startsWith('/health') || url.startsWith('/x402/');
}

const CSP_DIRECTIVES = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  fontSrc: ["'self'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
  frameAncestors: ["'none'"],
};

/** Helmet's options: every response (`strict`), and Swagger UI's pages (`docs`). */
export const HELMET_OPTIONS = {
  strict: {
    contentSecurityPolicy: { useDefaults: false, directives: CSP_DIRECTIVES },
    frameguard: { action: 'deny' as const },
  },
  docs: {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: { ...CSP_DIRECTIVES, styleSrc: ["'self'", "'unsafe-inline'"] },
    },
  },
};

/** The headers a helmet middleware sets, read by running it once on a recording response. */
export function headersOf(
  middleware: (req: Request, res: Response, next: (error?: unknown) => void) => void,
): readonly (readonly [string, string])[] {
  const headers = new Map<string, string>();
  const recorder = {
    setHeader: (name: string, value: string | number | readonly string[]) => {
      headers.set(name, Array.isArray(value) ? value.join(', ') : String(value));
    },
    removeHeader: (name: string) => headers.delete(name),
  };
  let failed: unknown;
  middleware({} as Request, recorder as unknown as Response, (error?: unknown) => {
    failed = error;
  });
  if (failed) throw failed instanceof Error ? failed : new Error('helmet refused its options');
  return [...headers];
}

/**
 * Swagger UI and the OpenAPI document (`/docs`, `/docs-json`) on an express sub-application
 * reached through one prefix check: mounted on the app itself, their ten routes would be matched
 * against every API request.
 */
function serveDocs(app: NestExpressApplication): void {
  const document = buildOpenApiDocument(app);
  const adapter = app.getHttpAdapter();
  if (!(adapter instanceof ExpressAdapter)) throw new Error('the express adapter is expected');
  const main = adapter.getInstance<express.Express>();
  const docs = express();
  adapter.setInstance(docs);
  try {
    SwaggerModule.setup('docs', app, document, {
      jsonDocumentUrl: 'docs-json',
      customSiteTitle: 'Stablecoin Billing API',
      // Not kept in the browser: Swagger UI shares its origin with the public pages.
      swaggerOptions: { persistAuthorization: false },
    });
  } finally {
    adapter.setInstance(main);
  }
  main.use((req: Request, res: Response, next: NextFunction) =>
    req.url.startsWith('/docs') ? docs(req, res, next) : next(),
  );
}

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/** The body limit of `POST /api/usage-events`: 1,000 events of the longest fields fit. */
const USAGE_BATCH_BODY_BYTES = 512 * 1024;

/**
 * The request body, in one middleware: none is read for GET and HEAD; a POST, PUT or PATCH body
 * that is not JSON is refused with 415, and so is a compressed one (the body limit holds for
 * what arrives, and inflating it would let a small request expand past it); JSON is parsed within
 * `MAX_BODY_BYTES`, as UTF-8, without `__proto__`-like keys; a POST with no body at all is `{}`
 * (e.g. `POST /api/settings/api-keys`).
 */
function jsonBody(config: AppConfig): (req: Request, res: Response, next: NextFunction) => void {
  const parser = (limit: number, reviver?: typeof refuseProtoKeys) =>
    express.json({
      limit,
      // Any JSON value parses; the validation pipe then says "the body must be a JSON object"
      // for `null`, `"hello"` or `[]` (a strict parser would answer with a raw JSON syntax
      // message).
      strict: false,
      reviver,
      verify: requireUtf8,
    });
  const parse = parser(config.MAX_BODY_BYTES, refuseProtoKeys);
  // A batch of 1,000 usage events is larger than any other request (docs/usage.md). Its body
  // never reaches a DTO: the global pipe's walk refuses a forbidden key, and the batch's own
  // check every key it does not declare, so the reviver (3-4x the parse's time) is left out.
  const parseBatch = parser(Math.max(config.MAX_BODY_BYTES, USAGE_BATCH_BODY_BYTES));
  return (req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    const refusal = unsupportedBody(req);
    if (refusal) return next(refusal);
    const read = req.path === '/api/usage-events' ? parseBatch : parse;
    read(req, res, (error?: unknown) => {
      if (error) return next(error);
      if (req.body === undefined && METHODS_WITH_BODY.has(req.method)) req.body = {};
      next();
    });
  };
}

/** Why a request's body cannot be read as JSON, or undefined when it can (or has none). */
function unsupportedBody(req: Request): UnsupportedMediaTypeError | undefined {
  const hasBody =
    req.headers['transfer-encoding'] !== undefined ||
    (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
  if (!METHODS_WITH_BODY.has(req.method) || !hasBody) return undefined;
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity') {
    return new UnsupportedMediaTypeError(
      `Content-Encoding ${JSON.stringify(encoding)} is not supported: send the JSON body uncompressed`,
    );
  }
  if (!req.is('application/json')) return new UnsupportedMediaTypeError();
  // JSON is UTF-8 (RFC 8259): another charset would be decoded by the parser and its error
  // message would quote the decoded text.
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1];
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    return new UnsupportedMediaTypeError('Request bodies must be UTF-8 JSON (charset=utf-8)');
  }
  return undefined;
}

/** Bytes that are not UTF-8 would be stored as U+FFFD without a word: refuse them. */
function requireUtf8(_req: Request, _res: Response, body: Buffer): void {
  if (!isUtf8(body)) {
    // The filter maps this body-parser error type to a 400 VALIDATION_ERROR.
    throw Object.assign(new Error('The request body is not valid UTF-8'), {
      status: 400,
      type: INVALID_UTF8,
    });
  }
}

/** What Node's own refusals become: status line and D1 error. */
function clientErrorAnswer(nodeCode: string | undefined): {
  status: number;
  reason: string;
  code: ErrorCode;
  message: string;
} {
  if (nodeCode === 'HPE_HEADER_OVERFLOW') {
    return {
      status: 431,
      reason: 'Request Header Fields Too Large',
      code: ErrorCode.VALIDATION_ERROR,
      message: 'Request headers are too large',
    };
  }
  if (nodeCode === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return {
      status: 408,
      reason: 'Request Timeout',
      code: ErrorCode.REQUEST_TIMEOUT,
      message: 'The request did not arrive whole in time (HTTP_REQUEST_TIMEOUT_MS)',
    };
  }
  return {
    status: 400,
    reason: 'Bad Request',
    code: ErrorCode.VALIDATION_ERROR,
    message: 'Malformed HTTP request',
  };
}

/**
 * Node answers a request it cannot parse (malformed, 400), whose headers are too large (431) or
 * that did not arrive whole within `HTTP_REQUEST_TIMEOUT_MS` (408) on its own, before express:
 * give those a D1 body and a request id too, and a log line.
 */
function answerMalformedRequests(server: Server, logger: PinoLogger): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const { status, reason, code, message } = clientErrorAnswer(error.code);
    const id = randomUUID();
    const body = JSON.stringify({ error: { code, message, requestId: id } });
    logger.warn(
      { requestId: id, status, reason: error.code },
      'HTTP request refused by the server',
    );
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\n` +
        `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: ${id}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * `__proto__` in a JSON body would be swallowed silently when the DTO is built (it sets the
 * prototype instead of a field), escaping the unknown-field check: refuse it while parsing.
 */
function refuseProtoKeys(key: string, value: unknown): unknown {
  if (FORBIDDEN_KEYS.has(key)) throw new Error(`Forbidden JSON key: ${key}`);
  return value;
}
