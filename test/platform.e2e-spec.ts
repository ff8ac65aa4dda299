import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { type Express } from 'express';
import helmet from 'helmet';
import type { AddressInfo } from 'node:net';
import { API_HEADERS, HELMET_OPTIONS } from '../src/app.setup';
import { ApiKeysService } from '../src/auth/api-keys.service';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';

describe('Platform: health, request ids, docs', () => {
  let t: TestApp;
  let m: TestMerchant;

  beforeAll(async () => {
    t = await createTestApp();
    m = await t.createMerchant();
  });
  afterAll(() => t.close());

  it('GET /health is public and reports the database up', async () => {
    const res = await t.http.get('/health').expect(200);
    expect(res.body).toMatchObject({ status: 'ok', info: { database: { status: 'up' } } });
  });

  it('GET /health/live answers without touching anything', async () => {
    expect((await t.http.get('/health/live').expect(200)).body).toEqual({ status: 'ok' });
  });

  it("groups the routes: the app's router holds none of them, each request tries its group's", async () => {
    const server: Express = t.app.getHttpAdapter().getInstance();
    const router = server.router;
    expect(router.stack.filter((layer) => layer.route !== undefined)).toEqual([]);
    // routed through the groups, any case, and a path no group knows is still the D1 404
    expect((await t.http.get('/HEALTH/live').expect(200)).body).toEqual({ status: 'ok' });
    await t.http.get('/api/customers').set(m.auth).expect(200);
    const unknown = await t.http.get('/nowhere/at/all').expect(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
  });

  it('every response carries an x-request-id; a safe incoming one is echoed', async () => {
    const fresh = await t.http.get('/health/live');
    expect(fresh.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await t.http
      .get('/api/customers')
      .set(m.auth)
      .set('x-request-id', 'trace-abc.123');
    expect(echoed.headers['x-request-id']).toBe('trace-abc.123');
    const unsafe = await t.http.get('/api/nope').set('x-request-id', 'bad id\twith spaces');
    expect(unsafe.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(unsafe.body.error.requestId).toBe(unsafe.headers['x-request-id']);
  });

  it("sends helmet's headers, exactly as helmet run per request would: all on pages, the API's set on the JSON API", async () => {
    // A reference: plain express running helmet on each request, with the service's options.
    const reference = express();
    const [strict, docs] = [helmet(HELMET_OPTIONS.strict), helmet(HELMET_OPTIONS.docs)];
    reference.use((req, res, next) =>
      (req.path.startsWith('/docs') ? docs : strict)(req, res, next),
    );
    reference.use((_req, res) => void res.status(200).end());
    const server = reference.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const paths = {
      api: ['/health/live', '/api/nope', '/api/customers', '/x402/supported'],
      pages: [
        '/docs/',
        '/checkout/invoices/inv_nope',
        '/portal/nope',
        '/nowhere',
        '/API/customers',
      ],
    };
    try {
      for (const path of [...paths.api, ...paths.pages]) {
        const expected = Object.fromEntries((await fetch(`${base}${path}`)).headers);
        const got = await t.http.get(path);
        // Every header helmet sets (the reference sends little else), with helmet's value.
        const helmets = Object.keys(expected).filter(
          (h) => !['date', 'connection', 'keep-alive', 'content-length'].includes(h),
        );
        expect(helmets.length).toBeGreaterThanOrEqual(12);
        const names = paths.api.includes(path)
          ? helmets.filter((name) => API_HEADERS.has(name))
          : helmets;
        for (const name of names)
          expect([path, name, got.headers[name]]).toEqual([path, name, expected[name]]);
        if (paths.api.includes(path)) {
          expect(names).toHaveLength(API_HEADERS.size);
          // the headers only a browsing context reads stay on the pages
          for (const name of helmets.filter((h) => !API_HEADERS.has(h)))
            expect([path, name, got.headers[name]]).toEqual([path, name, undefined]);
        }
      }
      const page = await t.http.get('/docs/');
      expect(page.headers['content-security-policy']).toContain("style-src 'self' 'unsafe-inline'");
      const api = await t.http.get('/health/live');
      expect(api.headers['content-security-policy']).toContain("default-src 'none'");
      expect(api.headers['x-content-type-options']).toBe('nosniff');
      expect(api.headers['x-frame-options']).toBe('DENY');
      expect(api.headers['cross-origin-opener-policy']).toBeUndefined();
    } finally {
      server.close();
    }
  });

  it('serves Swagger UI at /docs without a key', async () => {
    const res = await t.http.get('/docs/').expect(200);
    expect(res.text).toContain('swagger-ui');
  });

  it("does not keep a merchant's key in the browser (Swagger UI shares the public pages' origin)", async () => {
    const init = await t.http.get('/docs/swagger-ui-init.js').expect(200);
    expect(init.text).toMatch(/"persistAuthorization":\s*false/);
  });

  describe('OpenAPI document', () => {
    let doc: {
      paths: Record<
        string,
        Record<
          string,
          { operationId: string; security?: unknown[]; responses: Record<string, unknown> }
        >
      >;
      components: { securitySchemes: Record<string, unknown> };
    };

    beforeAll(async () => {
      doc = (await t.http.get('/docs-json').expect(200)).body;
    });

    it('matches the committed openapi.json (run `npm run openapi:export` after API changes)', () => {
      const committed = JSON.parse(readFileSync(join(__dirname, '..', 'openapi.json'), 'utf8'));
      expect(doc).toEqual(committed);
    });

    it('documents every endpoint with a verb+resource operation id, unique', () => {
      const ops = Object.entries(doc.paths).flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, op]) => ({ path, method, op })),
      );
      expect(ops.map((o) => `${o.method.toUpperCase()} ${o.path}`).sort()).toEqual(
        [
          'GET /api/customers',
          'POST /api/customers',
          'GET /api/events',
          'GET /api/events/{id}',
          'POST /api/events/{id}/redeliver',
          'GET /api/customers/{id}',
          'PATCH /api/customers/{id}',
          'GET /api/plans',
          'POST /api/plans',
          'GET /api/plans/{id}',
          'PATCH /api/plans/{id}',
          'POST /api/plans/{id}/registration-tx',
          'GET /api/invoices',
          'POST /api/invoices',
          'GET /api/invoices/{id}',
          'POST /api/invoices/{id}/void',
          'POST /api/invoices/{id}/registration-tx',
          'POST /api/invoices/{id}/payments',
          'GET /api/subscriptions',
          'GET /api/subscriptions/{id}',
          'POST /api/subscriptions/{id}/pause',
          'POST /api/subscriptions/{id}/resume',
          'POST /api/subscriptions/{id}/cancel',
          'GET /api/payments',
          'GET /api/exports/ledger',
          'POST /api/payments/{id}/refunds',
          'GET /api/refunds',
          'GET /api/refunds/{id}',
          'POST /api/refunds/{id}/transaction',
          'POST /api/invoices/{id}/credit-notes',
          'GET /api/credit-notes',
          'GET /api/credit-notes/{id}',
          'GET /api/credit-notes/{id}/pdf',
          'GET /api/invoices/{id}/pdf',
          'GET /api/invoices/{id}/receipt/pdf',
          'POST /api/dev/billing/run',
          'GET /api/checkout/invoices/{id}',
          'GET /api/checkout/invoices/{id}/transaction',
          'POST /api/checkout/invoices/{id}/transaction',
          'GET /api/checkout/plans/{id}',
          'GET /api/checkout/plans/{id}/transaction',
          'POST /api/checkout/plans/{id}/transaction',
          'POST /api/checkout/plans/{id}/confirm',
          'GET /checkout/icon.svg',
          'POST /api/customers/{id}/portal-session',
          'GET /api/portal/session',
          'POST /api/portal/subscriptions/{id}/settle',
          'POST /api/portal/subscriptions/{id}/reauthorize/transaction',
          'POST /api/portal/subscriptions/{id}/reauthorize/confirm',
          'POST /api/portal/subscriptions/{id}/cancel/transaction',
          'POST /api/portal/subscriptions/{id}/cancel/confirm',
          'GET /api/settings/api-keys',
          'POST /api/settings/api-keys',
          'DELETE /api/settings/api-keys/{id}',
          'GET /api/settings/webhook',
          'PUT /api/settings/webhook',
          'GET /api/settings/webhook/secret',
          'POST /api/settings/webhook/secret/rotate',
          'POST /api/dev/faucet',
          'POST /api/dev/clock/advance',
          'POST /api/usage-events',
          'GET /api/subscriptions/{id}/usage',
          'GET /x402/supported',
          'POST /x402/verify',
          'POST /x402/settle',
          'GET /x402/fee-budget',
          'GET /health',
          'GET /health/live',
        ].sort(),
      );
      for (const { op } of ops) expect(op.operationId).toMatch(/^[a-z]+[A-Z][A-Za-z]+$/);
      const ids = ops.map((o) => o.op.operationId);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it('is usable by client generators: formats, integers, optional bodies, headers, servers', () => {
      const full = doc as unknown as {
        servers: { url: string }[];
        components: {
          securitySchemes: Record<string, { bearerFormat?: string }>;
          schemas: Record<
            string,
            { properties: Record<string, { type?: string; format?: string }> }
          >;
        };
        paths: Record<
          string,
          Record<
            string,
            {
              requestBody?: { required?: boolean };
              responses: Record<string, { headers?: Record<string, unknown>; content?: unknown }>;
            }
          >
        >;
      };
      // No hard-wired server: clients resolve paths against where they fetched the document.
      expect(full.servers).toBeUndefined();
      expect(full.components.securitySchemes.bearer.bearerFormat).not.toMatch(/JWT/);
      const schemas = full.components.schemas;
      expect(schemas.CustomerResponse.properties.id).toMatchObject({
        type: 'string',
        format: 'uuid',
      });
      expect(schemas.CustomerResponse.properties.createdAt).toMatchObject({ format: 'date-time' });
      expect(schemas.AdvanceClockDto.properties.seconds.type).toBe('integer');
      expect(schemas.LivenessResponse.properties.status).toMatchObject({ type: 'string' });
      expect(full.paths['/api/settings/api-keys'].post.requestBody?.required).toBe(false);
      expect(full.paths['/api/customers'].post.requestBody?.required).toBe(true);
      for (const methods of Object.values(full.paths)) {
        for (const op of Object.values(methods)) {
          for (const [status, response] of Object.entries(op.responses)) {
            expect(response.headers).toHaveProperty('x-request-id');
            if (status === '429') expect(response.headers).toHaveProperty('Retry-After');
          }
        }
      }
      expect(JSON.stringify(doc)).not.toMatch(/redis/);
      // Money is a decimal string; every number of the API is a whole number.
      expect(JSON.stringify(doc)).not.toMatch(/"type":"number"/);
    });

    it("marks every /api operation but the public checkout and portal with bearer security (the dev routes: the operator's dev key) and documents 401", () => {
      expect(doc.components.securitySchemes.bearer).toMatchObject({
        type: 'http',
        scheme: 'bearer',
      });
      for (const [path, methods] of Object.entries(doc.paths)) {
        for (const op of Object.values(methods)) {
          if (!path.startsWith('/api/')) continue;
          if (path.startsWith('/api/checkout/') || path.startsWith('/api/portal/')) {
            expect(op.security).toBeUndefined(); // public: no API key (the portal: its session)
            continue;
          }
          expect(op.security).toEqual([
            path.startsWith('/api/dev/') ? { devKey: [] } : { bearer: [] },
          ]);
          expect(JSON.stringify(op.responses['401'])).toContain('UNAUTHORIZED');
        }
      }
    });

    it('documents not-found on every operation with an id', () => {
      for (const [path, methods] of Object.entries(doc.paths)) {
        if (!path.includes('{id}')) continue;
        for (const op of Object.values(methods))
          expect(JSON.stringify(op.responses['404'])).toContain('NOT_FOUND');
      }
    });
  });
});

describe('Platform: rate limiting', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '5' } });
  });
  afterAll(() => t.close());

  it('answers 429 RATE_LIMITED past the limit, counted per merchant across all its keys', async () => {
    const a = await t.createMerchant('A');
    const b = await t.createMerchant('B');
    // A second key of A's (made straight through the service: the API call would count too).
    const second = await t.app.get(ApiKeysService).create(a.id, 'second');
    const keys = [a.auth, { Authorization: `Bearer ${second.key}` }];
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await t.http.get('/api/customers').set(keys[i % 2])).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const limited = await t.http.get('/api/customers').set(a.auth).expect(429);
    expect(limited.body.error.code).toBe('RATE_LIMITED');
    await t.http.get('/api/customers').set(b.auth).expect(200);
  });
});

describe('Platform: database outage', () => {
  it('is a 5xx (never a 401) and /health says 503', async () => {
    const t = await createTestApp();
    const m = await t.createMerchant();
    const dbName = new URL(t.databaseUrl).pathname.slice(1);
    try {
      const { adminQuery } = await import('./setup/test-database');
      await adminQuery(`DROP DATABASE "${dbName}" WITH (FORCE)`);
      const health = await t.http.get('/health');
      expect(health.status).toBe(503);
      expect(health.body).toMatchObject({
        status: 'error',
        error: { database: { status: 'down' } },
      });
      const res = await t.http.get('/api/customers').set(m.auth);
      expect(res.status).toBeGreaterThanOrEqual(500);
      expect(JSON.stringify(res.body)).not.toMatch(/SELECT|customers|does not exist|at /);
      // The streamed lists (their own pg client) answer as every other query does.
      for (const path of ['/api/invoices', '/api/subscriptions']) {
        const list = await t.http.get(path).set(m.auth);
        expect([list.status, list.body.error?.code]).toEqual([res.status, res.body.error.code]);
        expect(JSON.stringify(list.body)).not.toMatch(/SELECT|invoices|does not exist|at /);
      }
    } finally {
      await t.close().catch(() => undefined);
    }
  });
});

describe('Platform: health is never rate limited', () => {
  it('answers /health/live past the per-minute limit', async () => {
    const t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '2' } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await t.http.get('/health/live')).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
      const m = await t.createMerchant();
      const api: number[] = [];
      for (let i = 0; i < 3; i++) api.push((await t.http.get('/api/customers').set(m.auth)).status);
      expect(api).toEqual([200, 200, 429]); // the limit itself is in force
    } finally {
      await t.close();
    }
  });
});
