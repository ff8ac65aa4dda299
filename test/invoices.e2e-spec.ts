import { Db } from '../src/database/db';
import { PublicKey, Transaction } from '@solana/web3.js';
import { createHash } from 'node:crypto';
import { invoiceCommitment } from '../src/invoices/invoice-commitment';
import { InvoicesService } from '../src/invoices/invoices.service';
import { ChainPort } from '../src/solana/chain.port';
import { fund, signAndSend } from './helpers/chain-tx';
import { createTestApp, randomWallet, TestApp, TestMerchant } from './helpers/test-app';

const MEMO = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';

/**
 * SHA-256 (hex) of a registration memo's preimage. The preimages in this file are written out by
 * hand from the documented format (docs/api-decisions.md: `invoice:v1`, onchainId, mint symbol,
 * total in base units, merchant wallet, due date or empty, one per line), never built by the
 * code under test, so a change of format or hash fails here.
 */
const sha256Hex = (preimage: string) =>
  createHash('sha256').update(Buffer.from(preimage, 'utf8')).digest('hex');

describe('invoice commitment (known vectors)', () => {
  const onchainId = '7Xf1D9kqS3vHh2PcJbnUeZ8WmYrLtQa4gN6oRiE5sBdA';
  const merchantWallet = '9aE476sH92Vz7DMPyq5WLPkrKWivxeuTKEFKd2sZZcde';
  // Digests computed once, from the preimages as written.
  it.each([
    [
      'with a due date',
      {
        onchainId,
        mint: 'USDC',
        total: 488_207_500n,
        merchantWallet,
        dueDate: '2099-06-01T00:00:00.000Z',
      },
      `invoice:v1\n${onchainId}\nUSDC\n488207500\n${merchantWallet}\n2099-06-01T00:00:00.000Z`,
      '23f6eafb8bbb28db1fb73d906b1059677b7047acdc5cc0877284ea69d5ed9edd',
    ],
    [
      'without one: an empty last line',
      { onchainId, mint: 'PYUSD', total: 1n, merchantWallet, dueDate: null },
      `invoice:v1\n${onchainId}\nPYUSD\n1\n${merchantWallet}\n`,
      '07a0a0fe8b2118813cb46b52729dd5752222804493c43ff4dcb29ffc64ef326f',
    ],
  ] as const)('%s', (_, terms, preimage, hex) => {
    expect(sha256Hex(preimage)).toBe(hex);
    expect(invoiceCommitment(terms).toString('hex')).toBe(hex);
  });
});

const INVOICE_KEYS = [
  'amountCredited',
  'amountCreditedToBalance',
  'amountDue',
  'amountPaid',
  'amountRefunded',
  'createdAt',
  'customer',
  'customerId',
  'dueDate',
  'hostedCheckoutUrl',
  'id',
  'lineItems',
  'memo',
  'mint',
  'number',
  'onchainId',
  'paidAt',
  'paymentSignature',
  'status',
  'subtotal',
  'tax',
  'taxBps',
  'total',
  'updatedAt',
].sort();

describe('Invoices API', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let globex: TestMerchant;
  const line = (unitAmount: string, quantity = 1, description = 'Item') => ({
    description,
    quantity,
    unitAmount,
  });
  const body = (extra: object = {}) => ({
    walletAddress: randomWallet(),
    lineItems: [line('150', 3, 'Consulting'), line('0.5', 2, 'Stickers')],
    mint: 'USDC',
    taxBps: 825,
    memo: 'PO 4471',
    ...extra,
  });
  const create = (m: TestMerchant, payload: object = body()) =>
    t.http.post('/api/invoices').set(m.auth).send(payload);
  const count = async (table: string) =>
    Number((await t.sql<{ n: string }>(`SELECT count(*) AS n FROM ${table}`))[0].n);

  beforeAll(async () => {
    t = await createTestApp({ env: { PUBLIC_BASE_URL: 'https://billing.example.com' } });
    acme = await t.createMerchant('Acme');
    globex = await t.createMerchant('Globex');
  });
  afterAll(() => t?.close()); // unset if createTestApp failed (it released what it started)

  describe('POST /api/invoices', () => {
    it('creates an invoice (D10 fields), upserts its customer in the same transaction, records both events', async () => {
      const wallet = randomWallet();
      const res = await create(
        acme,
        body({
          walletAddress: wallet,
          customerEmail: 'ada@example.com',
          customerLabel: 'Ada',
          dueDate: '2099-01-31T12:00:00Z',
        }),
      ).expect(201);
      expect(Object.keys(res.body).sort()).toEqual(['hostedCheckoutUrl', 'invoice', 'unsignedTx']);
      const invoice = res.body.invoice;
      expect(Object.keys(invoice).sort()).toEqual(INVOICE_KEYS);
      expect(invoice).toMatchObject({
        status: 'Open',
        mint: 'USDC',
        memo: 'PO 4471',
        lineItems: [
          { description: 'Consulting', quantity: 3, unitAmount: '150', amount: '450' },
          { description: 'Stickers', quantity: 2, unitAmount: '0.5', amount: '1' },
        ],
        subtotal: '451',
        taxBps: 825,
        tax: '37.2075',
        total: '488.2075',
        amountPaid: '0',
        amountDue: '488.2075',
        dueDate: '2099-01-31T12:00:00.000Z',
        paidAt: null,
        paymentSignature: null,
        hostedCheckoutUrl: `https://billing.example.com/checkout/invoices/${invoice.id}`,
        customer: { walletAddress: wallet, email: 'ada@example.com', label: 'Ada' },
      });
      expect(invoice.number).toMatch(/^INV-\d{6}$/);
      expect(invoice.customerId).toBe(invoice.customer.id);
      expect(res.body.hostedCheckoutUrl).toBe(invoice.hostedCheckoutUrl);
      expect(() => new PublicKey(invoice.onchainId)).not.toThrow();
      const [row] = await t.sql(
        'SELECT merchant_id, total::text AS total, tax::text AS tax FROM invoices WHERE id = $1',
        [invoice.id],
      );
      expect(row).toEqual({ merchant_id: acme.id, total: '488207500', tax: '37207500' });
      const events = await t.sql<{ type: string; payload: { data: { object: { id: string } } } }>(
        `SELECT type, payload FROM events WHERE merchant_id = $1 AND type IN ('invoice.created', 'customer.created')
           AND (payload->'data'->'object'->>'id' = $2 OR payload->'data'->'object'->>'id' = $3)`,
        [acme.id, invoice.id, invoice.customer.id],
      );
      expect(events.map((e) => e.type).sort()).toEqual(['customer.created', 'invoice.created']);
      const created = events.find((e) => e.type === 'invoice.created')!;
      expect(created.payload.data.object).toEqual(invoice);
      // The response is built before the insert: it is exactly what was stored.
      const got = await t.http.get(`/api/invoices/${invoice.id}`).set(acme.auth).expect(200);
      expect(got.body).toEqual({ ...invoice, email: expect.objectContaining({}) });
      // Written in one statement, the two events still list in the order they happened.
      const listed = await t.http.get('/api/events?limit=100').set(acme.auth).expect(200);
      const mine = (listed.body as { type: string; data: { object: { id: string } } }[])
        .filter((e) => [invoice.id, invoice.customer.id].includes(e.data.object.id))
        .map((e) => e.type);
      expect(mine).toEqual(['invoice.created', 'customer.created']); // newest first
    });

    it('upserts an existing customer: the new e-mail and label are applied, no duplicate', async () => {
      const wallet = randomWallet();
      const first = await create(acme, body({ walletAddress: wallet, customerLabel: 'Old' }));
      const second = await create(
        acme,
        body({ walletAddress: wallet, customerLabel: 'New', customerEmail: 'n@example.com' }),
      ).expect(201);
      expect(second.body.invoice.customer).toMatchObject({
        id: first.body.invoice.customer.id,
        label: 'New',
        email: 'n@example.com',
      });
      const rows = await t.sql('SELECT id FROM customers WHERE wallet_address = $1', [wallet]);
      expect(rows).toHaveLength(1);
    });

    it('returns the registration the merchant signs: memo committing to the terms, the reference attached; it lands', async () => {
      const res = await create(acme, body({ dueDate: '2099-06-01T00:00:00.000Z' })).expect(201);
      const { invoice } = res.body;
      const tx = Transaction.from(Buffer.from(res.body.unsignedTx, 'base64'));
      expect(tx.feePayer?.toBase58()).toBe(acme.walletAddress);
      // After the instruction creating the merchant's receiving account (if missing).
      const [, memo, anchor] = tx.instructions;
      // 488.2075 USDC is 488207500 base units.
      const commitment = sha256Hex(
        `invoice:v1\n${invoice.onchainId}\nUSDC\n488207500\n${acme.walletAddress}\n2099-06-01T00:00:00.000Z`,
      );
      expect(memo.programId.toBase58()).toBe(MEMO);
      expect(memo.data.toString('utf8')).toBe(`invoice:v1:${invoice.onchainId}:${commitment}`);
      expect(anchor.keys.map((k) => k.pubkey.toBase58())).toContain(invoice.onchainId);
      fund(t, acme.walletAddress);
      expect(await signAndSend(t, res.body.unsignedTx, 1e9, acme.wallet)).toMatchObject({
        state: 'succeeded',
      });
      // Findable by its reference on-chain.
      const { receipts, signaturesScanned } = await t.app
        .get(ChainPort)
        .scanReference(invoice.onchainId, null);
      expect([receipts.length, signaturesScanned]).toEqual([0, 1]);
    });

    it('numbers invoices per merchant, sequentially and uniquely under concurrency', async () => {
      const m = await t.createMerchant('Numbers');
      const results = await Promise.all(
        Array.from({ length: 20 }, () => create(m, body()).then((r) => r.body.invoice.number)),
      );
      expect([...results].sort()).toEqual(
        Array.from({ length: 20 }, (_, i) => `INV-${String(i + 1).padStart(6, '0')}`),
      );
      const other = await create(globex).expect(201);
      expect(other.body.invoice.number).toMatch(/^INV-\d{6}$/);
    });

    it.each<[string, object[], number, string, string, string]>([
      ['one unit', [line('0.000001')], 0, '0.000001', '0', '0.000001'],
      ['tax 0', [line('9.99', 3)], 0, '29.97', '0', '29.97'],
      ['tax 1 bp', [line('100')], 1, '100', '0.01', '100.01'],
      ['tax 8.25%', [line('19.99', 7)], 825, '139.93', '11.544225', '151.474225'],
      ['tax 99.99%', [line('1')], 9999, '1', '0.9999', '1.9999'],
      ['tax 100%', [line('12.345678')], 10000, '12.345678', '12.345678', '24.691356'],
      // 0.000050 x 1% = 0.0000005: exactly half a base unit, rounded up.
      ['half a unit rounds up', [line('0.00005')], 100, '0.00005', '0.000001', '0.000051'],
      // 0.000049 x 1% = 0.00000049: below half, rounded down.
      ['below half rounds down', [line('0.000049')], 100, '0.000049', '0', '0.000049'],
      [
        'fifty line items',
        Array.from({ length: 50 }, (_, i) => line(`${i + 1}.000001`, i + 1)),
        250,
        '42925.001275',
        '1073.125032',
        '43998.126307',
      ],
      [
        'the largest total',
        [line('9223372036854.775807')],
        0,
        '9223372036854.775807',
        '0',
        '9223372036854.775807',
      ],
    ])('money: %s', async (_name, lineItems, taxBps, subtotal, tax, total) => {
      const res = await create(acme, body({ lineItems, taxBps })).expect(201);
      expect(res.body.invoice).toMatchObject({ subtotal, tax, total, amountDue: total });
    });

    it('a total beyond the largest amount is a 400, not a 500, and creates nothing', async () => {
      const before = await count('invoices');
      for (const payload of [
        body({ lineItems: [line('9223372036854.775807', 2)], taxBps: 0 }),
        body({ lineItems: [line('9223372036854.775807')], taxBps: 1 }),
        body({ lineItems: [line('5000000000000'), line('5000000000000')], taxBps: 0 }),
      ]) {
        const res = await create(acme, payload).expect(400);
        expect(res.body.error).toMatchObject({
          code: 'VALIDATION_ERROR',
          message: expect.stringMatching(/exceeds the largest supported amount/),
        });
      }
      expect(await count('invoices')).toBe(before);
    });

    it.each([
      ['no line items', { lineItems: [] }, 'lineItems'],
      ['51 line items', { lineItems: Array.from({ length: 51 }, () => line('1')) }, 'lineItems'],
      ['a line item of quantity 0', { lineItems: [line('1', 0)] }, 'lineItems.0.quantity'],
      ['a fractional quantity', { lineItems: [line('1', 1.5)] }, 'lineItems.0.quantity'],
      ['a unit amount of 7 decimals', { lineItems: [line('0.0000001')] }, 'lineItems.0.unitAmount'],
      ['a unit amount of 0', { lineItems: [line('0')] }, 'lineItems.0.unitAmount'],
      [
        'an empty description',
        { lineItems: [{ ...line('1'), description: '' }] },
        'lineItems.0.description',
      ],
      ['an unknown line field', { lineItems: [{ ...line('1'), sku: 'X' }] }, 'lineItems.0.sku'],
      ['taxBps 10001', { taxBps: 10_001 }, 'taxBps'],
      ['taxBps negative', { taxBps: -1 }, 'taxBps'],
      ['taxBps fractional', { taxBps: 1.5 }, 'taxBps'],
      ['mint unknown', { mint: 'EURC' }, 'mint'],
      ['a bad wallet', { walletAddress: 'not-base58!' }, 'walletAddress'],
      ['a memo of 501', { memo: 'x'.repeat(501) }, 'memo'],
      ['a due date that is not a date', { dueDate: 'tomorrow' }, 'dueDate'],
      ['a due date in the past', { dueDate: '2020-01-01T00:00:00Z' }, 'dueDate'],
      ['a bad customer e-mail', { customerEmail: 'nope' }, 'customerEmail'],
      ['a customer label of 101', { customerLabel: 'x'.repeat(101) }, 'customerLabel'],
      ['an unknown field', { currency: 'USD' }, 'currency'],
    ])('refuses %s with 400 and changes nothing', async (_name, change, field) => {
      const before = [await count('invoices'), await count('customers'), await count('events')];
      const res = await create(acme, body(change)).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
      expect([await count('invoices'), await count('customers'), await count('events')]).toEqual(
        before,
      );
    });
  });

  describe('GET /api/invoices', () => {
    let mine: { id: string; onchainId: string; number: string }[];
    beforeAll(async () => {
      const m = await t.createMerchant('Lister');
      mine = [];
      for (const [memo, label] of [
        ['Quarterly 100% done', 'Grace Hopper'],
        ['Monthly', 'Alan Turing'],
        ['Monthly_x', 'Ada'],
      ]) {
        const res = await create(m, body({ memo, customerLabel: label })).expect(201);
        mine.push(res.body.invoice);
        t.clock.advance(1000);
      }
      await t.http.post(`/api/invoices/${mine[1].id}/void`).set(m.auth).expect(200);
      (t as TestApp & { lister?: TestMerchant }).lister = m;
    });
    const lister = () => (t as TestApp & { lister: TestMerchant }).lister;
    const ids = (res: { body: { id: string }[] }) => res.body.map((i) => i.id);

    it('lists newest first with the nested customer; never another merchant’s', async () => {
      const res = await t.http.get('/api/invoices').set(lister().auth).expect(200);
      expect(ids(res)).toEqual([mine[2].id, mine[1].id, mine[0].id]);
      expect(res.body[0].customer).toMatchObject({ label: 'Ada' });
      const other = await t.http.get('/api/invoices').set(globex.auth).expect(200);
      expect(ids(other)).not.toContain(mine[0].id);
    });

    it('each listed invoice is exactly the invoice GET returns (PostgreSQL renders the list)', async () => {
      const m = await t.createMerchant('Shapes');
      const cases = [
        body({ memo: undefined, taxBps: 0 }),
        body({ lineItems: [line('0.000001', 1_000_000), line('9.999999', 7)], taxBps: 9999 }),
        body({
          lineItems: [line('123456789.5', 3, 'Ünïcode "quoted" \\ <b>')],
          taxBps: 825,
          dueDate: new Date(t.clock.now().getTime() + 86_400_000).toISOString(),
          customerEmail: 'shape@example.com',
          customerLabel: 'Shape',
        }),
        body({ lineItems: [line('0.5', 1)], taxBps: 10_000 }),
      ];
      for (const c of cases) {
        await create(m, c).expect(201);
        t.clock.advance(1000);
      }
      const first = (await t.http.get('/api/invoices').set(m.auth).expect(200)).body;
      await t.http.post(`/api/invoices/${first[0].id}/void`).set(m.auth).expect(200);
      // A paid one: paidAt and paymentSignature set (as the payment watcher will).
      const signature = '5'.repeat(64);
      await t.app
        .get(Db)
        .transaction((tx) =>
          t.app.get(InvoicesService).transition(tx, m.id, first[1].id, 'pay', { signature }),
        );
      // A customer changed after its invoice: the nested customer follows (a trigger re-renders).
      await t.http
        .patch(`/api/customers/${first[3].customer.id}`)
        .set(m.auth)
        .send({ label: 'Renamed "quoted" \\ Ünï', email: null })
        .expect(200);
      // One invoice as created before line items were stored rendered: the list renders them.
      await t.sql('UPDATE invoices SET line_items_json = NULL WHERE id = $1', [first[2].id]);
      const listed = await t.http.get('/api/invoices').set(m.auth).expect(200);
      expect(listed.headers['content-type']).toMatch(/^application\/json/);
      expect(listed.body).toHaveLength(cases.length);
      for (const invoice of listed.body) {
        const got = await t.http.get(`/api/invoices/${invoice.id}`).set(m.auth).expect(200);
        const { email: _email, ...withoutEmail } = got.body;
        expect(invoice).toEqual(withoutEmail);
        if (invoice.id === first[1].id) expect(invoice.paymentSignature).toBe(signature);
        if (invoice.id === first[3].id)
          expect(invoice.customer.label).toBe('Renamed "quoted" \\ Ünï');
        expect(Object.keys(invoice)).toEqual(Object.keys(withoutEmail));
      }
      const none = await t.http.get('/api/invoices?search=nothing-matches').set(m.auth).expect(200);
      expect(none.text).toBe('[]');
    });

    it('with hostile text, each list item is the text JSON.stringify makes of the mapper’s object', async () => {
      const m = await t.createMerchant('Hostile');
      const hostile = [
        'quote " backslash \\ slash / </script>',
        'line\u2028separator\u2029paragraph',
        'controls \u0001\u0008\t\n\f\r\u001f\u007f end',
        'emoji 🧾💸 and ünïcödé 漢字 \ud83d\ude00',
        "apostrophe ' and ''doubled'' -- ; drop",
      ];
      const created: string[] = [];
      for (const [i, text] of hostile.entries()) {
        const res = await create(
          m,
          body({ lineItems: [line('1.5', 2, text)], customerLabel: `Label ${i}` }),
        ).expect(201);
        created.push(res.body.invoice.id);
        t.clock.advance(1000);
      }
      const none = await create(m, body({ memo: undefined })).expect(201);
      // Free text written as it may come from anywhere (the API's validation aside): the triggers
      // render it on write, and the list must say exactly what the mapper says.
      for (const [i, id] of created.entries()) {
        await t.sql('UPDATE invoices SET memo = $1 WHERE id = $2', [hostile[i], id]);
        await t.sql(
          `UPDATE customers SET label = $1, email = $2
            WHERE id = (SELECT customer_id FROM invoices WHERE id = $3)`,
          [hostile[(i + 1) % hostile.length], `${hostile[(i + 2) % hostile.length]}@e.x`, id],
        );
      }
      await t.sql(
        `UPDATE customers SET label = NULL, email = NULL
          WHERE id = (SELECT customer_id FROM invoices WHERE id = $1)`,
        [none.body.invoice.id],
      );
      // Read through the service, not HTTP: e-mails this hostile break the API's schema (which
      // the test app checks every response against), not the list.
      const service = t.app.get(InvoicesService);
      const batches: string[] = [];
      await service.listJson(m.id, {}, (json) => Promise.resolve(batches.push(json) > 0));
      const listed = JSON.parse(`[${batches.join(',')}]`) as { id: string; memo: unknown }[];
      const expected: string[] = [];
      for (const { id } of listed) {
        const { email: _email, ...mapped } = await service.get(m.id, id);
        expected.push(JSON.stringify(mapped));
      }
      expect(expected).toHaveLength(hostile.length + 1);
      expect(batches.join(',')).toBe(expected.join(','));
      expect(listed.map((i) => i.memo)).toEqual([null, ...[...hostile].reverse()]);
    });

    it('filters by status', async () => {
      const open = await t.http.get('/api/invoices?status=Open').set(lister().auth).expect(200);
      expect(ids(open)).toEqual([mine[2].id, mine[0].id]);
      const cancelled = await t.http
        .get('/api/invoices?status=Cancelled')
        .set(lister().auth)
        .expect(200);
      expect(ids(cancelled)).toEqual([mine[1].id]);
    });

    it.each([
      ['memo, any case', 'QUARTERLY', [0]],
      ['a literal %', '100%', [0]],
      ['a literal _', 'y_x', [2]],
      ['customer label', 'turing', [1]],
      ['onchainId', 'ONCHAIN', [0]],
      ['number', 'NUMBER', [2]],
      ['nothing', 'zzz-nothing', []],
    ])('searches by %s', async (_name, search, expected) => {
      const term =
        search === 'ONCHAIN'
          ? mine[0].onchainId.slice(3, 12)
          : search === 'NUMBER'
            ? mine[2].number.toLowerCase()
            : search;
      const res = await t.http
        .get('/api/invoices')
        .query({ search: term })
        .set(lister().auth)
        .expect(200);
      expect(ids(res)).toEqual(expected.map((i) => mine[i].id));
    });

    it('searches by the customer wallet, combined with a status filter', async () => {
      const [row] = await t.sql<{ wallet_address: string }>(
        'SELECT c.wallet_address FROM invoices i JOIN customers c ON c.id = i.customer_id WHERE i.id = $1',
        [mine[1].id],
      );
      const res = await t.http
        .get('/api/invoices')
        .query({ search: row.wallet_address.slice(-10), status: 'Cancelled' })
        .set(lister().auth)
        .expect(200);
      expect(ids(res)).toEqual([mine[1].id]);
    });

    it.each([{ status: 'Draft' }, { limit: 'x' }, { search: 'x'.repeat(201) }])(
      'refuses the query %j with 400',
      async (query) => {
        const res = await t.http.get('/api/invoices').query(query).set(lister().auth).expect(400);
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
      },
    );
  });

  describe('GET /api/invoices/:id, void, registration-tx', () => {
    it('gets an invoice in the creation shape with its e-mail; not found is INVOICE_NOT_FOUND for every kind of miss', async () => {
      const created = await create(acme).expect(201);
      const got = await t.http
        .get(`/api/invoices/${created.body.invoice.id}`)
        .set(acme.auth)
        .expect(200);
      expect(got.body).toEqual({ ...created.body.invoice, email: null }); // no customer e-mail
      for (const [who, id] of [
        [globex, created.body.invoice.id],
        [acme, '00000000-0000-4000-8000-000000000000'],
        [acme, 'INV-000001'],
      ] as const) {
        for (const [method, path] of [
          ['get', `/api/invoices/${id}`],
          ['post', `/api/invoices/${id}/void`],
          ['post', `/api/invoices/${id}/registration-tx`],
        ] as const) {
          const res = await t.http[method](path).set(who.auth).expect(404);
          expect(res.body.error).toMatchObject({
            code: 'INVOICE_NOT_FOUND',
            message: 'Invoice not found',
          });
        }
      }
      const after = await t.http
        .get(`/api/invoices/${created.body.invoice.id}`)
        .set(acme.auth)
        .expect(200);
      expect(after.body.status).toBe('Open');
    });

    it('voids an Open invoice once (invoice.voided); a second void is 400 INVOICE_NOT_OPEN', async () => {
      const created = await create(acme).expect(201);
      const id = created.body.invoice.id;
      t.clock.advance(1000);
      const voided = await t.http.post(`/api/invoices/${id}/void`).set(acme.auth).expect(200);
      expect(voided.body).toMatchObject({ id, status: 'Cancelled' });
      expect(Date.parse(voided.body.updatedAt)).toBeGreaterThan(
        Date.parse(created.body.invoice.updatedAt),
      );
      const again = await t.http.post(`/api/invoices/${id}/void`).set(acme.auth).expect(400);
      expect(again.body.error).toMatchObject({
        code: 'INVOICE_NOT_OPEN',
        message: 'Invoice is not Open (it is Cancelled)',
      });
      const events = await t.sql<{ payload: { data: { object: unknown } } }>(
        `SELECT payload FROM events WHERE type = 'invoice.voided' AND payload->'data'->'object'->>'id' = $1`,
        [id],
      );
      expect(events.map((e) => e.payload.data.object)).toEqual([voided.body]);
      const reg = await t.http
        .post(`/api/invoices/${id}/registration-tx`)
        .set(acme.auth)
        .expect(400);
      expect(reg.body.error.code).toBe('INVOICE_NOT_OPEN');
    });

    it('transitions: void is allowed from Open only; Paid and Expired are final', async () => {
      const service = t.app.get(InvoicesService);
      const db = t.app.get(Db);
      const outcomes: Record<string, number> = {};
      for (const action of ['pay', 'expire'] as const) {
        const created = await create(acme).expect(201);
        const id = created.body.invoice.id;
        const moved = await db.transaction((tx) =>
          service.transition(tx, acme.id, id, action, { signature: 'sig' }),
        );
        expect(moved.status).toBe(action === 'pay' ? 'Paid' : 'Expired');
        if (action === 'pay') expect(moved).toMatchObject({ paymentSignature: 'sig' });
        for (const next of ['void', 'pay', 'expire'] as const) {
          await expect(
            db.transaction((tx) => service.transition(tx, acme.id, id, next)),
          ).rejects.toMatchObject({ code: 'INVOICE_NOT_OPEN' });
        }
        const res = await t.http.post(`/api/invoices/${id}/void`).set(acme.auth);
        outcomes[action] = res.status;
      }
      expect(outcomes).toEqual({ pay: 400, expire: 400 });
    });

    it('a fresh registration-tx for an Open invoice commits to the same terms', async () => {
      const created = await create(acme).expect(201);
      const res = await t.http
        .post(`/api/invoices/${created.body.invoice.id}/registration-tx`)
        .set(acme.auth)
        .expect(200);
      const fresh = Transaction.from(Buffer.from(res.body.unsignedTx, 'base64'));
      const first = Transaction.from(Buffer.from(created.body.unsignedTx, 'base64'));
      expect(fresh.instructions[0].data).toEqual(first.instructions[0].data);
      expect(res.body.lastValidBlockHeight).toEqual(expect.any(Number));
    });
  });
});
