import { Logger } from '@nestjs/common';
import { createServer, Server } from 'node:http';
import request from 'supertest';
import { parseConfig } from '../config/load-config';
import { Metrics } from './metrics';
import { metricsHandler, MetricsServer, MetricsSource } from './metrics-server';

const TEXT = 'text/plain; version=0.0.4; charset=utf-8';
const TOKEN = 'metrics-token-0123456789';

describe('the metrics port', () => {
  let scrapes = 0;
  let failing = false;
  const source: MetricsSource = {
    contentType: TEXT,
    scrape: () => {
      scrapes++;
      return failing
        ? Promise.reject(new Error('boom'))
        : Promise.resolve('# HELP billing_x x\n# TYPE billing_x counter\nbilling_x 1\n');
    },
  };
  const quiet = { error: () => undefined };
  const serve = (token?: string): Server => createServer(metricsHandler(source, token, quiet));

  beforeEach(() => {
    scrapes = 0;
    failing = false;
  });

  it("serves GET /metrics in Prometheus' text format, never cached", async () => {
    const res = await request(serve()).get('/metrics').expect(200);
    expect(res.headers['content-type']).toBe(TEXT);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.text).toBe('# HELP billing_x x\n# TYPE billing_x counter\nbilling_x 1\n');
    // A query string (some scrapers add one) is the same resource.
    await request(serve()).get('/metrics?format=prometheus').expect(200);
  });

  it.each([
    ['GET', '/'],
    ['GET', '/metrics/'],
    ['GET', '/api/metrics'],
    ['GET', '/health'],
    ['POST', '/metrics'],
    ['DELETE', '/metrics'],
  ])('answers %s %s with 404 NOT_FOUND, without a scrape', async (method, path) => {
    const res = await request(serve())[method.toLowerCase() as 'get'](path).expect(404);
    expect(res.body).toEqual({
      error: { code: 'NOT_FOUND', message: 'The metrics are served at GET /metrics' },
    });
    expect(scrapes).toBe(0);
  });

  describe('with METRICS_TOKEN', () => {
    it.each([
      ['no Authorization header', undefined],
      ['a wrong token', `Bearer ${TOKEN}x`],
      ['a prefix of the token', `Bearer ${TOKEN.slice(0, 10)}`],
      ['the token under another scheme', `Basic ${TOKEN}`],
      ['the bare token', TOKEN],
      ['an empty bearer', 'Bearer '],
    ])(
      'refuses %s: 401 UNAUTHORIZED with a Bearer challenge, without a scrape',
      async (_, header) => {
        const req = request(serve(TOKEN)).get('/metrics');
        if (header !== undefined) req.set('authorization', header);
        const res = await req.expect(401);
        expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
        expect(res.body).toEqual({
          error: { code: 'UNAUTHORIZED', message: 'A valid metrics token is required' },
        });
        expect(scrapes).toBe(0);
      },
    );

    it('serves the metrics for Authorization: Bearer <token> (the scheme in any case)', async () => {
      await request(serve(TOKEN))
        .get('/metrics')
        .set('authorization', `Bearer ${TOKEN}`)
        .expect(200);
      await request(serve(TOKEN))
        .get('/metrics')
        .set('authorization', `bearer ${TOKEN}`)
        .expect(200);
      expect(scrapes).toBe(2);
    });
  });

  it('a scrape that fails is a 500 INTERNAL_ERROR that says nothing of the cause', async () => {
    failing = true;
    const res = await request(serve()).get('/metrics').expect(500);
    expect(res.body).toEqual({
      error: { code: 'INTERNAL_ERROR', message: 'The metrics could not be rendered' },
    });
  });
});

describe('MetricsServer: its own port, on every role', () => {
  beforeAll(() => Logger.overrideLogger(false));

  it('without METRICS_PORT there is no metrics server', async () => {
    const server = new MetricsServer(new Metrics(), parseConfig({}));
    await server.onApplicationBootstrap();
    expect(server.port).toBeUndefined();
    await server.onApplicationShutdown();
  });

  it.each(['all', 'api', 'worker'])(
    'ROLE=%s: METRICS_PORT=0 listens on a free port, apart from the API; shutdown closes it',
    async (role) => {
      const config = parseConfig({ ROLE: role, METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' });
      const server = new MetricsServer(new Metrics(), config);
      await server.onApplicationBootstrap();
      const port = server.port!;
      expect(port).toBeGreaterThan(0);
      expect(port).not.toBe(config.PORT);
      const res = await request(`http://127.0.0.1:${port}`).get('/metrics').expect(200);
      expect(res.text).toMatch(/^# TYPE billing_charges_total counter$/m);
      await server.onApplicationShutdown();
      expect(server.port).toBeUndefined();
      await expect(request(`http://127.0.0.1:${port}`).get('/metrics')).rejects.toThrow(
        /ECONNREFUSED/,
      );
    },
  );

  it('a port taken stops the start with a message naming METRICS_PORT', async () => {
    const first = new MetricsServer(
      new Metrics(),
      parseConfig({ METRICS_PORT: '0', METRICS_HOST: '127.0.0.1' }),
    );
    await first.onApplicationBootstrap();
    const taken = String(first.port);
    const second = new MetricsServer(
      new Metrics(),
      parseConfig({ METRICS_PORT: taken, METRICS_HOST: '127.0.0.1' }),
    );
    await expect(second.onApplicationBootstrap()).rejects.toThrow(
      `The metrics server cannot listen (METRICS_PORT=${taken})`,
    );
    await first.onApplicationShutdown();
  });
});
