import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { groupRoutes } from './route-index';

/** The service's kinds of route templates, in a declaration order where order matters. */
const ROUTES: readonly [method: 'get' | 'post' | 'patch' | 'delete', path: string][] = [
  ['get', '/api/customers'],
  ['post', '/api/customers'],
  ['get', '/api/customers/export'],
  ['patch', '/api/customers/:id'],
  ['get', '/api/plans/:id'],
  ['post', '/api/invoices/:id/void'],
  ['get', '/api/checkout/invoices/:id/transaction'],
  ['post', '/api/checkout/invoices/:id/transaction'],
  ['get', '/x402/supported'],
  ['get', '/checkout/icon.svg'],
  ['get', '/checkout/invoices/:id'],
  ['get', '/portal/:token'],
  ['get', '/api/customers/:id'],
  ['delete', '/api/settings/api-keys/:id'],
  ['get', '/health'],
  ['get', '/health/live'],
];

interface Answer {
  status: number;
  body: string;
  allow?: string;
}

/** An app with the routes above, a middleware before and a not-found handler after them. */
function appWith(grouped: boolean): Express {
  const app = express();
  // express's error page carries a stack trace outside production: the two apps' traces differ
  app.set('env', 'production');
  app.use((req: Request, res: Response, next: NextFunction) => {
    res.setHeader('x-before', '1');
    next();
  });
  ROUTES.forEach(([method, path], i) =>
    app[method](path, (req: Request, res: Response) => {
      res.json({ route: i, template: req.route?.path, params: req.params });
    }),
  );
  if (grouped) groupRoutes(app.router);
  app.use((req: Request, res: Response) => {
    res.status(404).json({ notFound: `${req.method} ${req.originalUrl}` });
  });
  return app;
}

function listen(app: Express): Promise<Server> {
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
}

/** A raw request: the path is sent as written (no normalisation by a client library). */
function ask(server: Server, method: string, path: string): Promise<Answer> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: `${String(res.headers['x-before'])}|${body}`,
          allow: res.headers.allow,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('groupRoutes', () => {
  let plain: Server;
  let grouped: Server;

  beforeAll(async () => {
    plain = await listen(appWith(false));
    grouped = await listen(appWith(true));
  });
  afterAll(() => {
    plain.close();
    grouped.close();
  });

  it('leaves no route in the app router: one group middleware stands in for them', () => {
    const app = appWith(true);
    expect(app.router.stack.filter((layer) => layer.route !== undefined)).toEqual([]);
    // the middleware before, the groups' middleware, the not-found handler
    expect(app.router.stack).toHaveLength(3);
  });

  const REQUESTS: [string, string][] = [
    ['GET', '/api/customers'],
    ['GET', '/api/customers/'],
    ['GET', '/api/customers?limit=2'],
    ['GET', '/API/Customers/cus_1'],
    ['GET', '/api/customers/export'],
    ['GET', '/api/customers/cus_%41%2F'],
    ['GET', '/api/customers/cus_%E0%A4%A'],
    ['POST', '/api/customers'],
    ['PATCH', '/api/customers/cus_1'],
    ['DELETE', '/api/customers/cus_1'],
    ['HEAD', '/api/customers/cus_1'],
    ['OPTIONS', '/api/customers/cus_1'],
    ['OPTIONS', '/api/checkout/invoices/inv_1/transaction'],
    ['GET', '/api/%63ustomers'],
    ['GET', '/api%2Fcustomers'],
    ['GET', '//api/customers'],
    ['GET', '/api'],
    ['GET', '/api/'],
    ['GET', '/api/plans/pln_1'],
    ['GET', '/api/plans'],
    ['POST', '/api/invoices/inv_1/void'],
    ['POST', '/api/invoices/inv_1/void/'],
    ['GET', '/x402/supported'],
    ['GET', '/x402/SUPPORTED'],
    ['GET', '/x402'],
    ['GET', '/checkout/icon.svg'],
    ['GET', '/checkout/invoices/inv_1'],
    ['GET', '/checkout/plans/pln_1'],
    ['GET', '/portal/tok_abc'],
    ['GET', '/portal/'],
    ['GET', '/Portal/tok_abc/extra'],
    ['DELETE', '/api/settings/api-keys/key_1'],
    ['GET', '/health'],
    ['GET', '/health/'],
    ['GET', '/health/live'],
    ['GET', '/HEALTH/LIVE'],
    ['GET', '/health/live/more'],
    ['GET', '/healthz'],
    ['GET', '/'],
    ['GET', '/nope/at/all'],
    ['GET', 'http://example.test/health/live'],
  ];

  it.each(REQUESTS)('%s %s is answered exactly as without groups', async (method, path) => {
    const expected = await ask(plain, method, path);
    const got = await ask(grouped, method, path);
    expect(got).toEqual(expected);
  });

  it('answers the routes, not only the not-found handler (the comparison above means something)', async () => {
    const live = await ask(grouped, 'GET', '/HEALTH/LIVE');
    expect(live.status).toBe(200);
    expect(JSON.parse(live.body.slice(2))).toEqual({
      route: 15,
      template: '/health/live',
      params: {},
    });
    const byId = await ask(grouped, 'GET', '/api/customers/cus_1');
    expect(JSON.parse(byId.body.slice(2))).toMatchObject({ route: 12, params: { id: 'cus_1' } });
    // declared before `:id`, so it wins, as it does without groups
    const exported = await ask(grouped, 'GET', '/api/customers/export');
    expect(JSON.parse(exported.body.slice(2))).toMatchObject({ route: 2 });
  });

  it('refuses routes it cannot group, routes split by a middleware, routes that take OPTIONS', () => {
    const wild = express();
    wild.get('/:anything', (_req, res) => void res.end());
    expect(() => groupRoutes(wild.router)).toThrow(/does not start with a literal segment/);
    const split = express();
    split.get('/a', (_req, res) => void res.end());
    split.use((_req, _res, next) => next());
    split.get('/b', (_req, res) => void res.end());
    expect(() => groupRoutes(split.router)).toThrow(/not contiguous/);
    for (const declare of ['options', 'all'] as const) {
      const app = express();
      app.get('/a', (_req, res) => void res.end());
      app[declare]('/a', (_req, res) => void res.end());
      expect(() => groupRoutes(app.router)).toThrow(/takes OPTIONS/);
    }
  });
});
