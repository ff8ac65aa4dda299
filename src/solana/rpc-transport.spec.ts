import { Connection } from '@solana/web3.js';
import { createServer, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  JsonRpcRequest,
  parseRetryAfter,
  RpcAnswerError,
  RpcOutcome,
  RpcTransport,
  RpcTransportOptions,
  RpcUnavailableError,
} from './rpc-transport';

type Handler = (body: JsonRpcRequest | JsonRpcRequest[], res: ServerResponse) => void;

/** A JSON-RPC server of the test's making: what it received (and when), answering as told. */
interface TestServer {
  url: string;
  /** Each HTTP request's body, parsed, with its arrival time (ms). */
  received: { body: JsonRpcRequest | JsonRpcRequest[]; at: number }[];
  /** Methods of every JSON-RPC request received, batches flattened. */
  methods(): string[];
  handle: Handler;
  close(): Promise<void>;
}

const json = (res: ServerResponse, status: number, body: unknown, headers = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
};

/** Answers every request with `<method>@<server name>` (a batch with an array, in order). */
const answering =
  (name: string): Handler =>
  (body, res) => {
    const answer = (r: JsonRpcRequest) => ({
      jsonrpc: '2.0',
      id: r.id,
      result: r.method === 'getHealth' ? 'ok' : `${r.method}@${name}`,
    });
    json(res, 200, Array.isArray(body) ? body.map(answer) : answer(body));
  };

const servers: Server[] = [];

async function startServer(handle: Handler = answering('s')): Promise<TestServer> {
  const received: TestServer['received'] = [];
  const server: TestServer = {
    url: '',
    received,
    handle,
    methods: () =>
      received.flatMap((r) => (Array.isArray(r.body) ? r.body : [r.body]).map((q) => q.method)),
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };
  const http = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as JsonRpcRequest;
      received.push({ body, at: Date.now() });
      server.handle(body, res);
    });
  });
  servers.push(http);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  server.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return server;
}

/** A URL nothing listens on: a provider that is down. */
async function downUrl(): Promise<string> {
  const s = await startServer();
  await s.close();
  return s.url;
}

afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

/** A transport with a clock the test moves, recording every reported request. */
function transport(urls: string[], options: Partial<RpcTransportOptions> = {}) {
  const clock = { now: 1_000_000 };
  const reports: { method: string; outcome: RpcOutcome; url: number }[] = [];
  const rpc = new RpcTransport({
    urls,
    timeoutMs: 2_000,
    now: () => clock.now,
    onRequest: (method, outcome, seconds, url) => {
      expect(seconds).toBeGreaterThanOrEqual(0);
      reports.push({ method, outcome, url });
    },
    ...options,
  });
  return { rpc, clock, reports };
}

/** Resolves once a report matching `match` arrives (then lets its caller's work finish). */
function reported(
  reports: { method: string; outcome: RpcOutcome; url: number }[],
  match: { method: string; outcome: RpcOutcome; url: number },
): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (
        reports.some(
          (r) => r.method === match.method && r.outcome === match.outcome && r.url === match.url,
        )
      ) {
        setImmediate(resolve);
      } else setTimeout(check, 5);
    };
    check();
  });
}

describe('RpcTransport: failover', () => {
  it('serves a request from the first URL and reports it', async () => {
    const a = await startServer(answering('a'));
    const b = await startServer(answering('b'));
    const { rpc, reports } = transport([a.url, b.url]);
    expect(await rpc.call('getSlot')).toBe('getSlot@a');
    expect(b.received).toHaveLength(0);
    expect(reports).toEqual([{ method: 'getSlot', outcome: 'ok', url: 0 }]);
  });

  it('takes a JSON-RPC error as the answer: no failover', async () => {
    const a = await startServer((body, res) =>
      json(res, 200, {
        jsonrpc: '2.0',
        id: (body as JsonRpcRequest).id,
        error: { code: -32002, message: 'Transaction simulation failed' },
      }),
    );
    const b = await startServer(answering('b'));
    const { rpc, reports } = transport([a.url, b.url]);
    await expect(rpc.call('sendTransaction', ['AQ=='])).rejects.toEqual(
      new RpcAnswerError(-32002, 'Transaction simulation failed'),
    );
    expect(b.received).toHaveLength(0);
    expect(reports).toEqual([{ method: 'sendTransaction', outcome: 'rpc_error', url: 0 }]);
  });

  it('fails over from a URL that is down, and leaves it resting', async () => {
    const b = await startServer(answering('b'));
    const { rpc, reports } = transport([await downUrl(), b.url]);
    expect(await rpc.call('getSlot')).toBe('getSlot@b');
    expect(reports).toEqual([
      { method: 'getSlot', outcome: 'transport_error', url: 0 },
      { method: 'getSlot', outcome: 'ok', url: 1 },
    ]);
    // Resting: the next request goes straight to the second URL.
    expect(await rpc.call('getBalance')).toBe('getBalance@b');
    expect(reports.slice(2)).toEqual([{ method: 'getBalance', outcome: 'ok', url: 1 }]);
  });

  it('fails over on HTTP 5xx and on a body that is not JSON-RPC', async () => {
    // A 5xx fails over even with a JSON-RPC error in it: the node, not the request, is at fault.
    const a = await startServer((body, res) =>
      json(res, 503, {
        jsonrpc: '2.0',
        id: (body as JsonRpcRequest).id,
        error: { code: -32603, message: 'Internal error' },
      }),
    );
    const b = await startServer((_, res) => json(res, 200, '<html>maintenance</html>'));
    const c = await startServer(answering('c'));
    const { rpc, reports } = transport([a.url, b.url, c.url]);
    expect(await rpc.call('getSlot')).toBe('getSlot@c');
    expect(reports.map((r) => [r.outcome, r.url])).toEqual([
      ['http_error', 0],
      ['http_error', 1],
      ['ok', 2],
    ]);
  });

  it('times out a URL that does not answer and fails over', async () => {
    const slow = await startServer(() => undefined); // never answers
    const b = await startServer(answering('b'));
    const { rpc, reports } = transport([slow.url, b.url], { timeoutMs: 200 });
    const started = Date.now();
    expect(await rpc.call('getSlot')).toBe('getSlot@b');
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(reports.map((r) => [r.outcome, r.url])).toEqual([
      ['timeout', 0],
      ['ok', 1],
    ]);
  });

  it('probes a failed URL after its rest and takes it back once it answers', async () => {
    let down = true;
    const a = await startServer((body, res) =>
      down ? json(res, 502, 'Bad Gateway') : answering('a')(body, res),
    );
    const b = await startServer(answering('b'));
    const { rpc, clock, reports } = transport([a.url, b.url]);
    expect(await rpc.call('getSlot')).toBe('getSlot@b'); // a failed: resting 1 s
    clock.now += 500;
    expect(await rpc.call('getSlot')).toBe('getSlot@b');
    expect(a.methods()).toEqual(['getSlot']); // not asked while resting

    // Rested, still failing: the probe fails, the rest doubles (2 s).
    clock.now += 600;
    expect(await rpc.call('getSlot')).toBe('getSlot@b');
    await reported(reports, { method: 'getHealth', outcome: 'http_error', url: 0 });
    clock.now += 1_500;
    expect(await rpc.call('getSlot')).toBe('getSlot@b');
    expect(a.methods()).toEqual(['getSlot', 'getHealth']);

    // Up again: the next probe answers, and the first URL serves again.
    down = false;
    clock.now += 600;
    expect(await rpc.call('getSlot')).toBe('getSlot@b'); // this one's probe is under way
    await reported(reports, { method: 'getHealth', outcome: 'ok', url: 0 });
    expect(await rpc.call('getSlot')).toBe('getSlot@a');
    expect(a.methods()).toEqual(['getSlot', 'getHealth', 'getHealth', 'getSlot']);
  });

  it('keeps a rested URL out while its probe says the node is behind (-32005)', async () => {
    let behind = true;
    let down = true;
    const a = await startServer((body, res) => {
      const r = body as JsonRpcRequest;
      if (down) return json(res, 503, 'unavailable');
      if (r.method === 'getHealth' && behind) {
        return json(res, 200, {
          jsonrpc: '2.0',
          id: r.id,
          error: { code: -32005, message: 'Node is behind by 120 slots' },
        });
      }
      answering('a')(body, res);
    });
    const b = await startServer(answering('b'));
    const { rpc, clock, reports } = transport([a.url, b.url]);
    expect(await rpc.call('getSlot')).toBe('getSlot@b');
    down = false;
    clock.now += 1_000;
    expect(await rpc.call('getSlot')).toBe('getSlot@b'); // probe: behind
    await reported(reports, { method: 'getHealth', outcome: 'rpc_error', url: 0 });
    expect(await rpc.call('getSlot')).toBe('getSlot@b');
    behind = false;
    clock.now += 2_000;
    expect(await rpc.call('getSlot')).toBe('getSlot@b'); // probe: healthy
    await reported(reports, { method: 'getHealth', outcome: 'ok', url: 0 });
    expect(await rpc.call('getSlot')).toBe('getSlot@a');
  });

  it('goes on when a listener throws: metrics never fail a request', async () => {
    const a = await startServer(answering('a'));
    const { rpc } = transport([a.url]);
    rpc.observe(() => {
      throw new Error('metrics are down');
    });
    expect(await rpc.call('getSlot')).toBe('getSlot@a');
  });

  it('uses a failed URL when no healthy one is left, and says what failed when none answers', async () => {
    const a = await startServer((_, res) => json(res, 500, 'oops'));
    const { rpc } = transport([await downUrl(), a.url]);
    const error = (await rpc.call('getSlot').catch((e: unknown) => e)) as RpcUnavailableError;
    expect(error).toBeInstanceOf(RpcUnavailableError);
    // The URLs (which may hold an API key) are named by their place in the list only.
    expect(error.message).toBe('Solana RPC unavailable: URL 1: ECONNREFUSED; URL 2: HTTP 500');
    // Both resting: still tried (nothing better), not refused outright.
    await expect(rpc.call('getSlot')).rejects.toThrow('URL 1: ECONNREFUSED; URL 2: HTTP 500');
    expect(a.methods()).toEqual(['getSlot', 'getSlot']);
  });

  it('serves a web3.js Connection through its fetch, failing over as any request', async () => {
    const b = await startServer((body, res) =>
      json(res, 200, { jsonrpc: '2.0', id: (body as JsonRpcRequest).id, result: 4242 }),
    );
    const { rpc, reports } = transport([await downUrl(), b.url]);
    const connection = new Connection(rpc.endpoint, {
      fetch: rpc.fetch,
      disableRetryOnRateLimit: true,
    });
    expect(await connection.getSlot()).toBe(4242);
    expect(reports.map((r) => [r.method, r.outcome, r.url])).toEqual([
      ['getSlot', 'transport_error', 0],
      ['getSlot', 'ok', 1],
    ]);
  });
});

describe('RpcTransport: HTTP 429', () => {
  const throttling =
    (headers: Record<string, string>, times = Infinity): Handler =>
    (body, res) => {
      if (times-- > 0) json(res, 429, { error: 'Too many requests' }, headers);
      else answering('a')(body, res);
    };

  it('cools a URL down for its Retry-After (seconds), failing over meanwhile', async () => {
    const a = await startServer(throttling({ 'retry-after': '3' }, 1));
    const b = await startServer(answering('b'));
    const { rpc, clock, reports } = transport([a.url, b.url]);
    expect(await rpc.call('getSlot')).toBe('getSlot@b');
    expect(reports.map((r) => [r.outcome, r.url])).toEqual([
      ['http_429', 0],
      ['ok', 1],
    ]);
    clock.now += 2_900;
    expect(await rpc.call('getSlot')).toBe('getSlot@b');
    expect(a.received).toHaveLength(1);
    clock.now += 200;
    expect(await rpc.call('getSlot')).toBe('getSlot@a');
  });

  it('reads Retry-After as an HTTP date too', async () => {
    const at = new Date(Date.now() + 10_000).toUTCString();
    const a = await startServer(throttling({ 'retry-after': at }, 1));
    const b = await startServer(answering('b'));
    const { rpc, clock } = transport([a.url, b.url]);
    expect(await rpc.call('getSlot')).toBe('getSlot@b');
    clock.now += 5_000;
    expect(await rpc.call('getSlot')).toBe('getSlot@b');
    clock.now += 6_000;
    expect(await rpc.call('getSlot')).toBe('getSlot@a');
  });

  it('caps a Retry-After at 60 s', async () => {
    const a = await startServer(throttling({ 'retry-after': '86400' }, 1));
    const b = await startServer(answering('b'));
    const { rpc, clock } = transport([a.url, b.url]);
    expect(await rpc.call('getSlot')).toBe('getSlot@b');
    clock.now += 59_000;
    expect(await rpc.call('getSlot')).toBe('getSlot@b');
    clock.now += 1_000;
    expect(await rpc.call('getSlot')).toBe('getSlot@a');
  });

  it('backs off exponentially without Retry-After: 1 s, then 2 s', async () => {
    const a = await startServer(throttling({}, 2));
    const b = await startServer(answering('b'));
    const { rpc, clock } = transport([a.url, b.url]);
    expect(await rpc.call('getSlot')).toBe('getSlot@b'); // 429 #1: 1 s
    clock.now += 1_000;
    expect(await rpc.call('getSlot')).toBe('getSlot@b'); // 429 #2: 2 s
    expect(a.received).toHaveLength(2);
    clock.now += 1_900;
    expect(await rpc.call('getSlot')).toBe('getSlot@b');
    expect(a.received).toHaveLength(2);
    clock.now += 100;
    expect(await rpc.call('getSlot')).toBe('getSlot@a');
  });

  it('waits for a rate-limited URL when every URL is cooling, within one timeout', async () => {
    const a = await startServer(throttling({ 'retry-after': '1' }, 1));
    const { rpc } = transport([a.url], { now: Date.now });
    const started = Date.now();
    expect(await rpc.call('getSlot')).toBe('getSlot@a');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(a.received).toHaveLength(2);
  });

  it('fails at once when every URL cools down past the timeout', async () => {
    const a = await startServer(throttling({ 'retry-after': '30' }));
    const b = await startServer(throttling({ 'retry-after': '30' }));
    const { rpc } = transport([a.url, b.url], { now: Date.now });
    const started = Date.now();
    await expect(rpc.call('getSlot')).rejects.toThrow(
      'Solana RPC unavailable: URL 1: HTTP 429; URL 2: HTTP 429',
    );
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('RpcTransport: batches', () => {
  const calls = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ method: `m${i}`, params: [i] }));
  const results = (n: number, server = 'a') =>
    Array.from({ length: n }, (_, i) => expect.objectContaining({ result: `m${i}@${server}` }));
  const sizes = (s: TestServer) =>
    s.received.map((r) => (Array.isArray(r.body) ? r.body.length : 1));

  it('falls back to halves, then single requests, for a URL that refuses batches with one error object, and remembers it', async () => {
    const a = await startServer((body, res) =>
      Array.isArray(body)
        ? json(res, 200, {
            jsonrpc: '2.0',
            id: null,
            error: { code: -32600, message: 'Batch requests are not supported' },
          })
        : answering('a')(body, res),
    );
    const { rpc, reports } = transport([a.url]);
    expect(await rpc.batch(calls(4))).toEqual(results(4));
    expect(sizes(a)).toEqual([4, 2, 2, 1, 1, 1, 1]);
    expect(rpc.batchLimit(0)).toBe(1);
    expect(reports.filter((r) => r.outcome === 'rpc_error')).toHaveLength(8);
    // Remembered: the next batch goes singly at once.
    a.received.length = 0;
    expect(await rpc.batch(calls(3))).toEqual(results(3));
    expect(sizes(a)).toEqual([1, 1, 1]);
  });

  it('learns the batch size a URL caps with HTTP 413', async () => {
    const a = await startServer((body, res) =>
      Array.isArray(body) && body.length > 3
        ? json(res, 413, { error: 'batch too large' })
        : answering('a')(body, res),
    );
    const { rpc, reports } = transport([a.url]);
    expect(await rpc.batch(calls(10))).toEqual(results(10));
    // 10 refused, its halves refused, their halves answered: the URL keeps batches of 2.
    expect(sizes(a).sort((x, y) => x - y)).toEqual([1, 1, 2, 2, 2, 2, 5, 5, 10]);
    expect(rpc.batchLimit(0)).toBe(2);
    expect(reports.filter((r) => r.outcome === 'http_error').length).toBeGreaterThan(0);
    a.received.length = 0;
    expect(await rpc.batch(calls(4))).toEqual(results(4));
    expect(sizes(a)).toEqual([2, 2]);
  });

  it('sends singly the items a URL refuses one by one (an error with id null each)', async () => {
    const a = await startServer((body, res) =>
      Array.isArray(body)
        ? json(
            res,
            200,
            body.map(() => ({
              jsonrpc: '2.0',
              id: null,
              error: { code: -32600, message: 'Invalid request' },
            })),
          )
        : answering('a')(body, res),
    );
    const { rpc } = transport([a.url]);
    expect(await rpc.batch(calls(3))).toEqual(results(3));
    expect(sizes(a)).toEqual([3, 1, 1, 1]);
    expect(rpc.batchLimit(0)).toBe(1);
  });

  it('sends again the items a capped batch left unanswered, and keeps the size it answered', async () => {
    const a = await startServer((body, res) => {
      if (!Array.isArray(body)) return answering('a')(body, res);
      const answered = body.slice(0, 2);
      json(
        res,
        200,
        answered.map((r) => ({ jsonrpc: '2.0', id: r.id, result: `${r.method}@a` })),
      );
    });
    const { rpc } = transport([a.url]);
    expect(await rpc.batch(calls(5))).toEqual(results(5));
    expect(sizes(a).sort((x, y) => x - y)).toEqual([1, 2, 5]);
    expect(rpc.batchLimit(0)).toBe(2);
  });

  it('hands answers back in the order asked, whatever order the server answers in', async () => {
    const a = await startServer((body, res) =>
      json(
        res,
        200,
        (body as JsonRpcRequest[])
          .map((r) => ({ jsonrpc: '2.0', id: r.id, result: `${r.method}@a` }))
          .reverse(),
      ),
    );
    const { rpc } = transport([a.url]);
    expect(await rpc.batch(calls(4))).toEqual(results(4));
    // web3.js reads a batch's answers by position: the fetch it is given keeps them in order.
    const requests = calls(3).map((c, i) => ({ jsonrpc: '2.0', id: `id-${i}`, ...c }));
    const res = await rpc.fetch(a.url, { method: 'POST', body: JSON.stringify(requests) });
    expect(((await res.json()) as { id: string }[]).map((r) => r.id)).toEqual([
      'id-0',
      'id-1',
      'id-2',
    ]);
  });

  it('splits batches larger than maxBatch, each chunk failing over on its own', async () => {
    const b = await startServer(answering('b'));
    const { rpc } = transport([await downUrl(), b.url], { maxBatch: 4 });
    expect(await rpc.batch(calls(10))).toEqual(results(10, 'b'));
    expect(sizes(b).sort((x, y) => x - y)).toEqual([2, 4, 4]);
  });

  it('answers a batch of one (sent as a single request) as a batch', async () => {
    const a = await startServer((body, res) => {
      const r = body as JsonRpcRequest;
      json(
        res,
        200,
        r.method === 'bad'
          ? { jsonrpc: '2.0', id: r.id, error: { code: -32002, message: 'refused' } }
          : { jsonrpc: '2.0', id: r.id, result: `${r.method}@a` },
      );
    });
    const { rpc } = transport([a.url]);
    expect(await rpc.batch([{ method: 'good', params: [] }])).toEqual([
      expect.objectContaining({ result: 'good@a' }),
    ]);
    expect(await rpc.batch([{ method: 'bad', params: [] }])).toEqual([
      expect.objectContaining({ error: { code: -32002, message: 'refused' } }),
    ]);
    expect(sizes(a)).toEqual([1, 1]);
  });

  it("answers web3.js's batch of one (getTransactions of one signature) with an array", async () => {
    const a = await startServer((body, res) => {
      const r = body as JsonRpcRequest; // a batch of one goes as a single request
      json(res, 200, { jsonrpc: '2.0', id: r.id, result: null });
    });
    const { rpc } = transport([a.url]);
    const request = [{ jsonrpc: '2.0', id: 'x', method: 'getTransaction', params: ['sig'] }];
    const res = await rpc.fetch(a.url, { method: 'POST', body: JSON.stringify(request) });
    expect(await res.json()).toEqual([{ jsonrpc: '2.0', id: 'x', result: null }]);
    // Through web3.js, which reads a batch's answer as an array.
    const connection = new Connection(rpc.endpoint, {
      fetch: rpc.fetch,
      disableRetryOnRateLimit: true,
    });
    expect(await connection.getTransactions(['sig'])).toEqual([null]);
    expect(sizes(a)).toEqual([1, 1]);
  });

  it('counts a batch item with an error of its own as answered', async () => {
    const a = await startServer((body, res) =>
      json(
        res,
        200,
        (body as JsonRpcRequest[]).map((r, i) =>
          i === 1
            ? { jsonrpc: '2.0', id: r.id, error: { code: -32002, message: 'refused' } }
            : { jsonrpc: '2.0', id: r.id, result: `${r.method}@a` },
        ),
      ),
    );
    const { rpc } = transport([a.url]);
    const answers = await rpc.batch(calls(3));
    expect(answers[1].error).toEqual({ code: -32002, message: 'refused' });
    expect(sizes(a)).toEqual([3]);
    expect(rpc.batchLimit(0)).toBe(100);
  });
});

describe('RpcTransport: request budget', () => {
  it('makes requests wait for budget, never refusing them', async () => {
    const a = await startServer(answering('a'));
    const rpc = new RpcTransport({ urls: [a.url], requestsPerSecond: 10 });
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 15 }, (_, i) => rpc.call(`m${i}`)));
    expect(answers).toEqual(Array.from({ length: 15 }, (_, i) => `m${i}@a`));
    // 10 at once (a second's budget), the other 5 at 100 ms intervals.
    const times = a.received.map((r) => r.at - started);
    expect(times.slice(0, 10).every((t) => t < 200)).toBe(true);
    expect(times[14]).toBeGreaterThanOrEqual(450);
  });

  it('counts a batch as its number of requests', async () => {
    const a = await startServer(answering('a'));
    const rpc = new RpcTransport({ urls: [a.url], requestsPerSecond: 10 });
    const started = Date.now();
    await rpc.batch(Array.from({ length: 10 }, (_, i) => ({ method: `m${i}`, params: [] })));
    await rpc.call('after');
    expect(a.received[1].at - started).toBeGreaterThanOrEqual(80);
  });

  it('keeps a budget per URL: failing over never waits for budget spent at the URL that failed', async () => {
    const b = await startServer(answering('b'));
    const rpc = new RpcTransport({ urls: [await downUrl(), b.url], requestsPerSecond: 1 });
    const started = Date.now();
    expect(await rpc.call('one')).toBe('one@b'); // one token of each URL's budget
    expect(Date.now() - started).toBeLessThan(500);
    expect(await rpc.call('two')).toBe('two@b'); // the second URL's next token: a second later
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates, never negative, undefined when unreadable', () => {
    const now = Date.parse('2026-11-30T12:00:00Z');
    expect(parseRetryAfter('2', now)).toBe(2_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Mon, 30 Nov 2026 12:00:05 GMT', now)).toBe(5_000);
    expect(parseRetryAfter('Mon, 30 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
