import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';

const KEY_FIELDS = ['createdAt', 'id', 'label', 'lastUsedAt', 'prefix'];

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (await check()) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`condition not met within ${timeoutMs} ms`);
}

describe('API keys and authentication', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let globex: TestMerchant;

  beforeAll(async () => {
    t = await createTestApp({ env: { API_KEY_LAST_USED_FLUSH_MS: '200' } });
    acme = await t.createMerchant('Acme');
    globex = await t.createMerchant('Globex');
  });
  afterAll(() => t.close());

  describe('authentication', () => {
    it.each([
      ['no Authorization header', undefined],
      ['an empty bearer token', 'Bearer '],
      ['another scheme', 'Basic dXNlcjpwYXNz'],
      ['an unknown key', 'Bearer sbk_11111111111111111111111111111111111111111111'],
      ['a malformed key', 'Bearer not-a-key'],
    ])('rejects %s with 401 UNAUTHORIZED', async (_, header) => {
      const req = t.http.get('/api/customers');
      if (header !== undefined) req.set('Authorization', header);
      const res = await req.expect(401);
      expect(res.body.error).toMatchObject({ code: 'UNAUTHORIZED' });
      expect(res.body.error.requestId).toBe(res.headers['x-request-id']);
    });

    it('does not accept a key in the query string', async () => {
      const res = await t.http
        .get('/api/customers')
        .query({ access_token: acme.apiKey })
        .expect(401);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
    });

    it('accepts the scheme in any case', async () => {
      await t.http.get('/api/customers').set('Authorization', `bearer ${acme.apiKey}`).expect(200);
    });

    it('stores keys only as SHA-256 with an 8-character hash prefix', async () => {
      const { createHash } = await import('node:crypto');
      const hash = createHash('sha256').update(acme.apiKey).digest('hex');
      const rows = await t.sql<{ key_hash: string; prefix: string }>(
        'SELECT key_hash, prefix FROM api_keys WHERE merchant_id = $1',
        [acme.id],
      );
      expect(rows).toContainEqual({ key_hash: hash, prefix: hash.slice(0, 8) });
      const dump = JSON.stringify(await t.sql('SELECT * FROM api_keys'));
      expect(dump).not.toContain(acme.apiKey);
    });
  });

  describe('POST /api/settings/api-keys', () => {
    it('creates a key that works at once and shows its secret only here', async () => {
      const res = await t.http
        .post('/api/settings/api-keys')
        .set(acme.auth)
        .send({ label: 'CI' })
        .expect(201);
      expect(Object.keys(res.body).sort()).toEqual([...KEY_FIELDS, 'key'].sort());
      expect(res.body.key).toMatch(/^sbk_[1-9A-HJ-NP-Za-km-z]{40,50}$/);
      expect(res.body).toMatchObject({ label: 'CI', lastUsedAt: null });
      expect(res.body.prefix).toMatch(/^[0-9a-f]{8}$/);
      await t.http.get('/api/customers').set('Authorization', `Bearer ${res.body.key}`).expect(200);
      const list = await t.http.get('/api/settings/api-keys').set(acme.auth).expect(200);
      expect(JSON.stringify(list.body)).not.toContain(res.body.key);
      const listed = list.body.find((k: { id: string }) => k.id === res.body.id);
      expect(Object.keys(listed).sort()).toEqual(KEY_FIELDS);
    });

    it('accepts no body at all (label null)', async () => {
      const res = await t.http.post('/api/settings/api-keys').set(acme.auth).expect(201);
      expect(res.body.label).toBeNull();
    });
  });

  describe('GET /api/settings/api-keys', () => {
    it('lists only active keys of the merchant, newest first', async () => {
      const m = await t.createMerchant('Keys');
      t.clock.advance(1000);
      const second = await t.http
        .post('/api/settings/api-keys')
        .set(m.auth)
        .send({ label: 'second' });
      t.clock.advance(1000);
      const third = await t.http
        .post('/api/settings/api-keys')
        .set(m.auth)
        .send({ label: 'third' });
      await t.http.delete(`/api/settings/api-keys/${second.body.id}`).set(m.auth).expect(200);
      const res = await t.http.get('/api/settings/api-keys').set(m.auth).expect(200);
      expect(res.body.map((k: { label: string }) => k.label)).toEqual(['third', 'Initial key']);
      expect(res.body[0].id).toBe(third.body.id);
      const [{ ids }] = await t.sql<{ ids: string[] }>(
        'SELECT array_agg(id) AS ids FROM api_keys WHERE merchant_id = $1 AND revoked_at IS NULL',
        [m.id],
      );
      expect(res.body.map((k: { id: string }) => k.id).sort()).toEqual([...ids].sort());
    });
  });

  describe('lastUsedAt', () => {
    it('records the latest authenticated use within 2 seconds', async () => {
      const m = await t.createMerchant('Usage');
      const [{ last_used_at: before }] = await t.sql<{ last_used_at: Date | null }>(
        'SELECT last_used_at FROM api_keys WHERE merchant_id = $1',
        [m.id],
      );
      expect(before).toBeNull();
      await t.http.get('/api/customers').set(m.auth).expect(200);
      const used = t.clock.now();
      // Flushed in the background: wait for it (how soon is measured in bench/, not here).
      await waitFor(async () => {
        const [row] = await t.sql<{ last_used_at: Date | null }>(
          'SELECT last_used_at FROM api_keys WHERE merchant_id = $1',
          [m.id],
        );
        return row.last_used_at !== null && row.last_used_at.getTime() === used.getTime();
      }, 30_000);
      const list = await t.http.get('/api/settings/api-keys').set(m.auth).expect(200);
      expect(list.body[0].lastUsedAt).not.toBeNull();
    });
  });

  describe('DELETE /api/settings/api-keys/:id', () => {
    it('revokes: the key gets 401 at once, the row keeps revoked_at, the list drops it', async () => {
      const created = await t.http
        .post('/api/settings/api-keys')
        .set(acme.auth)
        .send({ label: 'tmp' });
      const auth = { Authorization: `Bearer ${created.body.key}` };
      await t.http.get('/api/customers').set(auth).expect(200); // now cached
      const res = await t.http
        .delete(`/api/settings/api-keys/${created.body.id}`)
        .set(acme.auth)
        .expect(200);
      expect(res.body).toEqual({ success: true });
      const denied = await t.http.get('/api/customers').set(auth).expect(401);
      expect(denied.body.error.code).toBe('UNAUTHORIZED');
      const [row] = await t.sql<{ revoked_at: Date | null }>(
        'SELECT revoked_at FROM api_keys WHERE id = $1',
        [created.body.id],
      );
      expect(row.revoked_at).toBeInstanceOf(Date);
    });

    it('caps a merchant at 20 active keys, also when requests race for the last place; a revoked key frees one', async () => {
      const capped = await t.createMerchant('Capped'); // holds one key already
      const create = () => t.http.post('/api/settings/api-keys').set(capped.auth).send({});
      for (let i = 0; i < 17; i++) await create().expect(201); // 18 active
      const racing = await Promise.all(Array.from({ length: 10 }, () => create()));
      expect(racing.map((r) => r.status).sort()).toEqual([
        201, 201, 400, 400, 400, 400, 400, 400, 400, 400,
      ]);
      const refused = racing.find((r) => r.status === 400)!;
      expect(refused.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        message: 'A merchant has at most 20 active API keys; revoke one first',
      });
      const active = async () =>
        Number(
          (
            await t.sql<{ n: string }>(
              'SELECT count(*) AS n FROM api_keys WHERE merchant_id = $1 AND revoked_at IS NULL',
              [capped.id],
            )
          )[0].n,
        );
      expect(await active()).toBe(20);
      const created = racing.find((r) => r.status === 201)!;
      await t.http.delete(`/api/settings/api-keys/${created.body.id}`).set(capped.auth).expect(200);
      await create().expect(201);
      expect(await active()).toBe(20);
    });

    it('a key may revoke itself', async () => {
      const created = await t.http
        .post('/api/settings/api-keys')
        .set(acme.auth)
        .send({ label: 'self' });
      const auth = { Authorization: `Bearer ${created.body.key}` };
      await t.http.delete(`/api/settings/api-keys/${created.body.id}`).set(auth).expect(200);
      await t.http.get('/api/settings/api-keys').set(auth).expect(401);
    });

    it("already revoked, unknown, malformed or another merchant's key: 404 NOT_FOUND", async () => {
      const created = await t.http
        .post('/api/settings/api-keys')
        .set(acme.auth)
        .send({ label: 'x' });
      await t.http.delete(`/api/settings/api-keys/${created.body.id}`).set(acme.auth).expect(200);
      const other = await t.http
        .post('/api/settings/api-keys')
        .set(globex.auth)
        .send({ label: 'theirs' });
      for (const id of [
        created.body.id,
        '00000000-0000-4000-8000-000000000001',
        'nope',
        other.body.id,
      ]) {
        const res = await t.http.delete(`/api/settings/api-keys/${id}`).set(acme.auth).expect(404);
        expect(res.body.error).toMatchObject({ code: 'NOT_FOUND', message: 'API key not found' });
      }
      // Globex's key survived Acme's attempt.
      await t.http
        .get('/api/customers')
        .set('Authorization', `Bearer ${other.body.key}`)
        .expect(200);
    });
  });

  describe('key cache', () => {
    it('a known key is served from memory: a revocation written behind its back is not seen until announced', async () => {
      const created = await t.http
        .post('/api/settings/api-keys')
        .set(acme.auth)
        .send({ label: 'cache' });
      const auth = { Authorization: `Bearer ${created.body.key}` };
      await t.http.get('/api/customers').set(auth).expect(200);
      // Revoke in the database without the service: no lookup means the cache still answers.
      const [{ key_hash }] = await t.sql<{ key_hash: string }>(
        'UPDATE api_keys SET revoked_at = now() WHERE id = $1 RETURNING key_hash',
        [created.body.id],
      );
      await t.http.get('/api/customers').set(auth).expect(200);
      // Announcing it on the channel evicts it within a second.
      await t.sql('SELECT pg_notify($1, $2)', ['api_key_revoked', key_hash]);
      await waitFor(
        async () => (await t.http.get('/api/customers').set(auth)).status === 401,
        1000,
      );
    });

    it('a revocation on one instance is refused by another within a second', async () => {
      const other = await createTestApp({ databaseUrl: t.databaseUrl });
      try {
        const created = await t.http
          .post('/api/settings/api-keys')
          .set(acme.auth)
          .send({ label: 'multi' });
        const auth = { Authorization: `Bearer ${created.body.key}` };
        await other.http.get('/api/customers').set(auth).expect(200); // cached on the other instance
        await t.http.delete(`/api/settings/api-keys/${created.body.id}`).set(acme.auth).expect(200);
        await t.http.get('/api/customers').set(auth).expect(401); // at once here
        // The other instance learns of it through NOTIFY; bench/ measures how fast.
        await waitFor(
          async () => (await other.http.get('/api/customers').set(auth)).status === 401,
          30_000,
        );
      } finally {
        await other.close();
      }
    });
  });
});

describe('failed authentication limit', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { AUTH_FAILURES_PER_MINUTE: '3' } });
  });
  afterAll(() => t.close());

  it('answers 429 RATE_LIMITED to failed attempts past the limit, never to a valid key', async () => {
    const m = await t.createMerchant();
    const guess = { Authorization: 'Bearer sbk_11111111111111111111111111111111111111111111' };
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await t.http.get('/api/customers').set(guess)).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    const blocked = await t.http.get('/api/customers').set(guess).expect(429);
    expect(blocked.body.error).toMatchObject({
      code: 'RATE_LIMITED',
      message: 'Too many failed authentication attempts from this client; retry later',
    });
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(blocked.headers['retry-after'])).toBeLessThanOrEqual(60);
    // The same client with a valid key: served (someone else's failures never refuse it).
    await t.http.get('/api/customers').set(m.auth).expect(200);
    await t.http.get('/health/live').expect(200); // public routes are unaffected
  });

  it('a valid key no instance has cached yet is served from a blocked address, whatever the guessing', async () => {
    const m = await t.createMerchant();
    const guesses = Array.from({ length: 40 }, (_, i) => ({
      Authorization: `Bearer sbk_${String(i).padStart(44, '1').replace(/0/g, '2')}`,
    }));
    // A burst of guesses from this client (already blocked by the test above), then a key that
    // was just created and never used: it must be looked up, not refused for the others.
    const [statuses, fresh] = await Promise.all([
      Promise.all(guesses.map(async (g) => (await t.http.get('/api/customers').set(g)).status)),
      t.http.get('/api/customers').set(m.auth),
    ]);
    expect(new Set(statuses)).toEqual(new Set([429]));
    expect(fresh.status).toBe(200);
  });
});
