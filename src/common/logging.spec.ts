import express from 'express';
import { Agent, createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import pino from 'pino';
import {
  AccessEntry,
  createRootLogger,
  formatAccessLine,
  loggableUrl,
  requestLogger,
} from './logging';

describe('loggableUrl', () => {
  it('redacts a portal session in the path', () => {
    expect(loggableUrl('/portal/AXNPxFBtVEn3mxaf36bT?x=1')).toBe('/portal/[redacted]?x=1');
    expect(loggableUrl('/portal/abc')).toBe('/portal/[redacted]');
    // Routing ignores case; a request line may be absolute or start with '//'.
    expect(loggableUrl('/PORTAL/abc')).toBe('/portal/[redacted]');
    expect(loggableUrl('http://host/Portal/abc/x')).toBe('http://host/portal/[redacted]/x');
    expect(loggableUrl('//portal/abc')).toBe('//portal/[redacted]');
  });

  it('redacts a portal session sent as ?session= (or any credential parameter), any case', () => {
    const token = 'A'.repeat(40) + 'b-_'.repeat(17) + 'Zz'; // 92 base64url characters
    expect(loggableUrl(`/portal?session=${token}`)).toBe('/portal?session=[redacted]');
    expect(loggableUrl(`/api/portal/session?x=1&SESSION=${token}&y=2`)).toBe(
      '/api/portal/[redacted]?x=1&SESSION=[redacted]&y=2',
    );
    expect(loggableUrl('/a?token=t0k&api_key=k3y')).toBe('/a?token=[redacted]&api_key=[redacted]');
    // By its shape, wherever it is: another parameter, the path, a fragment.
    expect(loggableUrl(`/checkout?next=${token}`)).toBe('/checkout?next=[redacted]');
    expect(loggableUrl(`/x/${token}/y`)).toBe('/x/[redacted]/y');
    expect(loggableUrl('/api/customers?q=sbk_3xYz9')).toBe('/api/customers?q=[redacted]');
    // Ordinary URLs are left as they are.
    expect(loggableUrl('/api/customers/7d1e2f9a-4b6c-4d8e-9f0a-1b2c3d4e5f60')).toBe(
      '/api/customers/7d1e2f9a-4b6c-4d8e-9f0a-1b2c3d4e5f60',
    );
  });

  it('redacts an access_token query parameter and keeps the rest', () => {
    expect(loggableUrl('/api/customers?access_token=sbk_secret&search=ada')).toBe(
      '/api/customers?access_token=[redacted]&search=ada',
    );
    expect(loggableUrl('/api/x?search=a&ACCESS_TOKEN=sbk_secret')).toBe(
      '/api/x?search=a&ACCESS_TOKEN=[redacted]',
    );
    expect(loggableUrl('/api/customers?search=ada')).toBe('/api/customers?search=ada');
  });
});

describe('requestLogger', () => {
  function app() {
    const raw: string[] = [];
    const logger = createRootLogger('info', { write: (line: string) => void raw.push(line) });
    const server = express();
    server.use(requestLogger(logger));
    server.get('/ok', (_req, res) => void res.json({ ok: true }));
    server.get('/fail', (_req, res) => void res.status(503).end());
    const lines = () => raw.map((l) => JSON.parse(l) as Record<string, unknown>);
    return { server, lines };
  }

  it('echoes a safe request id, makes one otherwise, and logs one line per request', async () => {
    const { server, lines } = app();
    const safe = await request(server).get('/ok').set('x-request-id', 'req-42').expect(200);
    expect(safe.headers['x-request-id']).toBe('req-42');
    const unsafe = await request(server)
      .get('/ok')
      .set('x-request-id', 'bad id with spaces')
      .expect(200);
    expect(unsafe.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    await request(server).get('/fail').set('x-request-id', 'req-43').expect(503);
    await new Promise((r) => setImmediate(r));
    expect(lines()).toEqual([
      expect.objectContaining({ level: 30, requestId: 'req-42', statusCode: 200, url: '/ok' }),
      expect.objectContaining({ level: 30, requestId: unsafe.headers['x-request-id'] }),
      expect.objectContaining({ level: 50, requestId: 'req-43', statusCode: 503 }),
    ]);
  });

  it('logs a request whose client left before its answer once, as aborted, and tells onDone', async () => {
    const raw: string[] = [];
    const logger = createRootLogger('info', { write: (line: string) => void raw.push(line) });
    const told: number[] = [];
    const app = express();
    app.use(requestLogger(logger, (_req, res) => void told.push(res.statusCode)));
    let answer: (() => void) | undefined;
    app.get('/slow', (_req, res) => {
      answer = () => void res.json({ late: true });
    });
    app.get('/ok', (_req, res) => void res.json({ ok: true }));
    const server = await listening(createServer(app));
    const { port } = server.address() as AddressInfo;
    try {
      // one connection: a request answered, then one its client gives up on
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      await new Promise<void>((resolve, reject) =>
        httpRequest({ port, path: '/ok', agent }, (res) => res.resume().on('end', resolve))
          .on('error', reject)
          .end(),
      );
      const slow = httpRequest({ port, path: '/slow', agent }).on('error', () => undefined);
      slow.end();
      await until(() => answer !== undefined);
      slow.destroy();
      await until(() => raw.length === 2);
      answer?.(); // too late: the connection is gone
      agent.destroy();
      await new Promise((r) => setTimeout(r, 50));
      const lines = raw.map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines).toEqual([
        expect.objectContaining({ level: 30, url: '/ok', msg: 'request completed' }),
        expect.objectContaining({ level: 40, url: '/slow', msg: 'request aborted' }),
      ]);
      expect(told).toHaveLength(2);
    } finally {
      server.close();
    }
  });

  it('below the configured level, writes nothing', async () => {
    const raw: string[] = [];
    const logger = createRootLogger('warn', { write: (line: string) => void raw.push(line) });
    const server = express();
    server.use(requestLogger(logger));
    server.get('/ok', (_req, res) => void res.end());
    await request(server).get('/ok').expect(200);
    await new Promise((r) => setImmediate(r));
    expect(raw).toEqual([]);
  });
});

function listening(server: Server): Promise<Server> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(condition()).toBe(true);
}

describe('formatAccessLine', () => {
  const entries: [string, AccessEntry][] = [
    [
      'a plain request',
      { requestId: 'r1', method: 'GET', url: '/health/live', statusCode: 200, responseTime: 3 },
    ],
    [
      'a merchant and an error code',
      {
        requestId: '5f1c6f9e-9d1e-4c3f-8f8a-1d2e3f4a5b6c',
        method: 'POST',
        url: '/api/customers?search=a"b\\c\u2028\u0000é',
        statusCode: 400,
        responseTime: 12,
        merchantId: 'm-1',
        errorCode: 'VALIDATION_ERROR',
      },
    ],
  ];

  it.each(entries)('writes %s exactly as pino would', (_name, entry) => {
    const written: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void written.push(line) });
    logger.warn({ ...entry }, 'request completed');
    const bindings = (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym];
    const ours = formatAccessLine('warn', 1_795_000_000_000, bindings, entry, 'request completed');
    expect(ours.endsWith('\n')).toBe(true);
    const theirs = JSON.parse(written[0]) as Record<string, unknown>;
    expect(JSON.parse(ours)).toEqual({ ...theirs, time: 1_795_000_000_000 });
    // Same keys in the same order: the lines read alike.
    expect(Object.keys(JSON.parse(ours) as object)).toEqual(Object.keys(theirs));
  });
});
