import { createServer, Server } from 'node:http';
import type { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import type { AppConfig } from '../config/app-config';
import { checkedTargetLookup, describeFailure, WebhookSender } from './webhook-sender';

/** A resolver answering from a fixed table, as `dns.lookup` with `all: true` would. */
function fakeDns(table: Record<string, LookupAddress[]>): typeof dnsLookup {
  return ((
    hostname: string,
    _options: unknown,
    callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
  ) => {
    const answer = table[hostname];
    if (!answer) {
      const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      error.code = 'ENOTFOUND';
      callback(error, []);
    } else callback(null, answer);
  }) as unknown as typeof dnsLookup;
}

function resolveWith(
  lookup: ReturnType<typeof checkedTargetLookup>,
  hostname: string,
  all: boolean,
): Promise<{ error: NodeJS.ErrnoException | null; address: unknown; family?: number }> {
  return new Promise((resolve) =>
    lookup(hostname, { all }, (error, address, family) => resolve({ error, address, family })),
  );
}

describe('checkedTargetLookup', () => {
  const lookup = checkedTargetLookup(
    fakeDns({
      'public.test': [{ address: '93.184.215.14', family: 4 }],
      'dual.test': [
        { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
        { address: '93.184.215.14', family: 4 },
      ],
      'loopback.test': [{ address: '127.0.0.1', family: 4 }],
      'metadata.test': [{ address: '169.254.169.254', family: 4 }],
      'private.test': [{ address: '10.0.0.7', family: 4 }],
      'v6-loopback.test': [{ address: '::1', family: 6 }],
      'mixed.test': [
        { address: '93.184.215.14', family: 4 },
        { address: '192.168.1.10', family: 4 },
      ],
    }),
  );

  it('on localnet: loopback and private hosts pass, link-local and metadata never', async () => {
    const local = checkedTargetLookup(
      fakeDns({
        'loopback.test': [{ address: '127.0.0.1', family: 4 }],
        'private.test': [{ address: '10.0.0.7', family: 4 }],
        'metadata.test': [{ address: '169.254.169.254', family: 4 }],
        'mapped.test': [{ address: '::ffff:169.254.169.254', family: 6 }],
        'aws-v6.test': [{ address: 'fd00:ec2::254', family: 6 }],
      }),
      true,
    );
    expect((await resolveWith(local, 'loopback.test', false)).error).toBeNull();
    expect((await resolveWith(local, 'private.test', false)).error).toBeNull();
    for (const host of ['metadata.test', 'mapped.test', 'aws-v6.test']) {
      expect((await resolveWith(local, host, false)).error).toMatchObject({ code: 'EBLOCKED' });
    }
  });

  it('passes public addresses through, one or all', async () => {
    expect(await resolveWith(lookup, 'public.test', false)).toEqual({
      error: null,
      address: '93.184.215.14',
      family: 4,
    });
    const all = await resolveWith(lookup, 'dual.test', true);
    expect(all.error).toBeNull();
    expect(all.address).toHaveLength(2);
  });

  it.each(['loopback.test', 'metadata.test', 'private.test', 'v6-loopback.test', 'mixed.test'])(
    'refuses %s (any non-public address in the answer)',
    async (host) => {
      const { error } = await resolveWith(lookup, host, false);
      expect(error?.code).toBe('EBLOCKED');
      expect(error?.message).toMatch(/non-public address/);
    },
  );

  it('passes resolver errors on', async () => {
    expect((await resolveWith(lookup, 'nowhere.test', false)).error?.code).toBe('ENOTFOUND');
  });

  describe('as the socket lookup of an undici agent', () => {
    let server: Server;
    let port: number;
    let hits = 0;

    beforeAll(async () => {
      server = createServer((_req, res) => {
        hits++;
        res.end('ok');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('never connects to a name that resolves to loopback', async () => {
      const agent = new Agent({ connect: { lookup } });
      await expect(
        request(`http://loopback.test:${port}/`, { method: 'POST', body: '{}', dispatcher: agent }),
      ).rejects.toMatchObject({ code: 'EBLOCKED' });
      expect(hits).toBe(0);
      await agent.close();
    });
  });
});

describe('describeFailure: how a delivery failed, never what the network knows', () => {
  const failure = (code: string, message = `${code} something internal 10.0.0.7`) =>
    Object.assign(new Error(message), { code });

  it.each([
    [
      failure('ENOTFOUND', 'getaddrinfo ENOTFOUND db.internal'),
      'Endpoint refused: its host name does not resolve to an address webhooks may be sent to',
    ],
    [
      failure('EAI_AGAIN'),
      'Endpoint refused: its host name does not resolve to an address webhooks may be sent to',
    ],
    [
      failure('EBLOCKED', 'db.internal resolves to a non-public address (10.0.0.7); refused'),
      'Endpoint refused: its host name does not resolve to an address webhooks may be sent to',
    ],
    [failure('ECONNREFUSED'), 'Connection refused by the endpoint'],
    [failure('ECONNRESET'), 'Connection closed by the endpoint before it answered'],
    [failure('EHOSTUNREACH'), 'Endpoint unreachable'],
    [failure('UND_ERR_CONNECT_TIMEOUT'), 'Timed out after 5000 ms'],
    [Object.assign(new Error('aborted'), { name: 'TimeoutError' }), 'Timed out after 5000 ms'],
    [failure('CERT_HAS_EXPIRED'), 'TLS failed (CERT_HAS_EXPIRED)'],
    [
      Object.assign(new Error('fetch failed'), { cause: failure('ECONNREFUSED') }),
      'Connection refused by the endpoint',
    ],
    [new Error('something odd at 10.0.0.7'), 'Delivery failed: no HTTP answer'],
  ])('%s -> %s', (error, expected) => {
    const described = describeFailure(error, 5000);
    expect(described).toBe(expected);
    expect(described).not.toMatch(/10\.0\.0\.7|internal|ENOTFOUND|EBLOCKED|getaddrinfo/);
  });
});

describe('WebhookSender.post: one deadline for the whole POST', () => {
  let server: Server;
  let port: number;
  let sender: WebhookSender;
  /** What the server does with each request. */
  let behaviour: 'answer' | 'hang' | 'hang-body';

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      if (behaviour === 'answer') res.end('ok');
      else if (behaviour === 'hang-body') res.writeHead(200).write('partial');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    const config = { isLocalnet: true, WEBHOOK_CONCURRENCY: 4, WEBHOOK_TIMEOUT_MS: 1_000 };
    sender = new WebhookSender(config as AppConfig, fakeDns({}));
  });
  afterAll(async () => {
    await sender.onApplicationShutdown();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('an answer within it is its status', async () => {
    behaviour = 'answer';
    expect(await sender.post(`http://127.0.0.1:${port}/`, '{}', {})).toEqual({ status: 200 });
  });

  it('no answer within it: timed out, once the deadline has passed', async () => {
    behaviour = 'hang';
    const started = performance.now();
    expect(await sender.post(`http://127.0.0.1:${port}/`, '{}', {})).toEqual({
      error: 'Timed out after 1000 ms',
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(995);
  });

  it('a body that never ends is cut at the deadline: the status that came is the answer', async () => {
    behaviour = 'hang-body';
    const started = performance.now();
    expect(await sender.post(`http://127.0.0.1:${port}/`, '{}', {})).toEqual({ status: 200 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(995);
  });

  it('a URL the rule refuses is refused every time, without a connection', async () => {
    const refused = {
      error: 'Endpoint refused: must not point at a link-local or cloud metadata address',
    };
    expect(await sender.post('http://169.254.169.254/latest', '{}', {})).toEqual(refused);
    expect(await sender.post('http://169.254.169.254/latest', '{}', {})).toEqual(refused);
  });
});
