import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { lookup as dnsLookup, LookupAddress, LookupOptions } from 'node:dns';
import { EventEmitter } from 'node:events';
import { Agent, request } from 'undici';
import { AppConfig } from '../config/app-config';
import { isRefusedTarget, webhookUrlProblem } from './webhook-url';

/** What one POST to a merchant endpoint came to. */
export interface SendResult {
  /** The HTTP status, when a response arrived. */
  status?: number;
  /** Why no response arrived (timeout, refused, blocked address), or a short reason for a non-2xx. */
  error?: string;
  /** The `Retry-After` header of a 429 or 503. */
  retryAfter?: string;
}

/** The resolver behind the SSRF check: `dns.lookup` (a test can provide a fixed table). */
export const DNS_LOOKUP = Symbol('DNS_LOOKUP');

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A DNS lookup that refuses names resolving to loopback, private, link-local (cloud metadata) or
 * other non-public addresses. Used as the socket's own lookup, so the address checked is the
 * address connected to: a DNS answer cannot change between the check and the connection.
 */
export function checkedTargetLookup(
  resolve: typeof dnsLookup = dnsLookup,
  localnet = false,
): (hostname: string, options: LookupOptions, callback: LookupCallback) => void {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, []);
      const blocked = addresses.find((a) => isRefusedTarget(a.address, localnet));
      if (blocked || addresses.length === 0) {
        const refused: NodeJS.ErrnoException = new Error(
          `${hostname} resolves to a non-public address (${blocked?.address ?? 'none'}); refused`,
        );
        refused.code = 'EBLOCKED';
        return callback(refused, []);
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/**
 * One POST's deadline, as the signal undici takes (an `EventEmitter` with `aborted` and `reason`
 * is one): on time out it aborts the request, connecting, waiting or reading the body, with a
 * `TimeoutError`. `AbortSignal.timeout` did the same at ~20 µs of CPU per POST (an
 * `AbortController`, a weakly held timer and a finalization-registry entry each), a third of
 * what undici itself spends on a request; this is one timer (not keeping the process alive).
 */
class Deadline extends EventEmitter {
  aborted = false;
  reason?: Error;
  private readonly timer: NodeJS.Timeout;

  constructor(ms: number) {
    super();
    this.timer = setTimeout(() => {
      this.aborted = true;
      this.reason = Object.assign(new Error(`Timed out after ${ms} ms`), { name: 'TimeoutError' });
      this.emit('abort');
    }, ms).unref();
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}

/** URLs checked by `webhookUrlProblem` at most, before the memo starts over. */
const CHECKED_URLS = 1000;

/**
 * POSTs webhook bodies over a keep-alive undici agent. Redirects are not followed (a 3xx is a
 * failed attempt). Targets follow webhook-url.ts's one rule (public only off localnet; never
 * link-local or metadata anywhere): IP literals are checked before connecting and host names
 * after resolution.
 */
@Injectable()
export class WebhookSender implements OnApplicationShutdown {
  private readonly agent: Agent;
  private readonly localnet: boolean;
  /**
   * `webhookUrlProblem` of each URL sent to (a pure function of the URL here): parsing and
   * checking it for every POST cost ~3 µs each time, for a merchant's one URL.
   */
  private readonly checked = new Map<string, string | undefined>();

  constructor(
    private readonly config: AppConfig,
    @Inject(DNS_LOOKUP) resolve: typeof dnsLookup,
  ) {
    this.localnet = config.isLocalnet;
    this.agent = new Agent({
      keepAliveTimeout: 30_000,
      // As many connections per endpoint as POSTs in flight: a request never waits inside undici,
      // so the timeout below runs from when it is sent, not from when it was queued.
      connections: config.WEBHOOK_CONCURRENCY,
      connect: {
        timeout: config.WEBHOOK_TIMEOUT_MS,
        // The one rule of webhook-url.ts, applied to the address actually connected to.
        lookup: checkedTargetLookup(resolve, config.isLocalnet),
      },
    });
  }

  /**
   * Closes the connections. The worker has finished its POSTs by then, or handed back those the
   * close's grace did not wait for: they are aborted (`close` would wait for them).
   */
  async onApplicationShutdown(): Promise<void> {
    await this.agent.destroy();
  }

  async post(url: string, body: string, headers: Record<string, string>): Promise<SendResult> {
    const problem = this.problem(url);
    if (problem) return { error: `Endpoint refused: ${problem}` };
    const deadline = new Deadline(this.config.WEBHOOK_TIMEOUT_MS);
    try {
      const response = await request(url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', ...headers },
        dispatcher: this.agent,
        signal: deadline,
      });
      // The response body is not kept; read it so the connection can be reused.
      await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      const retryAfter = response.headers['retry-after'];
      return {
        status: response.statusCode,
        ...(response.statusCode >= 200 && response.statusCode < 300
          ? {}
          : { error: `HTTP ${response.statusCode}` }),
        ...((response.statusCode === 429 || response.statusCode === 503) &&
        typeof retryAfter === 'string'
          ? { retryAfter }
          : {}),
      };
    } catch (error) {
      return { error: describeFailure(error, this.config.WEBHOOK_TIMEOUT_MS) };
    } finally {
      deadline.clear();
    }
  }

  /** Why webhooks may not go to `url` (webhook-url.ts's rule), memoized per URL. */
  private problem(url: string): string | undefined {
    if (this.checked.has(url)) return this.checked.get(url);
    if (this.checked.size >= CHECKED_URLS) this.checked.clear();
    const problem = webhookUrlProblem(url, this.localnet);
    this.checked.set(url, problem);
    return problem;
  }
}

/** Resolver failures: whether a name exists is not the merchant's to learn from our network. */
const NOT_RESOLVED = new Set([
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NODATA',
  'ENODATA',
  'EBLOCKED',
]);
const CLOSED = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
const UNREACHABLE = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN']);

/**
 * What a delivery's `lastError` says when no HTTP answer came: that it failed and how (timed
 * out, refused, closed, unreachable, TLS), in words of ours. Never the resolver's or the
 * socket's own message: `ENOTFOUND` against `EBLOCKED` (and the address a name resolved to)
 * would tell a merchant which host names and addresses the service's network knows. A name
 * that does not resolve and one that resolves to an address deliveries may not go to read
 * alike.
 */
export function describeFailure(error: unknown, timeoutMs: number): string {
  const err = error as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  const code = err?.code ?? err?.cause?.code ?? '';
  if (err?.name === 'TimeoutError' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT') {
    return `Timed out after ${timeoutMs} ms`;
  }
  if (NOT_RESOLVED.has(code)) {
    return 'Endpoint refused: its host name does not resolve to an address webhooks may be sent to';
  }
  if (code === 'ECONNREFUSED') return 'Connection refused by the endpoint';
  if (CLOSED.has(code)) return 'Connection closed by the endpoint before it answered';
  if (UNREACHABLE.has(code)) return 'Endpoint unreachable';
  if (/^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|EPROTO$)/.test(code)) {
    return `TLS failed (${code})`;
  }
  return 'Delivery failed: no HTTP answer';
}
