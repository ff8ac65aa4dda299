import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import {
  errorResponse,
  INVALID_PARAMS,
  INVALID_REQUEST,
  JsonRpcResponse,
  METHOD_NOT_FOUND,
  PARSE_ERROR,
  RpcError,
  UNAUTHORIZED,
} from './json-rpc';
import { bearerIsDevKey } from './dev-key';
import { LocalnetFaults } from './faults';
import { LocalnetChain } from './localnet-chain';
import { PubSub } from './pubsub';
import { localnetMethods, RpcHandler } from './rpc-methods';

export interface LocalnetRpcOptions {
  host?: string;
  /** The JSON-RPC port; the WebSocket listens on the next one, as solana-test-validator's does. */
  port: number;
  /**
   * The operator's dev key: the `localnet_*` control methods (faucet, clock, faults) answer only
   * requests carrying it as `Authorization: Bearer <key>`. Solana's own methods stay open.
   */
  devKey: string;
  log?: (message: string) => void;
}

export interface LocalnetRpc {
  url: string;
  wsUrl: string;
  /** This server's fault switches (`localnet_setFaults` sets the same ones). */
  faults: LocalnetFaults;
  /** Closes both servers and every connection, and drops what the faults hold. */
  close(): Promise<void>;
}

/** Requests are small (a transaction is at most 1232 bytes); this bounds batches too. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/**
 * Longer than any client's idle keep-alive (web3.js's agent, undici), so the server never closes
 * a socket a client is about to reuse: that race shows up as sporadic ECONNRESET.
 */
const KEEP_ALIVE_MS = 65_000;
/** How long requests in flight get to finish when the server closes. */
const CLOSE_GRACE_MS = 1_000;

/**
 * JSON of a response. A u64 past 2^53 (an account's `rentEpoch` of u64::MAX) is a bigint in the
 * result and is written with its exact digits, as the validator writes it: clients that parse
 * big integers exactly (`@solana/kit`) then read the real value. Only a response holding one
 * takes the slower path (plain `JSON.stringify` throws on a bigint).
 */
function stringify(response: unknown): string {
  try {
    return JSON.stringify(response);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return JSON.stringify(response, (_key, value: unknown) =>
      typeof value === 'bigint' ? `${BIGINT_MARK}${value}` : value,
    ).replace(BIGINT_PATTERN, '$1');
  }
}

const BIGINT_MARK = '\u0000bigint:';
const BIGINT_PATTERN = /"\\u0000bigint:(\d+)"/g;

const CONTROL_METHOD_PREFIX = 'localnet_';
const UNAUTHORIZED_MESSAGE =
  'Unauthorized: localnet_* methods need the dev key (Authorization: Bearer <DEV_KEY>; printed when the service or npm run localnet starts)';

/**
 * Runs one JSON-RPC request; undefined for a notification (no id), which gets no answer. A
 * control method without the dev key is refused, notification or not.
 */
function dispatch(
  methods: Map<string, RpcHandler>,
  request: unknown,
  authorized: boolean,
): JsonRpcResponse | undefined {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    return errorResponse(null, new RpcError(INVALID_REQUEST, 'Invalid request'));
  }
  const { id, method, params, jsonrpc } = request as Record<string, unknown>;
  if (jsonrpc !== '2.0' || typeof method !== 'string') {
    return errorResponse(id ?? null, new RpcError(INVALID_REQUEST, 'Invalid request'));
  }
  if (method.startsWith(CONTROL_METHOD_PREFIX) && !authorized) {
    return errorResponse(id ?? null, new RpcError(UNAUTHORIZED, UNAUTHORIZED_MESSAGE));
  }
  if (id === undefined) return undefined;
  const handler = methods.get(method);
  if (!handler) return errorResponse(id, new RpcError(METHOD_NOT_FOUND, 'Method not found'));
  if (params !== undefined && !Array.isArray(params)) {
    return errorResponse(id, new RpcError(INVALID_PARAMS, 'Invalid params: expected an array'));
  }
  try {
    return { jsonrpc: '2.0', id, result: handler(params ?? []) };
  } catch (error) {
    return errorResponse(id, error);
  }
}

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: string, type = 'application/json'): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** What some paid providers answer to any batch: one error object, not an array. */
const BATCH_REFUSED = JSON.stringify(
  errorResponse(null, new RpcError(INVALID_REQUEST, 'Batch requests are not supported')),
);

/** What a rate-limited request gets with its HTTP 429, as the public RPC words it. */
const TOO_MANY_REQUESTS = JSON.stringify({
  jsonrpc: '2.0',
  id: null,
  error: { code: 429, message: 'Too many requests for a specific RPC call' },
});

/** A single `localnet_*` request: never rate-limited, so the switches can always be turned off. */
function isControlRequest(request: unknown): boolean {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) return false;
  const method = (request as { method?: unknown }).method;
  return typeof method === 'string' && method.startsWith(CONTROL_METHOD_PREFIX);
}

/** `application/json`, with no parameter but a UTF-8 charset (what every Solana client sends). */
function isJson(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const [type, ...parameters] = contentType.split(';').map((part) => part.trim().toLowerCase());
  return (
    type === 'application/json' &&
    parameters.every((parameter) => parameter === '' || /^charset="?utf-8"?$/.test(parameter))
  );
}

async function handleHttp(
  methods: Map<string, RpcHandler>,
  faults: LocalnetFaults,
  devKey: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (req.method === 'GET' && req.url === '/health') return send(res, 200, 'ok', 'text/plain');
  if (req.method !== 'POST') return send(res, 405, 'Method Not Allowed', 'text/plain');
  // A web page the developer opens must not drive the chain: browsers send `Origin` on every
  // cross-origin POST (and this server sends no CORS headers), other clients do not.
  if (req.headers.origin !== undefined) {
    req.resume();
    return send(
      res,
      403,
      'Forbidden: browser requests (with an Origin header) are refused',
      'text/plain',
    );
  }
  // A simple cross-origin request (text/plain, form types) needs no preflight: only JSON is read.
  if (!isJson(req.headers['content-type'])) {
    req.resume();
    return send(
      res,
      415,
      'Unsupported Media Type: send Content-Type: application/json',
      'text/plain',
    );
  }
  const authorized = bearerIsDevKey(req.headers.authorization, devKey);
  const body = await readBody(req);
  if (!body) return send(res, 413, 'Payload Too Large', 'text/plain');
  let request: unknown;
  try {
    request = JSON.parse(body.toString('utf8'));
  } catch {
    return send(
      res,
      200,
      JSON.stringify(errorResponse(null, new RpcError(PARSE_ERROR, 'Parse error'))),
    );
  }
  if (!isControlRequest(request)) {
    const throttled = faults.throttle(Array.isArray(request) ? Math.max(1, request.length) : 1);
    if (throttled) {
      res.writeHead(429, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(TOO_MANY_REQUESTS),
        ...(throttled.retryAfter !== null ? { 'retry-after': String(throttled.retryAfter) } : {}),
      });
      res.end(TOO_MANY_REQUESTS);
      return;
    }
  }
  if (Array.isArray(request)) {
    if (faults.batchesRefused) return send(res, 200, BATCH_REFUSED);
    if (faults.batchTooLarge(request.length)) {
      return send(
        res,
        413,
        JSON.stringify(
          errorResponse(
            null,
            new RpcError(
              INVALID_REQUEST,
              `Batch of ${request.length} requests exceeds the limit of ${faults.state().maxBatch}`,
            ),
          ),
        ),
      );
    }
    if (request.length === 0) {
      return send(
        res,
        200,
        JSON.stringify(errorResponse(null, new RpcError(INVALID_REQUEST, 'Invalid request'))),
      );
    }
    const responses = request
      .map((entry) => dispatch(methods, entry, authorized))
      .filter((response): response is JsonRpcResponse => response !== undefined);
    return send(res, 200, stringify(responses));
  }
  const response = dispatch(methods, request, authorized);
  if (!response) return send(res, 204, '');
  const refused = response.error?.code === UNAUTHORIZED;
  send(res, refused ? 401 : 200, stringify(response));
}

/**
 * Stops the HTTP server without cutting requests in flight: a client still confirming (web3.js
 * polls once more after a confirmation) gets its answer, and idle keep-alive sockets are closed
 * as they become idle. Whatever is still open after the grace period is cut.
 */
function closeHttp(http: Server): Promise<void> {
  return new Promise((resolve) => {
    const started = Date.now();
    const sweep = setInterval(() => {
      if (Date.now() - started > CLOSE_GRACE_MS) http.closeAllConnections();
      else http.closeIdleConnections();
    }, 20);
    http.close(() => {
      clearInterval(sweep);
      resolve();
    });
    http.closeIdleConnections();
  });
}

/** Resolves once `server` listens, rejects if it fails to (a port in use). */
function listening(server: Server | WebSocketServer): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.once('listening', () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/**
 * Serves a localnet chain over Solana's JSON-RPC (HTTP, also batches) on `port` and its PubSub
 * WebSocket on `port + 1`, enough for web3.js v1 `Connection`, spl-token and Solana Pay.
 */
export async function startLocalnetRpc(
  chain: LocalnetChain,
  options: LocalnetRpcOptions,
): Promise<LocalnetRpc> {
  const host = options.host ?? '127.0.0.1';
  const log = options.log ?? (() => undefined);
  const faults = new LocalnetFaults(chain, log);
  const methods = localnetMethods(chain, faults);
  const http = createServer((req, res) => {
    handleHttp(methods, faults, options.devKey, req, res).catch(() => {
      if (!res.headersSent) send(res, 500, 'Internal Server Error', 'text/plain');
      else res.destroy();
    });
  });
  http.keepAliveTimeout = KEEP_ALIVE_MS;
  http.headersTimeout = KEEP_ALIVE_MS + 1_000;
  http.listen(options.port, host);
  await listening(http);
  // The actual port, should the caller have asked for any free one (0).
  const port = (http.address() as AddressInfo).port;

  const pubsub = new PubSub(chain);
  let ws: WebSocketServer;
  try {
    ws = new WebSocketServer({ host, port: port + 1 });
    await listening(ws);
  } catch (error) {
    faults.close();
    await pubsub.close();
    await new Promise<void>((resolve) => http.close(() => resolve()));
    throw error;
  }
  ws.on('connection', (socket) => pubsub.attach(socket));
  // Past start-up, a server error (accept failing under EMFILE, say) is reported, not fatal.
  const report = (error: Error) => log(`Localnet RPC: ${error.message}`);
  http.on('error', report);
  ws.on('error', report);

  const urlHost = host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${port}`,
    wsUrl: `ws://${urlHost}:${port + 1}`,
    faults,
    close: () => {
      closing ??= (async () => {
        faults.close();
        await Promise.all([
          pubsub.close(),
          new Promise<void>((resolve) => ws.close(() => resolve())),
          closeHttp(http),
        ]);
      })();
      return closing;
    },
  };
}
