import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AddressInfo, connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { ensureBuilt } from './helpers/dist';
import { createTestApp, randomWallet, TestApp, TestMerchant } from './helpers/test-app';
import { waitFor } from './helpers/webhook-receiver';

type Line = Record<string, unknown> & { msg: string; level: number };

/**
 * The request log through the real app: one access line per request (refused ones included),
 * each with the request id the response carries, never a secret.
 */
describe('Request log', () => {
  let t: TestApp;
  let m: TestMerchant;
  const raw: string[] = [];
  const lines = (): Line[] => raw.map((l) => JSON.parse(l) as Line);
  const lineOf = async (requestId: string): Promise<Line> => {
    await waitFor(
      () => lines().some((l) => l.requestId === requestId && l.msg.startsWith('request ')),
      5000,
      () => `an access line for ${requestId}`,
    );
    return lines().find((l) => l.requestId === requestId && l.msg.startsWith('request '))!;
  };

  beforeAll(async () => {
    t = await createTestApp({
      env: { LOG_LEVEL: 'info' },
      logDestination: { write: (line: string) => void raw.push(line) },
    });
    m = await t.createMerchant();
  });
  afterAll(async () => {
    await t.close();
  });

  it('a public request: method, URL, status, time and the request id it was sent', async () => {
    await t.http.get('/health/live').set('x-request-id', 'probe-1').expect(200);
    expect(await lineOf('probe-1')).toMatchObject({
      level: 30,
      msg: 'request completed',
      method: 'GET',
      url: '/health/live',
      statusCode: 200,
      responseTime: expect.any(Number),
    });
  });

  it('an authenticated request names the merchant, never the key', async () => {
    const res = await t.http.get('/api/customers?search=ada').set(m.auth).expect(200);
    const line = await lineOf(res.headers['x-request-id']);
    expect(line).toMatchObject({
      statusCode: 200,
      merchantId: m.id,
      url: '/api/customers?search=ada',
    });
    expect(line).not.toHaveProperty('errorCode');
    expect(raw.join('\n')).not.toContain(m.apiKey);
  });

  it('an error: warn level and the error code; a key in the query string is redacted', async () => {
    const res = await t.http.get(`/api/customers?access_token=${m.apiKey}`).expect(401);
    const line = await lineOf(res.headers['x-request-id']);
    expect(line).toMatchObject({
      level: 40,
      statusCode: 401,
      errorCode: 'UNAUTHORIZED',
      url: '/api/customers?access_token=[redacted]',
    });
    expect(raw.join('\n')).not.toContain(m.apiKey);
  });

  it('a portal session sent in the query string (?session=) never reaches the log', async () => {
    const customer = await t.http
      .post('/api/customers')
      .set(m.auth)
      .send({ walletAddress: randomWallet() })
      .expect(201);
    const session = await t.http
      .post(`/api/customers/${customer.body.id}/portal-session`)
      .set(m.auth)
      .expect(201);
    const token = new URL(session.body.url).pathname.split('/').pop()!;
    expect(token.length).toBeGreaterThan(64);
    for (const path of [`/api/portal/session?session=${token}`, `/checkout/x?next=${token}`]) {
      const res = await t.http.get(path);
      await lineOf(res.headers['x-request-id']);
    }
    expect(raw.join('\n')).not.toContain(token);
  });

  it.each([
    ['malformed JSON', 'application/json', undefined, '{"walletAddress":', 400, 'VALIDATION_ERROR'],
    [
      'a compressed body',
      'application/json',
      'gzip',
      gzipSync('{}'),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    ['a body that is not JSON', 'text/plain', undefined, 'hello', 415, 'UNSUPPORTED_MEDIA_TYPE'],
  ] as const)(
    'a request refused while parsing (%s) has its line and its id',
    async (_name, type, encoding, body, status, code) => {
      let req = t.http.post('/api/customers').set(m.auth).set('content-type', type);
      if (encoding) req = req.set('content-encoding', encoding);
      const res = await req.send(body).expect(status);
      expect(res.body.error.requestId).toBe(res.headers['x-request-id']);
      expect(await lineOf(res.headers['x-request-id'])).toMatchObject({
        level: 40,
        method: 'POST',
        statusCode: status,
        errorCode: code,
      });
    },
  );

  it("Node's own 400 for a malformed request is logged with the id it answered", async () => {
    const server = t.app.getHttpServer();
    if (!server.listening) await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write('GARBAGE / HTTP/1.1\r\n\r\n'));
      let data = '';
      socket.on('data', (chunk) => (data += chunk.toString()));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    const id = /x-request-id: ([0-9a-f-]{36})/.exec(answer)![1];
    await waitFor(() => lines().some((l) => l.requestId === id));
    expect(lines().find((l) => l.requestId === id)).toMatchObject({
      level: 40,
      status: 400,
      msg: 'HTTP request refused by the server',
    });
  });
});

/**
 * The service's standard output is gathered and written in batches (`common/log-batch.ts`): a
 * process that exits writes every line it logged, in order.
 */
describe('Log lines at exit', () => {
  /** Runs a command to its end: what it wrote to each output (read to the end), and its code. */
  const runToEnd = async (command: string, args: string[]) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { out, err, code };
  };

  // The compiled logger, as the service runs it: standard output batched (batchedStdout).
  const script = `
    const { createRootLogger } = require(process.argv[1]);
    const logger = createRootLogger('info');
    for (let i = 0; i < Number(process.argv[3]); i++) logger.info({ i }, 'line');
    if (process.argv[2] === 'exit') process.exit(0);
  `;

  // 2 000 lines: chunks handed over while logging, the last one at exit; 3 lines: all of them
  // still gathered (under 4 KB) when the process ends, with nothing being written.
  it.each([
    ['process.exit() right after the last line', 'exit', 2000],
    ['process.exit() with every line still gathered', 'exit', 3],
    ['the end of its event loop', 'drain', 2000],
    ['the end of its event loop, every line still gathered', 'drain', 3],
  ])('%s (%s, %d lines)', async (_, how, LINES) => {
    const logging = ensureBuilt('src', 'common', 'logging.js');
    const { out, err, code } = await runToEnd(process.execPath, [
      '-e',
      script,
      logging,
      how,
      String(LINES),
    ]);
    expect(err).toBe('');
    expect(code).toBe(0);
    const numbers = out
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { i: number }).i);
    expect(numbers).toEqual(Array.from({ length: LINES }, (__, i) => i));
  });

  it('process.exit() while standard output is a pipe nearly full that nobody reads yet', async () => {
    const logging = ensureBuilt('src', 'common', 'logging.js');
    const dir = await mkdtemp(join(tmpdir(), 'log-exit-'));
    const file = join(dir, 'full.js');
    // Node makes a piped standard output non-blocking once it is touched; 63 KB of the pipe's
    // 64 KB are taken, and the last line (3 KB) is logged when nothing is being written.
    await writeFile(
      file,
      `
      const { writeSync } = require('node:fs');
      const { createRootLogger } = require(process.argv[2]);
      void process.stdout;
      writeSync(1, 'x'.repeat(63 * 1024) + '\\n');
      const logger = createRootLogger('info');
      setTimeout(() => {
        logger.info({ tail: 'y'.repeat(3000) }, 'the last line');
        process.exit(0);
      }, 300);
      `,
    );
    try {
      // The reader starts a second later: the line must wait for it, not be dropped.
      const { out, err, code } = await runToEnd('sh', [
        '-c',
        `"${process.execPath}" "${file}" "${logging}" | (sleep 1; cat)`,
      ]);
      expect(err).toBe('');
      expect(code).toBe(0);
      const lines = out.trim().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toBe('x'.repeat(63 * 1024));
      expect(JSON.parse(lines[1])).toMatchObject({ msg: 'the last line', tail: 'y'.repeat(3000) });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
