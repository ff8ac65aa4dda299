import { randomUUID } from 'node:crypto';
import { Retention } from '../src/common/background/retention';
import {
  IdempotencyService,
  KEY_TTL_MS,
  LEASE_MS,
  WAIT_MS,
} from '../src/idempotency/idempotency.service';
import { InvoicesService } from '../src/invoices/invoices.service';
import { createTestApp, randomWallet, TestApp, TestMerchant } from './helpers/test-app';

/** Idempotent POST requests (D15) through the real API and PostgreSQL. */
describe('Idempotency-Key', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let globex: TestMerchant;

  beforeAll(async () => {
    t = await createTestApp();
    acme = await t.createMerchant('Acme');
    globex = await t.createMerchant('Globex');
  });
  afterAll(() => t?.close()); // unset if createTestApp failed (it released what it started)

  const invoiceBody = (wallet = randomWallet()) => ({
    walletAddress: wallet,
    mint: 'USDC',
    lineItems: [
      { description: 'A', quantity: 1, unitAmount: '1.5' },
      { description: 'B', quantity: 2, unitAmount: '0.25' },
      { description: 'C', quantity: 3, unitAmount: '10' },
    ],
  });
  const postInvoice = (m: TestMerchant, key: string | undefined, body: object) => {
    const req = t.http.post('/api/invoices').set(m.auth);
    return (key === undefined ? req : req.set('Idempotency-Key', key)).send(body);
  };
  const count = async (sql: string, params: unknown[]) =>
    (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params))[0].n;
  const invoicesOf = (m: TestMerchant) => count('invoices WHERE merchant_id = $1', [m.id]);
  const createdEvents = (m: TestMerchant) =>
    count(`events WHERE merchant_id = $1 AND type = 'invoice.created'`, [m.id]);

  /** A trigger name and literal of its own for one test's key (a random UUID: no quoting). */
  const triggerFor = (key: string) => {
    if (!/^[0-9a-f-]{36}$/.test(key)) throw new Error(`not a UUID: ${key}`);
    return { name: `test_${key.replace(/-/g, '')}`, literal: `'${key}'` };
  };

  /** Makes PostgreSQL refuse to store a response for this key, until `drop`. */
  async function failStoringResponse(key: string) {
    const { name, literal } = triggerFor(key);
    await t.sql(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'storing the response failed (test fault)'; END $$`);
    await t.sql(`CREATE TRIGGER ${name} BEFORE UPDATE ON idempotency_keys FOR EACH ROW
      WHEN (NEW.key = ${literal} AND NEW.response_status IS NOT NULL) EXECUTE FUNCTION ${name}()`);
    return {
      drop: async () => {
        await t.sql(`DROP TRIGGER IF EXISTS ${name} ON idempotency_keys`);
        await t.sql(`DROP FUNCTION IF EXISTS ${name}()`);
      },
    };
  }

  /**
   * Counts the attempts to claim this key from now on: each one is an INSERT ... ON CONFLICT,
   * whose BEFORE INSERT row triggers fire even when the row conflicts.
   */
  async function recordClaimAttempts(key: string) {
    const { name, literal } = triggerFor(key);
    await t.sql(
      `CREATE TABLE ${name}_attempts (at timestamptz NOT NULL DEFAULT clock_timestamp())`,
    );
    await t.sql(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO ${name}_attempts DEFAULT VALUES; RETURN NEW; END $$`);
    await t.sql(`CREATE TRIGGER ${name} BEFORE INSERT ON idempotency_keys FOR EACH ROW
      WHEN (NEW.key = ${literal}) EXECUTE FUNCTION ${name}()`);
    return {
      count: () => count(`${name}_attempts`, []),
      drop: async () => {
        await t.sql(`DROP TRIGGER IF EXISTS ${name} ON idempotency_keys`);
        await t.sql(`DROP FUNCTION IF EXISTS ${name}()`);
        await t.sql(`DROP TABLE IF EXISTS ${name}_attempts`);
      },
    };
  }

  /** Polls a condition every 20 ms, failing after 5 s. */
  async function until(condition: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + 5000;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error('condition not met within 5 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('a retry gets the first response byte for byte, marked replayed, and creates nothing', async () => {
    const key = randomUUID();
    const body = invoiceBody();
    const [invoices, events] = [await invoicesOf(acme), await createdEvents(acme)];
    const first = await postInvoice(acme, key, body).expect(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await postInvoice(acme, key, body).expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toMatch(/^application\/json/);
    expect(again.text).toBe(first.text);
    expect(await invoicesOf(acme)).toBe(invoices + 1);
    expect(await createdEvents(acme)).toBe(events + 1);
    // The response was stored in the invoice's own transaction.
    const [row] = await t.sql<{ response_status: number; response_body: string }>(
      'SELECT response_status, response_body FROM idempotency_keys WHERE merchant_id = $1 AND key = $2',
      [acme.id, key],
    );
    expect(row).toEqual({ response_status: 201, response_body: first.text });
  });

  it('20 parallel identical requests create one invoice and one event, all answered alike', async () => {
    const m = await t.createMerchant('Parallel');
    const key = randomUUID();
    const body = invoiceBody();
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => postInvoice(m, key, body)),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(new Set(responses.map((r) => r.text)).size).toBe(1);
    expect(responses.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(19);
    expect(await invoicesOf(m)).toBe(1);
    expect(await createdEvents(m)).toBe(1);
    expect(await count('customers WHERE merchant_id = $1', [m.id])).toBe(1);
  });

  it('the same key with another body or path is 400 IDEMPOTENCY_KEY_REUSED and does nothing', async () => {
    const key = randomUUID();
    await postInvoice(acme, key, invoiceBody()).expect(201);
    const before = await invoicesOf(acme);
    const otherBody = await postInvoice(acme, key, invoiceBody()).expect(400);
    expect(otherBody.body.error).toMatchObject({
      code: 'IDEMPOTENCY_KEY_REUSED',
      message: 'This Idempotency-Key was used with another request (path or body); use a new key',
    });
    const otherPath = await t.http
      .post('/api/plans')
      .set(acme.auth)
      .set('Idempotency-Key', key)
      .send({ label: 'P', mint: 'USDC', amount: '1', intervalSeconds: 86_400 })
      .expect(400);
    expect(otherPath.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await invoicesOf(acme)).toBe(before);
    expect(await count('plans WHERE merchant_id = $1', [acme.id])).toBe(0);
  });

  it('keys never cross merchants: the same key is two requests for two merchants', async () => {
    const key = randomUUID();
    const body = invoiceBody();
    const a = await postInvoice(acme, key, body).expect(201);
    const g = await postInvoice(globex, key, body).expect(201);
    expect(g.headers['idempotent-replayed']).toBeUndefined();
    expect(g.body.invoice.id).not.toBe(a.body.invoice.id);
    expect(g.body.invoice.customer.merchantId).toBe(globex.id);
    await t.http.get(`/api/invoices/${a.body.invoice.id}`).set(globex.auth).expect(404);
  });

  it('refuses a key that is empty, too long or not printable ASCII, before doing anything', async () => {
    const before = await invoicesOf(acme);
    for (const key of ['', 'x'.repeat(256), 'tab\there', 'café']) {
      const res = await postInvoice(acme, key, invoiceBody()).expect(400);
      expect(res.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        message: 'Idempotency-Key: must be 1-255 printable ASCII characters',
        details: [
          { field: 'Idempotency-Key', message: 'must be 1-255 printable ASCII characters' },
        ],
      });
    }
    expect(await invoicesOf(acme)).toBe(before);
    await postInvoice(acme, 'k'.repeat(255), invoiceBody()).expect(201);
    await postInvoice(acme, ' spaced key ~!@#$%^&*() ', invoiceBody()).expect(201);
    expect(await invoicesOf(acme)).toBe(before + 2);
  });

  it('a 4xx is kept and replayed as it was (same request id); the fixed body needs a new key', async () => {
    const key = randomUUID();
    const bad = { ...invoiceBody(), taxBps: 10_001 };
    const first = await postInvoice(acme, key, bad).expect(400);
    expect(first.body.error.code).toBe('VALIDATION_ERROR');
    const again = await postInvoice(acme, key, bad).expect(400);
    expect(again.text).toBe(first.text);
    expect(again.body.error.requestId).toBe(first.body.error.requestId);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const fixed = await postInvoice(acme, key, invoiceBody()).expect(400);
    expect(fixed.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('state-changing POSTs replay too: a second void with the key is its first 200', async () => {
    const { body } = await postInvoice(acme, undefined, invoiceBody()).expect(201);
    const key = randomUUID();
    const path = `/api/invoices/${body.invoice.id}/void`;
    const first = await t.http.post(path).set(acme.auth).set('Idempotency-Key', key).expect(200);
    const again = await t.http.post(path).set(acme.auth).set('Idempotency-Key', key).expect(200);
    expect(again.text).toBe(first.text);
    const voided = await count(
      `events WHERE merchant_id = $1 AND type = 'invoice.voided'
      AND payload->'data'->'object'->>'id' = $2`,
      [acme.id, body.invoice.id],
    );
    expect(voided).toBe(1);
    // Without a key, a second void is what it is.
    const plain = await t.http.post(path).set(acme.auth).expect(400);
    expect(plain.body.error.code).toBe('INVOICE_NOT_OPEN');
  });

  it('plans: a retry returns the same plan and creates one', async () => {
    const m = await t.createMerchant('Plans');
    const key = randomUUID();
    const body = { label: 'Pro', mint: 'PYUSD', amount: '9.99', intervalSeconds: 2_592_000 };
    const send = () => t.http.post('/api/plans').set(m.auth).set('Idempotency-Key', key).send(body);
    const [a, b] = await Promise.all([send(), send()]);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.text).toBe(a.text);
    expect(await count('plans WHERE merchant_id = $1', [m.id])).toBe(1);
  });

  it('a retry while the first still runs waits for its response', async () => {
    const service = t.app.get(IdempotencyService);
    const key = randomUUID();
    const body = invoiceBody();
    const claim = await service.begin(
      acme.id,
      key,
      service.fingerprint('POST', '/api/invoices', body),
    );
    // Completed only once the retry was refused the key at least once (seen in the database):
    // it is waiting, not arriving after the response was stored.
    const attempts = await recordClaimAttempts(key);
    try {
      const retry = postInvoice(acme, key, body).then((r) => r); // sent now, not when awaited
      await until(async () => (await attempts.count()) >= 1);
      await service.complete(claim, 201, JSON.stringify({ stored: true }));
      const res = await retry;
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ stored: true });
      expect(res.headers['idempotent-replayed']).toBe('true');
    } finally {
      await attempts.drop();
    }
  });

  it(`a retry still running after ${WAIT_MS / 1000} s is 409 CONFLICT, and nothing runs twice`, async () => {
    const service = t.app.get(IdempotencyService);
    const key = randomUUID();
    const body = invoiceBody();
    await service.begin(acme.id, key, service.fingerprint('POST', '/api/invoices', body));
    const before = await invoicesOf(acme);
    const res = await postInvoice(acme, key, body).expect(409);
    expect(res.body.error).toMatchObject({
      code: 'CONFLICT',
      message: 'A request with this Idempotency-Key is still being processed; retry later',
    });
    expect(await invoicesOf(acme)).toBe(before);
  }, 30_000);

  it('a holder that died: its lease ends, a retry runs; the dead holder can no longer commit', async () => {
    const service = t.app.get(IdempotencyService);
    const invoices = t.app.get(InvoicesService);
    const key = randomUUID();
    const body = invoiceBody();
    const dead = await service.begin(
      acme.id,
      key,
      service.fingerprint('POST', '/api/invoices', body),
    );
    t.clock.advance(LEASE_MS + 1000);
    const before = await invoicesOf(acme);
    const retry = await postInvoice(acme, key, body).expect(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    // The first holder wakes up and finishes its work: fenced off, its transaction rolls back.
    await expect(invoices.create(acme.id, body as never, dead)).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    expect(await invoicesOf(acme)).toBe(before + 1);
    const replay = await postInvoice(acme, key, body).expect(201);
    expect(replay.text).toBe(retry.text);
  });

  it('keys are kept 24 hours: then the key is new again, and expired rows are purged', async () => {
    const m = await t.createMerchant('Expiry');
    const key = randomUUID();
    await postInvoice(m, key, invoiceBody()).expect(201);
    t.clock.advance(KEY_TTL_MS - 60_000);
    await postInvoice(m, key, invoiceBody()).expect(400); // still kept: another body is refused
    t.clock.advance(120_000);
    const fresh = await postInvoice(m, key, invoiceBody()).expect(201);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
    expect(await invoicesOf(m)).toBe(2);
    const other = randomUUID();
    await postInvoice(m, other, invoiceBody()).expect(201);
    t.clock.advance(KEY_TTL_MS + 1000);
    const [keys] = (await t.app.get(Retention).run()).filter((r) => r.table === 'idempotency_keys');
    expect(keys.deleted).toBeGreaterThanOrEqual(2);
    expect(await count('idempotency_keys WHERE merchant_id = $1', [m.id])).toBe(0);
  });

  it('responses holding a secret are never stored: a new API key or webhook secret ignores the key', async () => {
    const m = await t.createMerchant('Secrets');
    const key = randomUUID();
    const create = () =>
      t.http.post('/api/settings/api-keys').set(m.auth).set('Idempotency-Key', key).send({});
    const [a, b] = [await create().expect(201), await create().expect(201)];
    expect(b.body.key).not.toBe(a.body.key);
    const rotate = () =>
      t.http
        .post('/api/settings/webhook/secret/rotate')
        .set(m.auth)
        .set('Idempotency-Key', randomUUID());
    await rotate().expect(200);
    expect(await count('idempotency_keys WHERE merchant_id = $1', [m.id])).toBe(0);
    const stored = await t.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM idempotency_keys WHERE response_body LIKE '%sbk_%'
          OR response_body LIKE '%whsec_%'`,
    );
    expect(stored).toEqual([{ n: 0 }]);
  });

  it('a success whose response could not be stored is still answered, and the key stays held', async () => {
    const key = randomUUID();
    const body = { walletAddress: randomWallet() };
    const send = () =>
      t.http.post('/api/customers').set(acme.auth).set('Idempotency-Key', key).send(body);
    // The customer upsert stores its response after its transaction, in an UPDATE of its own
    // (IdempotencyService.complete): a real fault there, raised by PostgreSQL for this key only.
    const fault = await failStoringResponse(key);
    let first;
    try {
      first = await send().expect(201);
    } finally {
      await fault.drop();
    }
    expect(first.body.walletAddress).toBe(body.walletAddress);
    // Not released: a retry within the lease cannot run the request again.
    const [row] = await t.sql<{ response_status: number | null }>(
      'SELECT response_status FROM idempotency_keys WHERE merchant_id = $1 AND key = $2',
      [acme.id, key],
    );
    expect(row).toEqual({ response_status: null });
    const retry = await send().expect(409);
    expect(retry.body.error.code).toBe('CONFLICT');
    expect(await count('customers WHERE wallet_address = $1', [body.walletAddress])).toBe(1);
    expect(
      await count(`events WHERE merchant_id = $1 AND payload->'data'->'object'->>'id' = $2`, [
        acme.id,
        first.body.id,
      ]),
    ).toBe(1); // its customer.created, once
  }, 30_000);

  it('GET and requests without the header are untouched; no row is written', async () => {
    const m = await t.createMerchant('Plain');
    await postInvoice(m, undefined, invoiceBody()).expect(201);
    await t.http.get('/api/invoices').set(m.auth).set('Idempotency-Key', 'ignored').expect(200);
    expect(await count('idempotency_keys WHERE merchant_id = $1', [m.id])).toBe(0);
  });

  it('any POST route: a customer upsert is replayed from the store after the request', async () => {
    const key = randomUUID();
    const body = { walletAddress: randomWallet(), email: 'x@example.com' };
    const send = () => t.http.post('/api/customers').set(acme.auth).set('Idempotency-Key', key);
    const first = await send().send(body).expect(201);
    const again = await send().send(body).expect(201);
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await count('customers WHERE wallet_address = $1', [body.walletAddress])).toBe(1);
  });
});

describe('Idempotency-Key with the chain unreachable', () => {
  let t: TestApp;
  let m: TestMerchant;
  beforeAll(async () => {
    t = await createTestApp({ env: { SOLANA_RPC_URL: 'http://127.0.0.1:9' } });
    m = await t.createMerchant();
  });
  afterAll(() => t?.close()); // unset if createTestApp failed (it released what it started)

  it('a 5xx is not kept: the retry runs again', async () => {
    const key = randomUUID();
    const body = { label: 'P', mint: 'USDC', amount: '1', intervalSeconds: 86_400 };
    const send = () => t.http.post('/api/plans').set(m.auth).set('Idempotency-Key', key).send(body);
    const first = await send().expect(503);
    expect(first.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(await t.sql('SELECT id FROM idempotency_keys')).toEqual([]);
    const again = await send().expect(503);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.body.error.requestId).not.toBe(first.body.error.requestId);
  });
});
