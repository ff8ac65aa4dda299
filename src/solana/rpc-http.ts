import { request } from 'undici';

/** How one HTTP exchange ended, for each JSON-RPC request it carried (`RpcRequestListener`). */
export type RpcOutcome =
  'ok' | 'rpc_error' | 'timeout' | 'http_429' | 'http_error' | 'transport_error';

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: string | number;
  method: string;
  params?: unknown;
}

export interface JsonRpcAnswer {
  jsonrpc?: '2.0';
  id: string | number | null;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/**
 * One HTTP exchange, classified: `answered` (a single answer, passed on as text when it holds no
 * error; or a batch's answers by request, `undefined` for each item the URL did not take, and
 * the text when the answers came whole and in order), `refused` (a batch, to be sent again in
 * smaller ones: at most `limit`), `throttled` (429) or `failed` (a reason to fail over).
 */
export type Exchange =
  | { kind: 'answered'; answers: (JsonRpcAnswer | undefined)[]; text?: string }
  | { kind: 'refused'; limit: number }
  | { kind: 'throttled'; retryAfterMs: number | undefined }
  | { kind: 'failed'; reason: string };

export interface Posted {
  exchange: Exchange;
  /** Each request's outcome, in the requests' order. */
  outcomes: RpcOutcome[];
  /** How long the exchange took. */
  seconds: number;
}

/** JSON-RPC errors of a batch item the server did not take as a request of its own. */
const NOT_TAKEN = new Set([-32600, -32700]);

/**
 * Posts `requests` (one as a single request, several as a batch) to `url`, aborted after
 * `timeoutMs`, and classifies the answer (`RpcTransport` decides what follows). A 429 is
 * `throttled`; a transport error, a timeout, a 5xx or a body that is not JSON-RPC `failed`; a
 * JSON-RPC error is an answer. A batch answered with a 4xx, with one object, or with an error
 * for every item is `refused`.
 */
export async function postJsonRpc(
  url: string,
  requests: JsonRpcRequest[],
  timeoutMs: number,
): Promise<Posted> {
  const single = requests.length === 1;
  const started = performance.now();
  const outcomes: RpcOutcome[] = [];
  const seconds = () => (performance.now() - started) / 1000;
  /** The exchange, each request's outcome (one for all, or one each) and the time taken. */
  const done = (exchange: Exchange, outcome: RpcOutcome | ((i: number) => RpcOutcome)): Posted => {
    requests.forEach((_, i) => outcomes.push(typeof outcome === 'function' ? outcome(i) : outcome));
    return { exchange, outcomes, seconds: seconds() };
  };
  const signal = AbortSignal.timeout(timeoutMs);
  let status: number;
  let retryAfter: string | string[] | undefined;
  let text: string;
  try {
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(single ? requests[0] : requests),
      signal,
    });
    status = res.statusCode;
    retryAfter = res.headers['retry-after'];
    text = await res.body.text();
  } catch (error) {
    const timedOut = signal.aborted;
    return done(
      {
        kind: 'failed',
        reason: timedOut ? `no answer within ${timeoutMs} ms` : transportError(error),
      },
      timedOut ? 'timeout' : 'transport_error',
    );
  }
  if (status === 429) {
    const header = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
    return done(
      { kind: 'throttled', retryAfterMs: parseRetryAfter(header, Date.now()) },
      'http_429',
    );
  }
  if (status >= 500) {
    return done({ kind: 'failed', reason: `HTTP ${status}` }, 'http_error');
  }
  const ok = status >= 200 && status < 300;

  if (single) {
    // Most answers hold no `"error"` at all: passed on without being parsed here.
    const plain = !text.includes('"error"') && text.includes('"result"');
    if (ok && plain && text.trimStart().startsWith('{')) {
      return done({ kind: 'answered', answers: [undefined], text }, 'ok');
    }
    const answer = parseJson(text);
    if (!isAnswer(answer)) {
      return done(
        { kind: 'failed', reason: `HTTP ${status} without a JSON-RPC answer` },
        'http_error',
      );
    }
    return done(
      { kind: 'answered', answers: [answer], text: ok ? text : undefined },
      answer.error ? 'rpc_error' : 'ok',
    );
  }

  // A batch. A 4xx, or one answer for all of it: refused, to be sent in halves.
  const parsed = parseJson(text);
  if (!ok || !Array.isArray(parsed)) {
    if (ok && !isAnswer(parsed)) {
      return done(
        { kind: 'failed', reason: `HTTP ${status} without a JSON-RPC answer` },
        'http_error',
      );
    }
    return done(
      { kind: 'refused', limit: Math.max(1, Math.floor(requests.length / 2)) },
      ok ? 'rpc_error' : 'http_error',
    );
  }
  const byId = new Map<unknown, JsonRpcAnswer>();
  for (const item of parsed) {
    if (isAnswer(item) && item.id !== null && !isNotTaken(item)) byId.set(item.id, item);
  }
  const answers = requests.map((r) => byId.get(r.id));
  const each = (i: number) => (answers[i] === undefined || answers[i].error ? 'rpc_error' : 'ok');
  // Not one item taken: this URL takes no batches.
  if (answers.every((a) => a === undefined)) return done({ kind: 'refused', limit: 1 }, each);
  const inOrder =
    parsed.length === requests.length &&
    parsed.every((item, i) => answers[i] !== undefined && item === answers[i]);
  return done({ kind: 'answered', answers, text: inOrder ? text : undefined }, each);
}

/**
 * `Retry-After` in milliseconds from `now`: delay-seconds or an HTTP date; undefined when absent
 * or unreadable. Never negative.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isAnswer(value: unknown): value is JsonRpcAnswer {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    ('result' in value || 'error' in value)
  );
}

function isNotTaken(answer: JsonRpcAnswer): boolean {
  return answer.error !== undefined && NOT_TAKEN.has(answer.error.code);
}

function transportError(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : error instanceof Error ? error.name : 'transport error';
}
