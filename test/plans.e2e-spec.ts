import { ASSOCIATED_TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { PublicKey, Transaction } from '@solana/web3.js';
import { ChainPort } from '../src/solana/chain.port';
import { fund, signAndSend } from './helpers/chain-tx';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const PLAN_KEYS = [
  'active',
  'amount',
  'checkoutUrl',
  'createdAt',
  'description',
  'id',
  'intervalSeconds',
  'label',
  'maxAmountPerPeriod',
  'meter',
  'mint',
  'onchainAddress',
  'updatedAt',
].sort();
const MEMO = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';

describe('Plans API', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let globex: TestMerchant;
  const valid = {
    label: 'Pro monthly',
    description: 'All Pro features',
    mint: 'USDC',
    amount: '9.990',
    intervalSeconds: 2_592_000,
  };
  const plans = async () =>
    Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM plans'))[0].n);
  const create = (m: TestMerchant, body: object = valid) =>
    t.http.post('/api/plans').set(m.auth).send(body);

  beforeAll(async () => {
    t = await createTestApp({ env: { PUBLIC_BASE_URL: 'https://billing.example.com' } });
    acme = await t.createMerchant('Acme');
    globex = await t.createMerchant('Globex');
  });
  afterAll(() => t.close());

  describe('POST /api/plans', () => {
    it('creates a plan: D8 fields exactly, canonical amount, checkout URL, stored in base units', async () => {
      const res = await create(acme).expect(201);
      expect(Object.keys(res.body).sort()).toEqual(['checkoutUrl', 'plan', 'unsignedTx']);
      const plan = res.body.plan;
      expect(Object.keys(plan).sort()).toEqual(PLAN_KEYS);
      expect(plan).toMatchObject({
        label: 'Pro monthly',
        description: 'All Pro features',
        mint: 'USDC',
        amount: '9.99',
        // No meter: each period charges the amount, no more.
        meter: null,
        maxAmountPerPeriod: '9.99',
        intervalSeconds: 2_592_000,
        active: true,
        // Token-delegate scheme (localnet): registered by a memo, no plan account.
        onchainAddress: null,
        checkoutUrl: `https://billing.example.com/checkout/plans/${plan.id}`,
      });
      expect(res.body.checkoutUrl).toBe(plan.checkoutUrl);
      expect(plan.createdAt).toMatch(ISO_MS);
      expect(plan.updatedAt).toBe(plan.createdAt);
      const [row] = await t.sql(
        'SELECT merchant_id, amount::text AS amount, interval_seconds, onchain_plan_id FROM plans WHERE id = $1',
        [plan.id],
      );
      expect(row).toEqual({
        merchant_id: acme.id,
        amount: '9990000',
        interval_seconds: 2_592_000,
        onchain_plan_id: BigInt(
          `0x${(plan.id as string).replace(/-/g, '').slice(0, 16)}`,
        ).toString(),
      });
    });

    it('returns the registration the merchant signs: its receiving account (at its own expense) and a memo committing to the terms, landing on localnet', async () => {
      const res = await create(acme, { ...valid, mint: 'PYUSD', amount: '25' }).expect(201);
      const tx = Transaction.from(Buffer.from(res.body.unsignedTx, 'base64'));
      expect(tx.feePayer?.toBase58()).toBe(acme.walletAddress);
      expect(tx.signatures.every((s) => s.signature === null)).toBe(true);
      expect(tx.instructions).toHaveLength(2);
      const [account, ix] = tx.instructions;
      // The merchant's PYUSD account (where the plan's charges go), created if missing, paid by it.
      expect(account.programId.toBase58()).toBe(ASSOCIATED_TOKEN_PROGRAM_ID.toBase58());
      expect(account.keys[0]).toEqual({
        pubkey: new PublicKey(acme.walletAddress),
        isSigner: true,
        isWritable: true,
      });
      expect(account.keys[1].pubkey.toBase58()).toBe(
        await t.app.get(ChainPort).tokenAccount(acme.walletAddress, 'PYUSD'),
      );
      expect(ix.programId.toBase58()).toBe(MEMO);
      // The merchant signs the memo (it is also the fee payer, hence writable on the wire).
      expect(ix.keys).toEqual([
        { pubkey: new PublicKey(acme.walletAddress), isSigner: true, isWritable: true },
      ]);
      const chain = t.app.get(ChainPort);
      const pyusd = await chain.mint('PYUSD');
      expect(ix.data.toString('utf8')).toBe(
        [
          'plan:v1',
          res.body.plan.id,
          pyusd.address,
          '25000000',
          '720',
          chain.servicePublicKey,
        ].join(':'),
      );
      fund(t, acme.walletAddress);
      const outcome = await signAndSend(t, res.body.unsignedTx, 1e9, acme.wallet);
      expect(outcome).toMatchObject({ state: 'succeeded' });
    });

    it.each([
      ['intervalSeconds below a day', { intervalSeconds: 86_399 }, 'intervalSeconds'],
      ['intervalSeconds not whole hours', { intervalSeconds: 90_000 + 60 }, 'intervalSeconds'],
      ['intervalSeconds above a year', { intervalSeconds: 31_539_600 }, 'intervalSeconds'],
      ['intervalSeconds fractional', { intervalSeconds: 86_400.5 }, 'intervalSeconds'],
      ['intervalSeconds a string', { intervalSeconds: '86400' }, 'intervalSeconds'],
      ['amount zero', { amount: '0' }, 'amount'],
      ['amount negative', { amount: '-1' }, 'amount'],
      ['amount with 7 decimals', { amount: '1.0000001' }, 'amount'],
      ['amount with an exponent', { amount: '1e3' }, 'amount'],
      ['amount a number', { amount: 5 }, 'amount'],
      ['amount beyond the largest', { amount: '9223372036855' }, 'amount'],
      ['mint unknown', { mint: 'USDT' }, 'mint'],
      ['label empty', { label: '' }, 'label'],
      ['label of spaces', { label: '   ' }, 'label'],
      ['label 101 characters', { label: 'x'.repeat(101) }, 'label'],
      ['description 501 characters', { description: 'x'.repeat(501) }, 'description'],
      ['an unknown field', { trialDays: 7 }, 'trialDays'],
    ])('refuses %s with 400 and creates nothing', async (_name, change, field) => {
      const before = await plans();
      const res = await create(acme, { ...valid, ...change }).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
      expect(await plans()).toBe(before);
    });

    it.each(['label', 'mint', 'amount', 'intervalSeconds'])(
      'refuses a plan without %s',
      async (field) => {
        const body: Record<string, unknown> = { ...valid };
        delete body[field];
        const res = await create(acme, body).expect(400);
        expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
      },
    );
  });

  describe('GET /api/plans and /api/plans/:id', () => {
    it('lists the merchant’s plans newest first with _count.subscriptions, never another merchant’s', async () => {
      const other = await create(globex, { ...valid, label: 'Globex plan' }).expect(201);
      const first = await create(acme, { ...valid, label: 'First' }).expect(201);
      t.clock.advance(1000);
      const second = await create(acme, { ...valid, label: 'Second' }).expect(201);
      const res = await t.http.get('/api/plans').set(acme.auth).expect(200);
      const ids = res.body.map((p: { id: string }) => p.id);
      expect(ids.indexOf(second.body.plan.id)).toBeLessThan(ids.indexOf(first.body.plan.id));
      expect(ids).not.toContain(other.body.plan.id);
      expect(res.body[0]).toEqual({ ...second.body.plan, _count: { subscriptions: 0 } });
    });

    it('gets one plan; another merchant’s, an unknown and a malformed id are 404 NOT_FOUND', async () => {
      const mine = await create(acme).expect(201);
      const got = await t.http.get(`/api/plans/${mine.body.plan.id}`).set(acme.auth).expect(200);
      expect(got.body).toEqual(mine.body.plan);
      for (const [who, id] of [
        [globex, mine.body.plan.id],
        [acme, '00000000-0000-4000-8000-000000000000'],
        [acme, 'not-a-uuid'],
      ] as const) {
        const res = await t.http.get(`/api/plans/${id}`).set(who.auth).expect(404);
        expect(res.body.error).toMatchObject({ code: 'NOT_FOUND', message: 'Plan not found' });
      }
    });
  });

  describe('PATCH /api/plans/:id', () => {
    it('changes label, description and active; null clears the description', async () => {
      const { body } = await create(acme).expect(201);
      t.clock.advance(1000);
      const res = await t.http
        .patch(`/api/plans/${body.plan.id}`)
        .set(acme.auth)
        .send({ label: 'Pro (2026)', description: null, active: false })
        .expect(200);
      expect(res.body).toMatchObject({
        label: 'Pro (2026)',
        description: null,
        active: false,
        amount: '9.99',
      });
      expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.parse(body.plan.updatedAt));
    });

    it('an empty or unchanged patch keeps updatedAt', async () => {
      const { body } = await create(acme).expect(201);
      t.clock.advance(1000);
      const empty = await t.http.patch(`/api/plans/${body.plan.id}`).set(acme.auth).send({});
      expect(empty.status).toBe(200);
      const same = await t.http
        .patch(`/api/plans/${body.plan.id}`)
        .set(acme.auth)
        .send({ label: valid.label, active: true })
        .expect(200);
      expect([empty.body.updatedAt, same.body.updatedAt]).toEqual([
        body.plan.updatedAt,
        body.plan.updatedAt,
      ]);
    });

    it.each([
      { amount: '5' },
      { mint: 'PYUSD' },
      { intervalSeconds: 86_400 },
      { label: null },
      { active: 'no' },
      { label: '' },
    ])('refuses %j with 400 and changes nothing', async (change) => {
      const { body } = await create(acme).expect(201);
      const res = await t.http
        .patch(`/api/plans/${body.plan.id}`)
        .set(acme.auth)
        .send(change)
        .expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      const after = await t.http.get(`/api/plans/${body.plan.id}`).set(acme.auth).expect(200);
      expect(after.body).toEqual(body.plan);
    });

    it('another merchant’s plan is 404 and unchanged', async () => {
      const { body } = await create(acme).expect(201);
      await t.http
        .patch(`/api/plans/${body.plan.id}`)
        .set(globex.auth)
        .send({ label: 'Taken' })
        .expect(404);
      const after = await t.http.get(`/api/plans/${body.plan.id}`).set(acme.auth).expect(200);
      expect(after.body.label).toBe(valid.label);
    });
  });

  describe('POST /api/plans/:id/registration-tx', () => {
    it('issues a fresh registration the merchant can sign; another merchant’s plan is 404', async () => {
      const { body } = await create(acme).expect(201);
      const res = await t.http
        .post(`/api/plans/${body.plan.id}/registration-tx`)
        .set(acme.auth)
        .expect(200);
      expect(Object.keys(res.body).sort()).toEqual(['lastValidBlockHeight', 'unsignedTx']);
      const tx = Transaction.from(Buffer.from(res.body.unsignedTx, 'base64'));
      expect(tx.feePayer?.toBase58()).toBe(acme.walletAddress);
      expect(tx.instructions[1].data.toString('utf8')).toContain(body.plan.id);
      fund(t, acme.walletAddress);
      expect(
        await signAndSend(t, res.body.unsignedTx, res.body.lastValidBlockHeight, acme.wallet),
      ).toMatchObject({ state: 'succeeded' });
      await t.http.post(`/api/plans/${body.plan.id}/registration-tx`).set(globex.auth).expect(404);
    });
  });
});

describe('Plans with the chain unreachable', () => {
  let t: TestApp;
  let m: TestMerchant;
  beforeAll(async () => {
    // A localnet service whose RPC answers nothing: port 9 (discard) on loopback refuses.
    t = await createTestApp({ env: { SOLANA_RPC_URL: 'http://127.0.0.1:9' } });
    m = await t.createMerchant();
  });
  afterAll(() => t.close());

  it('POST /api/plans is a clear 503 and creates nothing', async () => {
    const res = await t.http
      .post('/api/plans')
      .set(m.auth)
      .send({ label: 'P', mint: 'USDC', amount: '1', intervalSeconds: 86_400 })
      .expect(503);
    expect(res.body.error).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: expect.stringMatching(/Solana RPC is unreachable/),
    });
    expect((await t.sql('SELECT id FROM plans')).length).toBe(0);
  });
});
