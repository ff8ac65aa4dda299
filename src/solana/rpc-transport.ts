import { Exchange, JsonRpcAnswer, JsonRpcRequest, postJsonRpc, RpcOutcome } from './rpc-http';
import { TokenBucket } from './token-bucket';

export type { JsonRpcAnswer, JsonRpcRequest, RpcOutcome } from './rpc-http';
export { parseRetryAfter } from './rpc-http';

/**
 * Told of every JSON-RPC request sent (each request of a batch on its own): its method, how its
 * exchange ended, how long the exchange took (seconds) and which URL served it (the index in
 * `SOLANA_RPC_URL`, from 0). A request that fails over is reported once per URL it was sent to.
 */
export type RpcRequestListener = (
  method: string,
  outcome: RpcOutcome,
  seconds: number,
  url: number,
) => void;

export interface RpcTransportOptions {
  /** The RPC URLs, in order of preference: the first healthy one serves. */
  urls: string[];
  /** Longest wait for one HTTP exchange with one URL (connect, send, answer). Default 10 s. */
  timeoutMs?: number;
  /** Requests a second per URL (a batch counts as its requests); 0 or unset: no budget. */
  requestsPerSecond?: number;
  /** Most requests one JSON-RPC batch carries; a URL that refuses less learns its own limit. */
  maxBatch?: number;
  onRequest?: RpcRequestListener;
  now?: () => number;
}

/** No URL could answer: each was down, timed out, failed or kept rate-limiting. */
export class RpcUnavailableError extends Error {
  constructor(readonly failures: string[]) {
    super(
      `Solana RPC unavailable: ${failures.length ? failures.join('; ') : 'no URL could be tried'}`,
    );
    this.name = 'RpcUnavailableError';
  }
}

/** The node answered the request with a JSON-RPC error. */
export class RpcAnswerError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcAnswerError';
  }
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_BATCH = 100;
/** A `Retry-After` longer than this is taken as this: a URL is never parked for an hour. */
export const MAX_RETRY_AFTER_MS = 60_000;
/** 429 without `Retry-After`: 1 s, doubled per 429 in a row, at most this. */
const MAX_THROTTLE_BACKOFF_MS = 30_000;
/** A failed URL rests 1 s, doubled per failure in a row, at most this, before it is probed. */
const MAX_FAILURE_BACKOFF_MS = 60_000;
/** `getHealth`: the node is behind (or otherwise unhealthy). */
const NODE_UNHEALTHY = -32005;

interface Endpoint {
  index: number;
  url: string;
  budget?: TokenBucket;
  /** Most requests per batch this URL takes (learned when it refuses a batch). */
  batchLimit: number;
  /** Failures in a row (transport error, timeout, 5xx, not JSON-RPC); 0: healthy. */
  failures: number;
  /** Until then a failed URL is only used when no healthy one is left; then it is probed. */
  restUntil: number;
  probing: boolean;
  /** 429s in a row. */
  throttles: number;
  /** A rate-limited URL gets nothing before then. */
  coolUntil: number;
}

/** What a call gets back: the answers, and the response text when it can be passed on as is. */
interface Reply {
  answers?: JsonRpcAnswer[];
  text?: string;
}

/**
 * The one JSON-RPC transport of the service (docs/solana.md, "RPC providers"): the web3.js
 * `Connection` (through `fetch`) and the service's own calls (`call`, `request`, `batch`) all go
 * through it.
 *
 * - **Failover.** A request goes to the first healthy URL. A transport error, a timeout, an HTTP
 *   5xx or a body that is not JSON-RPC sends it on to the next URL, and the URL rests (1 s,
 *   doubling, at most 60 s); after its rest a background `getHealth` probes it, and it serves
 *   again once the probe answers. A JSON-RPC error is an answer, never a reason to fail over.
 *   Sending a request again elsewhere sends the very same bytes: a `sendTransaction` carries the
 *   same signed transaction (one signature: it lands once at most), nothing is signed again.
 * - **429.** The URL cools down for its `Retry-After` (seconds or an HTTP date, at most 60 s) or,
 *   without one, 1 s doubling per 429 in a row (at most 30 s); requests fail over meanwhile, and
 *   when every URL is cooling they wait for the first one back (for up to one timeout).
 * - **Budget.** With `requestsPerSecond`, each URL has a token bucket; requests wait for budget,
 *   they are not refused (a batch counts as its number of requests).
 * - **Batches.** At most `maxBatch` requests per batch. A URL that refuses a batch (HTTP 4xx,
 *   one error object for the whole batch, an error for each item, items left unanswered) gets
 *   it again in halves (or singly) and keeps that limit; answers are matched by id and handed
 *   back in the requests' order.
 * - **Timeouts.** Every exchange is aborted after `timeoutMs`.
 */
export class RpcTransport {
  private readonly endpoints: Endpoint[];
  private readonly listeners = new Set<RpcRequestListener>();
  private readonly timeoutMs: number;
  private readonly now: () => number;
  private nextId = 0;

  constructor(options: RpcTransportOptions) {
    if (options.urls.length === 0) throw new RangeError('at least one RPC URL is needed');
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.now = options.now ?? Date.now;
    const rate = options.requestsPerSecond ?? 0;
    const maxBatch = Math.max(1, options.maxBatch ?? DEFAULT_MAX_BATCH);
    this.endpoints = options.urls.map((url, index) => ({
      index,
      url,
      budget: rate > 0 ? new TokenBucket(rate, Math.max(1, rate), this.now) : undefined,
      batchLimit: maxBatch,
      failures: 0,
      restUntil: 0,
      probing: false,
      throttles: 0,
      coolUntil: 0,
    }));
    if (options.onRequest) this.listeners.add(options.onRequest);
  }

  /** The first URL: what a web3.js `Connection` is given as its endpoint. */
  get endpoint(): string {
    return this.endpoints[0].url;
  }

  /** Adds a listener of every request (metrics); returns its removal. */
  observe(listener: RpcRequestListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The batch limit a URL has shown (tests, diagnostics). */
  batchLimit(url: number): number {
    return this.endpoints[url].batchLimit;
  }

  /**
   * One request's result.
   * @throws RpcAnswerError when the node answers with a JSON-RPC error
   * @throws RpcUnavailableError when no URL answers
   */
  async call<T>(method: string, params: unknown[] = []): Promise<T> {
    const answer = await this.request(method, params);
    if (answer.error) {
      throw new RpcAnswerError(answer.error.code, answer.error.message, answer.error.data);
    }
    return answer.result as T;
  }

  /** One request's answer, a JSON-RPC error included. @throws RpcUnavailableError */
  async request(method: string, params: unknown[] = []): Promise<JsonRpcAnswer> {
    const reply = await this.exchange([{ jsonrpc: '2.0', id: ++this.nextId, method, params }]);
    return answersOf(reply, false)[0];
  }

  /** The answers of several requests, in their order (one batch where the URL takes one). */
  async batch(calls: { method: string; params: unknown[] }[]): Promise<JsonRpcAnswer[]> {
    if (calls.length === 0) return [];
    const requests = calls.map((c): JsonRpcRequest => ({
      jsonrpc: '2.0',
      id: ++this.nextId,
      ...c,
    }));
    return answersOf(await this.exchange(requests), requests.length > 1);
  }

  /**
   * `fetch` as a web3.js `Connection` calls it (its `fetch` option): the JSON-RPC body it posts
   * goes through the transport, whatever URL it names. When no URL answers it rejects, as fetch
   * does on a network error; it never answers 429 (web3.js would sleep and retry on its own).
   */
  readonly fetch = async (
    _input: Parameters<typeof fetch>[0],
    init?: Parameters<typeof fetch>[1],
  ): Promise<Response> => {
    const body = typeof init?.body === 'string' ? init.body : '';
    const parsed = JSON.parse(body) as JsonRpcRequest | JsonRpcRequest[];
    const batch = Array.isArray(parsed);
    const requests = batch ? parsed : [parsed];
    const text =
      requests.length === 0 ? '[]' : textOf(await this.exchange(requests), batch, requests.length);
    return new Response(text, { status: 200, headers: { 'content-type': 'application/json' } });
  };

  /** Sends the requests to the URLs until one answers them all. */
  private async exchange(requests: JsonRpcRequest[]): Promise<Reply> {
    const failures: string[] = [];
    const tried = new Set<number>();
    // Waiting for a rate-limited URL to cool down counts against one timeout.
    const waitUntil = this.now() + this.timeoutMs;
    for (;;) {
      const endpoint = await this.pick(tried, waitUntil, failures);
      if (requests.length > endpoint.batchLimit) {
        return this.inChunks(requests, endpoint.batchLimit);
      }
      await endpoint.budget?.take(requests.length);
      const result = await this.post(endpoint, requests);
      switch (result.kind) {
        case 'answered':
          this.healthy(endpoint);
          return this.complete(endpoint, requests, result);
        case 'refused':
          endpoint.batchLimit = Math.min(endpoint.batchLimit, result.limit);
          break;
        case 'throttled':
          this.throttled(endpoint, result.retryAfterMs);
          failures.push(`URL ${endpoint.index + 1}: HTTP 429`);
          break;
        case 'failed':
          this.failed(endpoint);
          tried.add(endpoint.index);
          failures.push(`URL ${endpoint.index + 1}: ${result.reason}`);
          break;
      }
    }
  }

  /** Chunks of at most `limit` requests, each sent (and failed over) on its own. */
  private async inChunks(requests: JsonRpcRequest[], limit: number): Promise<Reply> {
    const chunks: JsonRpcRequest[][] = [];
    for (let i = 0; i < requests.length; i += limit) chunks.push(requests.slice(i, i + limit));
    const replies = await Promise.all(chunks.map((chunk) => this.exchange(chunk)));
    return { answers: replies.flatMap((reply, i) => answersOf(reply, chunks[i].length > 1)) };
  }

  /**
   * A batch's answers in the requests' order. Items the URL did not take (no answer of their
   * own, or an "invalid request" for one) are sent again, and the URL's limit is lowered to what
   * it did take.
   */
  private async complete(
    endpoint: Endpoint,
    requests: JsonRpcRequest[],
    result: Extract<Exchange, { kind: 'answered' }>,
  ): Promise<Reply> {
    if (requests.length === 1) {
      return result.text !== undefined ? { text: result.text } : { answers: [result.answers[0]!] };
    }
    const missing = requests.filter((_, i) => result.answers[i] === undefined);
    if (missing.length === 0) {
      return result.text !== undefined
        ? { text: result.text }
        : { answers: result.answers as JsonRpcAnswer[] };
    }
    endpoint.batchLimit = Math.max(
      1,
      Math.min(endpoint.batchLimit, requests.length - missing.length),
    );
    const again = answersOf(await this.exchange(missing), missing.length > 1);
    let next = 0;
    return { answers: result.answers.map((answer) => answer ?? again[next++]) };
  }

  /**
   * The URL for the next try: the first healthy one not tried yet (a rested failed one is probed
   * in the background meanwhile, not used), else a failed one (soonest rested first), else the
   * first rate-limited one to cool down, waited for if that is before `waitUntil`.
   */
  private async pick(tried: Set<number>, waitUntil: number, failures: string[]): Promise<Endpoint> {
    for (;;) {
      const now = this.now();
      const open = this.endpoints.filter((e) => !tried.has(e.index));
      for (const e of open) {
        if (e.coolUntil > now) continue;
        if (e.failures === 0) return e;
        if (e.restUntil <= now) this.probe(e);
      }
      const failed = open
        .filter((e) => e.coolUntil <= now)
        .sort((a, b) => a.restUntil - b.restUntil || a.index - b.index);
      if (failed.length > 0) return failed[0];
      const cooling = open.sort((a, b) => a.coolUntil - b.coolUntil || a.index - b.index);
      if (cooling.length === 0 || cooling[0].coolUntil > waitUntil) {
        throw new RpcUnavailableError(failures);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, cooling[0].coolUntil - now)));
    }
  }

  /** A rested failed URL is asked `getHealth` in the background; it serves again once it answers. */
  private probe(endpoint: Endpoint): void {
    if (endpoint.probing) return;
    endpoint.probing = true;
    const health: JsonRpcRequest = { jsonrpc: '2.0', id: ++this.nextId, method: 'getHealth' };
    void (async () => {
      try {
        await endpoint.budget?.take(1);
        const result = await this.post(endpoint, [health]);
        if (result.kind === 'throttled') {
          this.healthy(endpoint); // alive, and busy
          this.throttled(endpoint, result.retryAfterMs);
        } else if (
          result.kind === 'answered' &&
          // Without an answer object it was passed on unparsed: a plain result.
          result.answers[0]?.error?.code !== NODE_UNHEALTHY
        ) {
          this.healthy(endpoint);
        } else {
          this.failed(endpoint);
        }
      } finally {
        endpoint.probing = false;
      }
    })();
  }

  private healthy(endpoint: Endpoint): void {
    endpoint.failures = 0;
    endpoint.restUntil = 0;
    endpoint.throttles = 0;
  }

  private failed(endpoint: Endpoint): void {
    endpoint.failures++;
    endpoint.restUntil = this.now() + backoff(endpoint.failures, MAX_FAILURE_BACKOFF_MS);
  }

  private throttled(endpoint: Endpoint, retryAfterMs: number | undefined): void {
    endpoint.throttles++;
    const wait =
      retryAfterMs === undefined
        ? backoff(endpoint.throttles, MAX_THROTTLE_BACKOFF_MS)
        : Math.min(retryAfterMs, MAX_RETRY_AFTER_MS);
    endpoint.coolUntil = Math.max(endpoint.coolUntil, this.now() + wait);
  }

  /** One HTTP exchange with one URL; every request in it is reported. */
  private async post(endpoint: Endpoint, requests: JsonRpcRequest[]): Promise<Exchange> {
    const { exchange, outcomes, seconds } = await postJsonRpc(
      endpoint.url,
      requests,
      this.timeoutMs,
    );
    requests.forEach((r, i) => this.report(r.method, outcomes[i], seconds, endpoint.index));
    return exchange;
  }

  private report(method: string, outcome: RpcOutcome, seconds: number, url: number): void {
    for (const listener of this.listeners) {
      try {
        listener(method, outcome, seconds, url);
      } catch {
        // A listener's failure is its own (metrics); the request goes on.
      }
    }
  }
}

function backoff(times: number, max: number): number {
  return Math.min(max, 1000 * 2 ** Math.min(times - 1, 20));
}

function answersOf(reply: Reply, batch: boolean): JsonRpcAnswer[] {
  if (reply.answers) return reply.answers;
  const parsed = JSON.parse(reply.text!) as JsonRpcAnswer | JsonRpcAnswer[];
  return batch ? (parsed as JsonRpcAnswer[]) : [parsed as JsonRpcAnswer];
}

/** The response text for a body of `count` requests (`batch`: it was an array, even of one). */
function textOf(reply: Reply, batch: boolean, count: number): string {
  if (reply.text !== undefined) {
    // A batch of one went as a single request: its answer goes back in an array.
    return batch && count === 1 ? `[${reply.text}]` : reply.text;
  }
  return JSON.stringify(batch ? reply.answers : reply.answers![0]);
}
