import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';

describe('Webhook configuration', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let globex: TestMerchant;

  beforeAll(async () => {
    t = await createTestApp();
    acme = await t.createMerchant('Acme');
    globex = await t.createMerchant('Globex');
  });
  afterAll(() => t.close());

  it('starts with no endpoint', async () => {
    const res = await t.http.get('/api/settings/webhook').set(acme.auth).expect(200);
    expect(res.body).toEqual({ webhookUrl: null });
  });

  it('sets, reads back and removes the endpoint, per merchant', async () => {
    const url = 'https://acme.example.com/hooks';
    const put = await t.http
      .put('/api/settings/webhook')
      .set(acme.auth)
      .send({ webhookUrl: url })
      .expect(200);
    expect(put.body).toEqual({ webhookUrl: url });
    expect((await t.http.get('/api/settings/webhook').set(acme.auth)).body).toEqual({
      webhookUrl: url,
    });
    expect((await t.http.get('/api/settings/webhook').set(globex.auth)).body).toEqual({
      webhookUrl: null,
    });
    const [row] = await t.sql('SELECT webhook_url FROM merchants WHERE id = $1', [acme.id]);
    expect(row.webhook_url).toBe(url);
    const cleared = await t.http
      .put('/api/settings/webhook')
      .set(acme.auth)
      .send({ webhookUrl: null })
      .expect(200);
    expect(cleared.body).toEqual({ webhookUrl: null });
    const [after] = await t.sql('SELECT webhook_url FROM merchants WHERE id = $1', [acme.id]);
    expect(after.webhook_url).toBeNull();
  });

  it('accepts http and loopback on localnet (the default cluster)', async () => {
    await t.http
      .put('/api/settings/webhook')
      .set(acme.auth)
      .send({ webhookUrl: 'http://127.0.0.1:4000/hook' })
      .expect(200);
  });

  it.each([
    ['not a URL', 'not a url'],
    ['ftp scheme', 'ftp://example.com/x'],
    ['credentials in the URL', 'https://user:pass@example.com/x'],
    ['missing field', undefined],
    ['a number', 42],
  ])('rejects %s with VALIDATION_ERROR and keeps the old value', async (_, webhookUrl) => {
    await t.http
      .put('/api/settings/webhook')
      .set(globex.auth)
      .send({ webhookUrl: 'https://globex.example.com/keep' })
      .expect(200);
    const res = await t.http
      .put('/api/settings/webhook')
      .set(globex.auth)
      .send(webhookUrl === undefined ? {} : { webhookUrl })
      .expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details[0].field).toBe('webhookUrl');
    const [row] = await t.sql('SELECT webhook_url FROM merchants WHERE id = $1', [globex.id]);
    expect(row.webhook_url).toBe('https://globex.example.com/keep');
  });

  describe('signing secret', () => {
    it("returns the merchant's secret, and only to that merchant", async () => {
      const a = await t.http.get('/api/settings/webhook/secret').set(acme.auth).expect(200);
      expect(a.body).toEqual({ secret: acme.webhookSecret, previousSecretExpiresAt: null });
      const g = await t.http.get('/api/settings/webhook/secret').set(globex.auth).expect(200);
      expect(g.body.secret).toBe(globex.webhookSecret);
      expect(a.body.secret).toMatch(/^whsec_[1-9A-HJ-NP-Za-km-z]{40,50}$/);
    });

    it('rotation issues a new secret and keeps the old one for 24 hours', async () => {
      const m = await t.createMerchant('Rotator');
      const rotated = await t.http
        .post('/api/settings/webhook/secret/rotate')
        .set(m.auth)
        .expect(200);
      expect(rotated.body.secret).not.toBe(m.webhookSecret);
      expect(Date.parse(rotated.body.previousSecretExpiresAt) - t.clock.now().getTime()).toBe(
        24 * 3600 * 1000,
      );
      const [row] = await t.sql(
        'SELECT webhook_secret, previous_webhook_secret FROM merchants WHERE id = $1',
        [m.id],
      );
      expect(row).toEqual({
        webhook_secret: rotated.body.secret,
        previous_webhook_secret: m.webhookSecret,
      });
      const read = await t.http.get('/api/settings/webhook/secret').set(m.auth).expect(200);
      expect(read.body).toEqual(rotated.body);
      t.clock.advance(24 * 3600 * 1000 + 1);
      const later = await t.http.get('/api/settings/webhook/secret').set(m.auth).expect(200);
      expect(later.body).toEqual({ secret: rotated.body.secret, previousSecretExpiresAt: null });
    });
  });
});

describe('Webhook configuration outside localnet', () => {
  let t: TestApp;
  let m: TestMerchant;

  beforeAll(async () => {
    t = await createTestApp({ env: { SOLANA_CLUSTER: 'devnet' } });
    m = await t.createMerchant();
  });
  afterAll(() => t.close());

  it('accepts a public https URL', async () => {
    await t.http
      .put('/api/settings/webhook')
      .set(m.auth)
      .send({ webhookUrl: 'https://example.com/h' })
      .expect(200);
  });

  it.each([
    'http://example.com/h',
    'https://localhost/h',
    'https://127.0.0.1/h',
    'https://10.1.2.3/h',
    'https://192.168.0.10/h',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/h',
  ])('refuses %s', async (webhookUrl) => {
    const res = await t.http
      .put('/api/settings/webhook')
      .set(m.auth)
      .send({ webhookUrl })
      .expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    const [row] = await t.sql('SELECT webhook_url FROM merchants WHERE id = $1', [m.id]);
    expect(row.webhook_url).toBe('https://example.com/h');
  });
});
