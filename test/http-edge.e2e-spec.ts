import { connect } from 'node:net';
import { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { createTestApp, randomWallet, TestApp, TestMerchant } from './helpers/test-app';

/** What hostile requests found at the HTTP edge (issue 9, section 4), through the real app. */
describe('HTTP edge', () => {
  let t: TestApp;
  let m: TestMerchant;

  beforeAll(async () => {
    t = await createTestApp();
    m = await t.createMerchant();
  });
  afterAll(async () => {
    await t.close();
  });

  const customers = async () =>
    Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM customers'))[0].n);

  describe('compressed bodies', () => {
    it.each(['gzip', 'deflate', 'br', 'GZIP'])(
      'Content-Encoding %s is a 415 with a request id, with or without a key, and changes nothing',
      async (encoding) => {
        const before = await customers();
        const body = gzipSync(JSON.stringify({ walletAddress: randomWallet() }));
        for (const auth of [m.auth, {}]) {
          const res = await t.http
            .post('/api/customers')
            .set(auth)
            .set('content-type', 'application/json')
            .set('content-encoding', encoding)
            .send(body)
            .expect(415);
          expect(res.body.error).toMatchObject({
            code: 'UNSUPPORTED_MEDIA_TYPE',
            message: expect.stringContaining('not supported'),
            requestId: res.headers['x-request-id'],
          });
        }
        expect(await customers()).toBe(before);
      },
    );
  });

  describe('fields named like Object.prototype members, and undeclared input', () => {
    it.each(['toString', 'valueOf', 'hasOwnProperty', 'toLocaleString', 'isPrototypeOf'])(
      'a body field %s is refused (400) and nothing is written',
      async (name) => {
        const before = await customers();
        const res = await t.http
          .post('/api/customers')
          .set(m.auth)
          .send({ walletAddress: randomWallet(), [name]: 'x' })
          .expect(400);
        expect(res.body.error).toMatchObject({
          code: 'VALIDATION_ERROR',
          details: [{ field: name, message: 'is not an allowed field' }],
        });
        expect(await customers()).toBe(before);
      },
    );

    it('a query parameter named toString is refused', async () => {
      const res = await t.http.get('/api/customers?toString=1').set(m.auth).expect(400);
      expect(res.body.error.details).toEqual([
        { field: 'toString', message: 'is not an allowed field' },
      ]);
    });

    it('a query parameter on a route that takes none is refused', async () => {
      const res = await t.http.get('/api/settings/api-keys?foo=1').set(m.auth).expect(400);
      expect(res.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: [{ field: 'foo', message: 'is not an allowed query parameter' }],
      });
      // And a key is still needed first.
      await t.http.get('/api/settings/api-keys?foo=1').expect(401);
    });

    it('a body on a route that takes none is refused, and the secret is not rotated', async () => {
      const before = await t.http.get('/api/settings/webhook/secret').set(m.auth).expect(200);
      const res = await t.http
        .post('/api/settings/webhook/secret/rotate')
        .set(m.auth)
        .send({ foo: 1 })
        .expect(400);
      expect(res.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: [{ field: 'foo', message: 'is not an allowed body field' }],
      });
      const after = await t.http.get('/api/settings/webhook/secret').set(m.auth).expect(200);
      expect(after.body).toEqual(before.body);
      for (const raw of ['null', '[]', '"x"']) {
        await t.http
          .post('/api/settings/webhook/secret/rotate')
          .set(m.auth)
          .set('content-type', 'application/json')
          .send(raw)
          .expect(400);
      }
      const still = await t.http.get('/api/settings/webhook/secret').set(m.auth).expect(200);
      expect(still.body).toEqual(before.body);
      // With no body it still rotates.
      await t.http.post('/api/settings/webhook/secret/rotate').set(m.auth).expect(200);
    });
  });

  describe('text that is not text', () => {
    it.each([
      ['a lone high surrogate', '"\\ud800"', /lone surrogate/],
      ['a lone low surrogate', '"a\\udc00b"', /lone surrogate/],
      ['only spaces', '"   "', /visible character/],
      ['only zero-width characters', '"\\u200b\\u200c\\u2060"', /visible character/],
      ['a BOM and a no-break space', '"\\ufeff\\u00a0"', /visible character/],
    ])('a label of %s is a 400', async (_name, json, message) => {
      const before = await customers();
      const res = await t.http
        .post('/api/customers')
        .set(m.auth)
        .set('content-type', 'application/json')
        .send(`{"walletAddress":"${randomWallet()}","label":${json}}`)
        .expect(400);
      expect(res.body.error.details[0]).toMatchObject({ field: 'label', message });
      expect(await customers()).toBe(before);
    });

    it('invalid UTF-8 in the body is a 400, not a U+FFFD stored silently', async () => {
      const before = await customers();
      const body = Buffer.concat([
        Buffer.from(`{"walletAddress":"${randomWallet()}","label":"A`),
        Buffer.from([0xc3, 0x28]), // an invalid two-byte sequence
        Buffer.from('"}'),
      ]);
      const res = await t.http
        .post('/api/customers')
        .set(m.auth)
        .set('content-type', 'application/json')
        .serialize((raw: Buffer) => raw as unknown as string) // the bytes as they are
        .send(body)
        .expect(400);
      expect(res.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        message: 'The request body is not valid UTF-8',
      });
      expect(await customers()).toBe(before);
    });

    it('real text, emoji and accents included, is accepted', async () => {
      const res = await t.http
        .post('/api/customers')
        .set(m.auth)
        .send({ walletAddress: randomWallet(), label: 'Zoë 🚀 株式会社' })
        .expect(201);
      expect(res.body.label).toBe('Zoë 🚀 株式会社');
    });
  });

  describe('CORS: only the Solana Pay transaction-request endpoints, for wallets on any origin', () => {
    it('answers the preflight and the GET of a real invoice with Access-Control-Allow-Origin: *', async () => {
      const created = await t.http
        .post('/api/invoices')
        .set(m.auth)
        .send({
          walletAddress: randomWallet(),
          mint: 'USDC',
          lineItems: [{ description: 'x', quantity: 1, unitAmount: '1' }],
        })
        .expect(201);
      const path = `/api/checkout/invoices/${created.body.invoice.id}/transaction`;
      const preflight = await t.http
        .options(path)
        .set('origin', 'https://wallet.example')
        .set('access-control-request-method', 'POST')
        .set('access-control-request-headers', 'content-type')
        .expect(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('*');
      expect(preflight.headers['access-control-allow-methods']).toBe('GET, POST, OPTIONS');
      expect(preflight.headers['access-control-allow-headers']).toMatch(/Content-Type/i);
      expect(preflight.headers['access-control-allow-credentials']).toBeUndefined();
      const get = await t.http.get(path).set('origin', 'https://wallet.example').expect(200);
      expect(get.headers['access-control-allow-origin']).toBe('*');
      expect(get.body).toEqual({ label: expect.any(String), icon: expect.any(String) });
      // Refusals are readable too (the wallet shows the message).
      const missing = await t.http
        .options('/api/checkout/plans/00000000-0000-4000-8000-000000000000/transaction')
        .expect(204);
      expect(missing.headers['access-control-allow-origin']).toBe('*');
    });

    it('sends no CORS header anywhere else: a merchant key is never for another origin', async () => {
      for (const path of ['/api/customers', '/api/checkout/invoices/x', '/api/dev/faucet']) {
        const res = await t.http
          .options(path)
          .set('origin', 'https://evil.example')
          .set('access-control-request-method', 'GET');
        expect(res.status).toBe(404);
        expect(res.headers['access-control-allow-origin']).toBeUndefined();
      }
      const res = await t.http
        .get('/api/customers')
        .set(m.auth)
        .set('origin', 'https://evil.example')
        .expect(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    });
  });

  describe('errors never echo what the client sent', () => {
    it.each(['utf-16', 'utf-16le', 'UTF-16BE', 'iso-8859-1', 'utf-32'])(
      'a JSON body in charset %s is a 415 that quotes nothing of it, and stores nothing',
      async (charset) => {
        const before = await customers();
        const text = JSON.stringify({
          walletAddress: '<script>alert(1)</script>',
          label: 'zq-secret',
        });
        const body = Buffer.from(
          text,
          charset.toLowerCase().startsWith('utf-16') ? 'utf16le' : 'latin1',
        );
        const res = await t.http
          .post('/api/customers')
          .set(m.auth)
          .set('content-type', `application/json; charset=${charset}`)
          .send(body)
          .expect(415);
        expect(res.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
        expect(JSON.stringify(res.body)).not.toMatch(/script|zq-secret|walletAddress/);
        expect(await customers()).toBe(before);
      },
    );

    it.each([
      '/api/customers/%ff',
      '/api/customers/%E0%A4%A',
      '/api/invoices/%C0%AF',
      '/api/plans/%',
    ])(
      'GET %s (broken percent-encoding in an id) is 404 NOT_FOUND, quoting nothing',
      async (path) => {
        const res = await t.http.get(path).set(m.auth).expect(404);
        expect(res.body.error.code).toBe('NOT_FOUND');
        expect(res.body.error.message).not.toMatch(/decode|%/);
      },
    );
  });

  describe('error messages say what is wrong', () => {
    it('a string where a number is expected says so, not a bound', async () => {
      const res = await t.http
        .post('/api/dev/clock/advance')
        .set(t.devAuth)
        .send({ seconds: 'abc' })
        .expect(400);
      expect(res.body.error.details).toEqual([
        { field: 'seconds', message: 'must be an integer number' },
      ]);
    });

    it.each(['null', '"hello"', '[]', '7'])(
      'a body of %s is "the body must be a JSON object"',
      async (raw) => {
        const res = await t.http
          .post('/api/customers')
          .set(m.auth)
          .set('content-type', 'application/json')
          .send(raw)
          .expect(400);
        expect(res.body.error).toMatchObject({
          code: 'VALIDATION_ERROR',
          message: 'The body must be a JSON object',
        });
      },
    );

    it('a body of thousands of unknown keys gets a short error, at most 20 details', async () => {
      const body: Record<string, number> = { walletAddress: 0 };
      for (let i = 0; i < 5_000; i++) body[`k${i}`] = i;
      const res = await t.http.post('/api/customers').set(m.auth).send(body).expect(400);
      expect(res.body.error.details.length).toBeLessThanOrEqual(20);
      expect(JSON.stringify(res.body).length).toBeLessThan(5_000);
      expect(res.body.error.message).toMatch(/and \d+ more/);
    });
  });

  describe('every response carries x-request-id', () => {
    it('a malformed JSON body (refused by the body parser)', async () => {
      const res = await t.http
        .post('/api/customers')
        .set(m.auth)
        .set('content-type', 'application/json')
        .send('{"walletAddress":')
        .expect(400);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.body.error.requestId).toBe(res.headers['x-request-id']);
    });

    it('the API docs', async () => {
      const res = await t.http.get('/docs-json').expect(200);
      expect(res.headers['x-request-id']).toBeDefined();
    });

    it("Node's own 400 (a malformed request line) and 431 (oversized headers), as JSON", async () => {
      const server = t.app.getHttpServer();
      if (!server.listening) await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const { port } = server.address() as AddressInfo;
      const raw = (payload: string) =>
        new Promise<string>((resolve, reject) => {
          const socket = connect(port, '127.0.0.1', () => socket.write(payload));
          let data = '';
          socket.on('data', (chunk) => (data += chunk.toString()));
          socket.on('end', () => resolve(data));
          socket.on('error', reject);
        });
      const bad = await raw('GARBAGE / HTTP/1.1\r\n\r\n');
      expect(bad).toMatch(/^HTTP\/1\.1 400 /);
      expect(bad).toMatch(/x-request-id: [0-9a-f-]{36}/);
      expect(JSON.parse(bad.slice(bad.indexOf('\r\n\r\n') + 4))).toMatchObject({
        error: { code: 'VALIDATION_ERROR', message: 'Malformed HTTP request' },
      });
      const huge = await raw(
        `GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      );
      expect(huge).toMatch(/^HTTP\/1\.1 431 /);
      expect(huge).toMatch(/x-request-id: [0-9a-f-]{36}/);
    });
  });

  describe('webhook URLs on localnet: one rule', () => {
    it.each([
      ['http://169.254.169.254/latest/meta-data', 400],
      ['http://[::ffff:169.254.169.254]/', 400],
      ['http://[fd00:ec2::254]/', 400],
      ['http://100.100.100.200/latest/meta-data/', 400], // Alibaba Cloud
      ['http://0x64.0x64.0x64.0xc8/', 400],
      ['http://[::ffff:100.100.100.200]/', 400],
      ['http://192.0.0.192/opc/v2/instance/', 400], // Oracle Cloud
      ['http://10.0.0.5:8080/hook', 200],
      ['http://127.0.0.1:9000/hook', 200],
      ['http://localhost:9000/hook', 200],
    ])('%s -> %i', async (webhookUrl, status) => {
      const res = await t.http.put('/api/settings/webhook').set(m.auth).send({ webhookUrl });
      expect(res.status).toBe(status);
      if (status === 400) {
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
        // Refused, so nothing is stored and nothing will be POSTed there.
        const stored = await t.http.get('/api/settings/webhook').set(m.auth).expect(200);
        expect(stored.body.webhookUrl).not.toBe(webhookUrl);
      }
    });
  });
});

describe('rate limits and failed authentication behind a proxy (D17)', () => {
  let t: TestApp;
  let m: TestMerchant;

  beforeAll(async () => {
    t = await createTestApp({
      env: { TRUST_PROXY: 'loopback', AUTH_FAILURES_PER_MINUTE: '3', RATE_LIMIT_PER_MINUTE: '8' },
    });
    m = await t.createMerchant();
  });
  afterAll(async () => {
    await t.close();
  });

  const badKey = { Authorization: 'Bearer sbk_1111111111111111111111111111111111111111111' };

  it("one client's failures never refuse another client's valid key, nor its own", async () => {
    for (let i = 0; i < 3; i++) {
      await t.http
        .get('/api/customers')
        .set(badKey)
        .set('x-forwarded-for', '203.0.113.7')
        .expect(401);
    }
    const blocked = await t.http
      .get('/api/customers')
      .set(badKey)
      .set('x-forwarded-for', '203.0.113.7')
      .expect(429);
    expect(blocked.body.error.code).toBe('RATE_LIMITED');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    // Another client behind the same proxy: not affected.
    await t.http
      .get('/api/customers')
      .set(badKey)
      .set('x-forwarded-for', '198.51.100.9')
      .expect(401);
    // A valid key, from the blocked client itself too: served.
    await t.http
      .get('/api/customers')
      .set(m.auth)
      .set('x-forwarded-for', '198.51.100.9')
      .expect(200);
    await t.http
      .get('/api/customers')
      .set(m.auth)
      .set('x-forwarded-for', '203.0.113.7')
      .expect(200);
  });

  it('TRUST_PROXY decides the client: without it, the proxy is the client', async () => {
    const direct = await createTestApp({ env: { AUTH_FAILURES_PER_MINUTE: '2' } });
    try {
      const own = await direct.createMerchant();
      for (const ip of ['203.0.113.1', '203.0.113.2']) {
        await direct.http.get('/api/customers').set(badKey).set('x-forwarded-for', ip).expect(401);
      }
      // The forwarded addresses are ignored: both failures counted against the one peer.
      await direct.http
        .get('/api/customers')
        .set(badKey)
        .set('x-forwarded-for', '203.0.113.3')
        .expect(429);
      // Still, a valid key is never refused for them.
      await direct.http.get('/api/customers').set(own.auth).expect(200);
    } finally {
      await direct.close();
    }
  });

  it('the rate limit is one budget per key across routes, and every 429 has Retry-After', async () => {
    const k = await t.createMerchant('Budget');
    const remaining: number[] = [];
    const routes = [
      '/api/customers',
      '/api/settings/api-keys',
      '/api/events',
      '/api/settings/webhook',
    ];
    for (let i = 0; i < 8; i++) {
      const res = await t.http
        .get(routes[i % routes.length])
        .set(k.auth)
        .expect(200);
      remaining.push(Number(res.headers['x-ratelimit-remaining']));
    }
    expect(remaining).toEqual([7, 6, 5, 4, 3, 2, 1, 0]);
    const limited = await t.http.get('/api/settings/webhook/secret').set(k.auth).expect(429);
    expect(limited.body.error.code).toBe('RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another key of another merchant has its own budget.
    await t.http.get('/api/customers').set(m.auth).expect(200);
  });
});

describe('TRUST_PROXY is validated at start-up', () => {
  it.each([['true'], ['abc'], ['10.0.0.0/33'], ['1.2.3.4,,5.6.7.8'], ['99']])(
    '%s is refused with a message naming the variable',
    async (value) => {
      await expect(createTestApp({ env: { TRUST_PROXY: value } })).rejects.toThrow(/TRUST_PROXY/);
    },
  );

  it.each([['1'], ['loopback'], ['10.0.0.0/8, 192.168.0.1'], ['::1,fd00::/8']])(
    '%s is accepted',
    async (value) => {
      const app = await createTestApp({ env: { TRUST_PROXY: value } });
      try {
        await request(app.app.getHttpServer()).get('/health/live').expect(200);
      } finally {
        await app.close();
      }
    },
  );
});

describe('a request has HTTP_REQUEST_TIMEOUT_MS to arrive whole, headers and body', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await createTestApp({ env: { HTTP_REQUEST_TIMEOUT_MS: '2000' } });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
  });
  afterAll(async () => {
    await t.close();
  });

  /**
   * Sends `head`, then `trickle` one byte at a time every 300 ms, until the server closes the
   * connection: what it answered and how many trickled bytes it took.
   */
  function dribble(head: string, trickle: string): Promise<{ answer: string; sent: number }> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let answer = '';
      let sent = 0;
      let timer: NodeJS.Timeout | undefined;
      socket.on('data', (d: Buffer) => (answer += d.toString()));
      socket.on('error', () => undefined); // a reset after the 408 is the server closing
      socket.on('close', () => {
        clearInterval(timer);
        resolve({ answer, sent });
      });
      socket.on('connect', () => {
        socket.write(head);
        timer = setInterval(() => {
          if (sent >= trickle.length) {
            clearInterval(timer);
            reject(new Error(`the server waited for the whole slow request: ${answer}`));
            return;
          }
          socket.write(trickle[sent++]);
        }, 300);
      });
    });
  }

  it('a body sent a byte at a time is cut off with 408 before it ends', async () => {
    const body = JSON.stringify({ walletAddress: randomWallet(), label: 'x'.repeat(60) });
    const { answer, sent } = await dribble(
      [
        'POST /api/checkout/plans/00000000-0000-4000-8000-000000000000/transaction HTTP/1.1',
        'Host: localhost',
        'Content-Type: application/json',
        `Content-Length: ${body.length}`,
        '',
        '',
      ].join('\r\n'),
      body,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toContain('"code":"REQUEST_TIMEOUT"');
    expect(sent).toBeLessThan(body.length);
  }, 60_000);

  it('headers sent a byte at a time are cut off with 408 too', async () => {
    const head = 'GET /health/live HTTP/1.1\r\nHost: localhost\r\nX-Slow: ' + 'y'.repeat(80);
    const { answer, sent } = await dribble('', head);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(sent).toBeLessThan(head.length);
  }, 60_000);

  it('a request that arrives in time is answered as usual', async () => {
    const res = await request(`http://127.0.0.1:${port}`).get('/health/live').expect(200);
    expect(res.body.status).toBe('ok');
  });
});
