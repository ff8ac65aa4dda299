import { BadInput, badInputFailures, tablesSnapshot } from './helpers/bad-input';
import { createTestApp, randomWallet, TestApp, TestMerchant } from './helpers/test-app';

const VALID_WALLET = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
const long = (n: number) => 'x'.repeat(n);

/**
 * Every row is a request a careless or hostile client could send. Each must get its 4xx and
 * code, and leave the database exactly as it was (`lastUsedAt` aside, which records the use).
 */
function table(customerId: string): BadInput[] {
  const C = '/api/customers';
  const P = `/api/customers/${customerId}`;
  return [
    // POST /api/customers
    {
      name: 'missing walletAddress',
      method: 'post',
      path: C,
      body: {},
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'walletAddress',
    },
    {
      name: 'empty walletAddress',
      method: 'post',
      path: C,
      body: { walletAddress: '' },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'walletAddress',
    },
    {
      name: 'walletAddress 31 chars',
      method: 'post',
      path: C,
      body: { walletAddress: VALID_WALLET.slice(0, 31) },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'walletAddress',
    },
    {
      name: 'walletAddress 45 chars',
      method: 'post',
      path: C,
      body: { walletAddress: `${VALID_WALLET}1` },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'walletAddress',
    },
    {
      name: 'walletAddress with 0OIl',
      method: 'post',
      path: C,
      body: { walletAddress: `0OIl${VALID_WALLET.slice(4)}` },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'walletAddress',
    },
    {
      name: 'walletAddress decoding to 33 bytes',
      method: 'post',
      path: C,
      body: { walletAddress: 'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz' },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'walletAddress',
    },
    {
      name: 'walletAddress a number',
      method: 'post',
      path: C,
      body: { walletAddress: 12345 },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'walletAddress',
    },
    {
      name: 'walletAddress an array',
      method: 'post',
      path: C,
      body: { walletAddress: [VALID_WALLET] },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'walletAddress',
    },
    {
      name: 'walletAddress null',
      method: 'post',
      path: C,
      body: { walletAddress: null },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'walletAddress',
    },
    {
      name: 'invalid email',
      method: 'post',
      path: C,
      body: { walletAddress: VALID_WALLET, email: 'nope' },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'email',
    },
    // Not plain mailboxes: valid RFC 5321 at most, a header injection at worst.
    ...[
      '"a\r\nBcc: x@y"@b.example',
      '"ada lovelace"@example.com',
      'ada@example.com\r\nBcc: x@y.example',
      'Ada <ada@example.com>',
      'ada@[127.0.0.1]',
    ].map((email) => ({
      name: `email ${JSON.stringify(email)}`,
      method: 'post' as const,
      path: C,
      body: { walletAddress: VALID_WALLET, email },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'email',
    })),
    {
      name: 'email null on create',
      method: 'post',
      path: C,
      body: { walletAddress: VALID_WALLET, email: null },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'email',
    },
    {
      name: 'email a number',
      method: 'post',
      path: C,
      body: { walletAddress: VALID_WALLET, email: 7 },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'email',
    },
    {
      name: 'email 255 chars',
      method: 'post',
      path: C,
      body: { walletAddress: VALID_WALLET, email: `${long(243)}@example.com` },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'email',
    },
    {
      name: 'label 101 chars',
      method: 'post',
      path: C,
      body: { walletAddress: VALID_WALLET, label: long(101) },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'label',
    },
    {
      // 100 characters and an emoji variation selector: 101 as PostgreSQL counts (was a 500)
      name: 'label 100 chars + U+FE0F',
      method: 'post',
      path: C,
      body: { walletAddress: VALID_WALLET, label: `${long(100)}\uFE0F` },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'label',
    },
    {
      name: 'label empty',
      method: 'post',
      path: C,
      body: { walletAddress: VALID_WALLET, label: '' },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'label',
    },
    {
      name: 'label an object',
      method: 'post',
      path: C,
      body: { walletAddress: VALID_WALLET, label: { a: 1 } },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'label',
    },
    {
      name: 'unknown field',
      method: 'post',
      path: C,
      body: { walletAddress: VALID_WALLET, merchantId: 'x' },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'merchantId',
    },
    {
      name: 'prototype pollution key',
      method: 'post',
      path: C,
      raw: `{"walletAddress":"${VALID_WALLET}","__proto__":{"admin":true}}`,
      contentType: 'application/json',
      status: 400,
      code: 'VALIDATION_ERROR',
    },
    {
      name: 'malformed JSON',
      method: 'post',
      path: C,
      raw: '{"walletAddress": ',
      contentType: 'application/json',
      status: 400,
      code: 'VALIDATION_ERROR',
    },
    {
      name: 'JSON array body',
      method: 'post',
      path: C,
      raw: '[]',
      contentType: 'application/json',
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'body',
    },
    {
      name: 'JSON string body',
      method: 'post',
      path: C,
      raw: '"hello"',
      contentType: 'application/json',
      status: 400,
      code: 'VALIDATION_ERROR',
    },
    {
      name: 'JSON null body',
      method: 'post',
      path: C,
      raw: 'null',
      contentType: 'application/json',
      status: 400,
      code: 'VALIDATION_ERROR',
    },
    {
      name: 'non-JSON content type',
      method: 'post',
      path: C,
      raw: `walletAddress=${VALID_WALLET}`,
      contentType: 'application/x-www-form-urlencoded',
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
    },
    {
      name: 'huge body',
      method: 'post',
      path: C,
      raw: JSON.stringify({ walletAddress: VALID_WALLET, label: long(200_000) }),
      contentType: 'application/json',
      status: 413,
      code: 'PAYLOAD_TOO_LARGE',
    },
    {
      name: 'NUL character in label',
      method: 'post',
      path: C,
      body: { walletAddress: VALID_WALLET, label: 'a\u0000b' },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'label',
    },
    // GET /api/customers
    {
      name: 'NUL character in search',
      method: 'get',
      path: `${C}?search=%00`,
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'search',
    },
    {
      name: 'search 201 chars',
      method: 'get',
      path: `${C}?search=${long(201)}`,
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'search',
    },
    {
      name: 'search repeated',
      method: 'get',
      path: `${C}?search=a&search=b`,
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'search',
    },
    {
      name: 'unknown query parameter',
      method: 'get',
      path: `${C}?limit=5&sort=asc`,
      status: 400,
      code: 'VALIDATION_ERROR',
    },
    // GET/PATCH /api/customers/:id
    { name: 'GET non-UUID id', method: 'get', path: `${C}/123`, status: 404, code: 'NOT_FOUND' },
    {
      name: 'GET SQL in id',
      method: 'get',
      path: `${C}/'%20OR%201=1--`,
      status: 404,
      code: 'NOT_FOUND',
    },
    {
      name: 'PATCH non-UUID id',
      method: 'patch',
      path: `${C}/not-a-uuid`,
      body: { label: 'x' },
      status: 404,
      code: 'NOT_FOUND',
    },
    {
      name: 'PATCH unknown UUID',
      method: 'patch',
      path: `${C}/00000000-0000-4000-8000-000000000000`,
      body: { label: 'x' },
      status: 404,
      code: 'NOT_FOUND',
    },
    {
      name: 'PATCH label 101 chars',
      method: 'patch',
      path: P,
      body: { label: long(101) },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'label',
    },
    {
      name: 'PATCH label 99 chars + two U+FE0E',
      method: 'patch',
      path: P,
      body: { label: `${long(99)}\uFE0E\uFE0E` },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'label',
    },
    {
      name: 'PATCH email invalid',
      method: 'patch',
      path: P,
      body: { email: 'a@' },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'email',
    },
    {
      name: 'PATCH walletAddress (immutable)',
      method: 'patch',
      path: P,
      body: { walletAddress: VALID_WALLET },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'walletAddress',
    },
    {
      name: 'PATCH label a boolean',
      method: 'patch',
      path: P,
      body: { label: true },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'label',
    },
    {
      name: 'PATCH label empty',
      method: 'patch',
      path: P,
      body: { label: '' },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'label',
    },
    {
      name: 'PATCH malformed JSON',
      method: 'patch',
      path: P,
      raw: '{label:1}',
      contentType: 'application/json',
      status: 400,
      code: 'VALIDATION_ERROR',
    },
    // API keys
    {
      name: 'API key label 101 chars',
      method: 'post',
      path: '/api/settings/api-keys',
      body: { label: long(101) },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'label',
    },
    {
      name: 'API key label a number',
      method: 'post',
      path: '/api/settings/api-keys',
      body: { label: 5 },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'label',
    },
    {
      name: 'API key label empty',
      method: 'post',
      path: '/api/settings/api-keys',
      body: { label: '' },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'label',
    },
    {
      name: 'API key unknown field',
      method: 'post',
      path: '/api/settings/api-keys',
      body: { label: 'a', scopes: ['all'] },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'scopes',
    },
    {
      name: 'API key DELETE non-UUID',
      method: 'delete',
      path: '/api/settings/api-keys/xyz',
      status: 404,
      code: 'NOT_FOUND',
    },
    {
      name: 'API key DELETE unknown UUID',
      method: 'delete',
      path: '/api/settings/api-keys/00000000-0000-4000-8000-000000000000',
      status: 404,
      code: 'NOT_FOUND',
    },
    // Webhook configuration
    {
      name: 'webhook URL missing',
      method: 'put',
      path: '/api/settings/webhook',
      body: {},
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'webhookUrl',
    },
    {
      name: 'webhook URL not a URL',
      method: 'put',
      path: '/api/settings/webhook',
      body: { webhookUrl: 'hello' },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'webhookUrl',
    },
    {
      name: 'webhook URL javascript:',
      method: 'put',
      path: '/api/settings/webhook',
      body: { webhookUrl: 'javascript:alert(1)' },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'webhookUrl',
    },
    {
      name: 'webhook URL 2049 chars',
      method: 'put',
      path: '/api/settings/webhook',
      body: { webhookUrl: `https://example.com/${long(2030)}` },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'webhookUrl',
    },
    {
      name: 'webhook URL with a NUL character',
      method: 'put',
      path: '/api/settings/webhook',
      body: { webhookUrl: 'https://example.com/a\u0000b' },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'webhookUrl',
    },
    {
      name: 'API key label with a NUL character',
      method: 'post',
      path: '/api/settings/api-keys',
      body: { label: '\u0000' },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'label',
    },
    {
      name: 'webhook unknown field',
      method: 'put',
      path: '/api/settings/webhook',
      body: { webhookUrl: null, secret: 'x' },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'secret',
    },
    {
      name: 'webhook rotate with a body field',
      method: 'post',
      path: '/api/settings/webhook/secret/rotate',
      raw: '{"secret":',
      contentType: 'application/json',
      status: 400,
      code: 'VALIDATION_ERROR',
    },
    // Localnet dev endpoints
    ...(['/api/dev/faucet', '/api/dev/clock/advance'] as const).flatMap((path) => [
      {
        name: `${path}: malformed JSON`,
        method: 'post' as const,
        path,
        raw: '{"seconds": ',
        contentType: 'application/json',
        status: 400,
        code: 'VALIDATION_ERROR',
      },
      {
        name: `${path}: JSON array body`,
        method: 'post' as const,
        path,
        raw: '[]',
        contentType: 'application/json',
        status: 400,
        code: 'VALIDATION_ERROR',
        field: 'body',
      },
      {
        name: `${path}: non-JSON content type`,
        method: 'post' as const,
        path,
        raw: 'seconds=5',
        contentType: 'application/x-www-form-urlencoded',
        status: 415,
        code: 'UNSUPPORTED_MEDIA_TYPE',
      },
    ]),
    {
      name: 'faucet: null amount',
      method: 'post',
      path: '/api/dev/faucet',
      body: { walletAddress: VALID_WALLET, mint: 'USDC', amount: null },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'amount',
    },
    {
      name: 'faucet: amount with exponent',
      method: 'post',
      path: '/api/dev/faucet',
      body: { walletAddress: VALID_WALLET, mint: 'USDC', amount: '1e3' },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'amount',
    },
    {
      name: 'clock: seconds too large',
      method: 'post',
      path: '/api/dev/clock/advance',
      body: { seconds: 315_360_001 },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'seconds',
    },
    {
      name: 'clock: seconds as huge number',
      method: 'post',
      path: '/api/dev/clock/advance',
      body: { seconds: 1e300 },
      status: 400,
      code: 'VALIDATION_ERROR',
      field: 'seconds',
    },
    // Routing
    { name: 'unknown route', method: 'get', path: '/api/unknown', status: 404, code: 'NOT_FOUND' },
    { name: 'unsupported method', method: 'delete', path: C, status: 404, code: 'NOT_FOUND' },
    {
      name: 'bad percent-encoding',
      method: 'get',
      path: `${C}/%E0%A4%A`,
      status: 404,
      code: 'NOT_FOUND',
    },
  ] as BadInput[];
}

describe('Bad input', () => {
  let t: TestApp;
  let m: TestMerchant;
  let customerId: string;

  beforeAll(async () => {
    // The schedule's sweeps off: the tables must show only what the bad requests did (a sweep
    // on a busy machine writes payment-scan cursors in the middle of the table).
    t = await createTestApp({
      env: { WATCH_INTERVAL_MS: '3600000', CHARGE_RUN_INTERVAL_MS: '3600000' },
    });
    m = await t.createMerchant('Careful');
    const c = await t.http
      .post('/api/customers')
      .set(m.auth)
      .send({ walletAddress: randomWallet(), email: 'keep@example.com', label: 'Keep' })
      .expect(201);
    customerId = c.body.id;
    await t.http
      .put('/api/settings/webhook')
      .set(m.auth)
      .send({ webhookUrl: 'https://example.com/keep' })
      .expect(200);
  });
  afterAll(() => t.close());

  const snapshot = () =>
    tablesSnapshot(t, {
      merchants: 'merchants',
      customers: 'customers',
      // lastUsedAt aside, which records the use
      api_keys: `(SELECT id, merchant_id, label, key_hash, prefix, revoked_at, created_at,
                    updated_at FROM api_keys)`,
    });

  it('has at least 40 cases', () => {
    expect(table('id').length).toBeGreaterThanOrEqual(40);
  });

  it('answers every bad input with its 4xx and code, and changes nothing', async () => {
    const before = await snapshot();
    const failures = await badInputFailures(t, m, table(customerId));
    expect(failures).toEqual([]);
    expect(await snapshot()).toBe(before);
  });
});
