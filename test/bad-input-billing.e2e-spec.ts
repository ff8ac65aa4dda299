import { Db } from '../src/database/db';
import bs58 from 'bs58';
import { SubscriptionsService } from '../src/subscriptions/subscriptions.service';
import { BadInput, badInputFailures, tablesSnapshot } from './helpers/bad-input';
import { createTestApp, randomWallet, TestApp, TestMerchant } from './helpers/test-app';

const WALLET = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
const long = (n: number) => 'x'.repeat(n);
const V = { status: 400, code: 'VALIDATION_ERROR' } as const;
const ZERO = '00000000-0000-4000-8000-000000000000';

interface Ids {
  plan: string;
  otherPlan: string;
  inactivePlan: string;
  invoice: string;
  voidInvoice: string;
  otherInvoice: string;
  activeSub: string;
  cancelledSub: string;
  otherSub: string;
}

const plan = (extra: object = {}) => ({
  label: 'Pro',
  mint: 'USDC',
  amount: '9.99',
  intervalSeconds: 86_400,
  ...extra,
});
const item = (extra: object = {}) => ({
  description: 'Work',
  quantity: 1,
  unitAmount: '1',
  ...extra,
});
const invoice = (extra: object = {}) => ({
  walletAddress: WALLET,
  mint: 'USDC',
  lineItems: [item()],
  ...extra,
});

/** Plans, invoices, subscriptions and the Idempotency-Key: each row a 4xx that changes nothing. */
function table(ids: Ids): BadInput[] {
  const post = (name: string, path: string, body: unknown, field?: string): BadInput => ({
    name,
    method: 'post',
    path,
    body,
    ...V,
    field,
  });
  const plans = (name: string, body: unknown, field?: string) =>
    post(`plan: ${name}`, '/api/plans', body, field);
  const patch = (name: string, body: unknown, field?: string): BadInput => ({
    name: `plan patch: ${name}`,
    method: 'patch',
    path: `/api/plans/${ids.plan}`,
    body,
    ...V,
    field,
  });
  const invoices = (name: string, body: unknown, field?: string) =>
    post(`invoice: ${name}`, '/api/invoices', body, field);
  const get = (name: string, path: string, status: number, code: string, field?: string) =>
    ({ name, method: 'get', path, status, code, field }) as BadInput;
  const action = (name: string, path: string, status: number, code: string): BadInput => ({
    name,
    method: 'post',
    path,
    status,
    code,
  });
  const NF = [404, 'NOT_FOUND'] as const;
  const INF = [404, 'INVOICE_NOT_FOUND'] as const;
  const QV = (field: string) => [400, 'VALIDATION_ERROR', field] as const;
  return [
    // POST /api/plans
    plans('missing label', { mint: 'USDC', amount: '1', intervalSeconds: 86_400 }, 'label'),
    plans('empty label', plan({ label: '' }), 'label'),
    plans('label of 101 characters', plan({ label: long(101) }), 'label'),
    plans('label of spaces only', plan({ label: '   ' }), 'label'),
    plans('description of 501 characters', plan({ description: long(501) }), 'description'),
    plans('unknown mint', plan({ mint: 'DOGE' }), 'mint'),
    plans('mint in lower case', plan({ mint: 'usdc' }), 'mint'),
    plans('amount zero', plan({ amount: '0' }), 'amount'),
    plans('amount negative', plan({ amount: '-1' }), 'amount'),
    plans('amount with 7 decimals', plan({ amount: '1.0000001' }), 'amount'),
    plans('amount as a JSON number', plan({ amount: 9.99 }), 'amount'),
    plans('amount with an exponent', plan({ amount: '1e3' }), 'amount'),
    plans('amount beyond u64', plan({ amount: '18446744073709.551616' }), 'amount'),
    plans('interval below a day', plan({ intervalSeconds: 86_399 }), 'intervalSeconds'),
    plans('interval above a year', plan({ intervalSeconds: 31_536_001 }), 'intervalSeconds'),
    plans('interval not whole hours', plan({ intervalSeconds: 86_401 }), 'intervalSeconds'),
    plans('interval as a string', plan({ intervalSeconds: '86400' }), 'intervalSeconds'),
    plans('interval fractional', plan({ intervalSeconds: 86_400.5 }), 'intervalSeconds'),
    plans('unknown field', plan({ trialDays: 7 }), 'trialDays'),
    plans('body an array', [plan()]),
    // PATCH /api/plans/:id and the other plan routes
    patch('amount', { amount: '1' }, 'amount'),
    patch('mint', { mint: 'PYUSD' }, 'mint'),
    patch('intervalSeconds', { intervalSeconds: 172_800 }, 'intervalSeconds'),
    patch('active as a string', { active: 'yes' }, 'active'),
    patch('empty label', { label: '' }, 'label'),
    patch('label null', { label: null }, 'label'),
    {
      ...patch('malformed id', { active: false }),
      path: '/api/plans/plan_1',
      status: 404,
      code: 'NOT_FOUND',
    },
    {
      ...patch('another merchant’s plan', { active: false }),
      path: `/api/plans/${ids.otherPlan}`,
      status: 404,
      code: 'NOT_FOUND',
    },
    get('plan: another merchant’s', `/api/plans/${ids.otherPlan}`, ...NF),
    action(
      'plan registration-tx: unknown',
      '/api/plans/00000000-0000-4000-8000-000000000000/registration-tx',
      ...NF,
    ),
    // POST /api/invoices
    invoices('missing lineItems', { walletAddress: WALLET, mint: 'USDC' }, 'lineItems'),
    invoices('no line items', invoice({ lineItems: [] }), 'lineItems'),
    invoices('51 line items', invoice({ lineItems: Array(51).fill(item()) }), 'lineItems'),
    invoices('lineItems an object', invoice({ lineItems: item() }), 'lineItems'),
    invoices('a null line item', invoice({ lineItems: [null] })),
    invoices(
      'quantity zero',
      invoice({ lineItems: [item({ quantity: 0 })] }),
      'lineItems.0.quantity',
    ),
    invoices(
      'quantity fractional',
      invoice({ lineItems: [item({ quantity: 1.5 })] }),
      'lineItems.0.quantity',
    ),
    invoices(
      'quantity above a million',
      invoice({ lineItems: [item({ quantity: 1_000_001 })] }),
      'lineItems.0.quantity',
    ),
    invoices(
      'unitAmount zero',
      invoice({ lineItems: [item({ unitAmount: '0' })] }),
      'lineItems.0.unitAmount',
    ),
    invoices(
      'unitAmount negative',
      invoice({ lineItems: [item({ unitAmount: '-5' })] }),
      'lineItems.0.unitAmount',
    ),
    invoices(
      'unitAmount with 7 decimals',
      invoice({ lineItems: [item({ unitAmount: '0.0000001' })] }),
      'lineItems.0.unitAmount',
    ),
    invoices(
      'empty description',
      invoice({ lineItems: [item({ description: '' })] }),
      'lineItems.0.description',
    ),
    invoices(
      'description of 201 characters',
      invoice({ lineItems: [item({ description: long(201) })] }),
      'lineItems.0.description',
    ),
    invoices('unknown line item field', invoice({ lineItems: [item({ sku: 'A-1' })] })),
    invoices('taxBps above 10000', invoice({ taxBps: 10_001 }), 'taxBps'),
    invoices('taxBps negative', invoice({ taxBps: -1 }), 'taxBps'),
    invoices('taxBps fractional', invoice({ taxBps: 8.25 }), 'taxBps'),
    invoices('mint SOL', invoice({ mint: 'SOL' }), 'mint'),
    invoices('bad wallet', invoice({ walletAddress: 'not-a-wallet' }), 'walletAddress'),
    invoices('bad customer e-mail', invoice({ customerEmail: 'nope' }), 'customerEmail'),
    invoices(
      'customer e-mail with a header in its quoted local part',
      invoice({ customerEmail: '"a\r\nBcc: x@y"@b.example' }),
      'customerEmail',
    ),
    invoices('customer label of 101', invoice({ customerLabel: long(101) }), 'customerLabel'),
    invoices(
      'customer label of 100 and U+FE0F (101 as the database counts)',
      invoice({ customerLabel: `${long(100)}\uFE0F` }),
      'customerLabel',
    ),
    invoices('memo of 500 and U+FE0F', invoice({ memo: `${long(500)}\uFE0F` }), 'memo'),
    plans('label of 100 and U+FE0F', plan({ label: `${long(100)}\uFE0F` }), 'label'),
    invoices('memo of 501 characters', invoice({ memo: long(501) }), 'memo'),
    invoices('dueDate in the past', invoice({ dueDate: '2020-01-01T00:00:00.000Z' }), 'dueDate'),
    invoices('dueDate not a date', invoice({ dueDate: 'tomorrow' }), 'dueDate'),
    invoices('dueDate month 13', invoice({ dueDate: '2030-13-01T00:00:00Z' }), 'dueDate'),
    invoices(
      'total beyond u64',
      invoice({ lineItems: [item({ quantity: 1_000_000, unitAmount: '18446744073709' })] }),
    ),
    // The invoice routes
    get('invoices: status Draft', '/api/invoices?status=Draft', 400, 'VALIDATION_ERROR', 'status'),
    get(
      'invoices: status in lower case',
      '/api/invoices?status=open',
      400,
      'VALIDATION_ERROR',
      'status',
    ),
    get(
      'invoices: search of 201',
      `/api/invoices?search=${long(201)}`,
      400,
      'VALIDATION_ERROR',
      'search',
    ),
    get(
      'invoices: unknown query parameter',
      '/api/invoices?sort=asc',
      400,
      'VALIDATION_ERROR',
      'sort',
    ),
    get('invoice: malformed id', '/api/invoices/INV-000001', ...INF),
    get('invoice: another merchant’s', `/api/invoices/${ids.otherInvoice}`, ...INF),
    action('invoice void: another merchant’s', `/api/invoices/${ids.otherInvoice}/void`, ...INF),
    action(
      'invoice void: already void',
      `/api/invoices/${ids.voidInvoice}/void`,
      400,
      'INVOICE_NOT_OPEN',
    ),
    action(
      'invoice registration-tx: void',
      `/api/invoices/${ids.voidInvoice}/registration-tx`,
      400,
      'INVOICE_NOT_OPEN',
    ),
    {
      ...post('invoice void: with a body', `/api/invoices/${ids.invoice}/void`, { reason: 'x' }),
      field: 'reason',
    },
    // Subscriptions
    get(
      'subscriptions: status Trialing',
      '/api/subscriptions?status=Trialing',
      400,
      'VALIDATION_ERROR',
      'status',
    ),
    get('subscription: another merchant’s', `/api/subscriptions/${ids.otherSub}`, ...NF),
    action(
      'subscription: pause a cancelled one',
      `/api/subscriptions/${ids.cancelledSub}/pause`,
      400,
      'VALIDATION_ERROR',
    ),
    action(
      'subscription: resume an active one',
      `/api/subscriptions/${ids.activeSub}/resume`,
      400,
      'VALIDATION_ERROR',
    ),
    action('subscription: cancel a malformed id', '/api/subscriptions/sub_1/cancel', ...NF),
    action(
      'subscription: cancel another merchant’s',
      `/api/subscriptions/${ids.otherSub}/cancel`,
      ...NF,
    ),
    // The payments ledger
    get('payments: invoiceId not a UUID', '/api/payments?invoiceId=INV-1', ...QV('invoiceId')),
    get('payments: unknown status', '/api/payments?status=paid', ...QV('status')),
    get('payments: unknown query parameter', '/api/payments?sort=asc', ...QV('sort')),
    // The public checkout API
    get('checkout invoice: malformed id', '/api/checkout/invoices/x', ...INF),
    get(
      'checkout invoice request: unknown id',
      `/api/checkout/invoices/${ZERO}/transaction`,
      ...INF,
    ),
    post(
      'checkout invoice pay: no account',
      `/api/checkout/invoices/${ids.invoice}/transaction`,
      {},
      'account',
    ),
    post(
      'checkout invoice pay: account not base58',
      `/api/checkout/invoices/${ids.invoice}/transaction`,
      { account: '0OIl'.repeat(10) },
      'account',
    ),
    post(
      'checkout invoice pay: account of 31 bytes',
      `/api/checkout/invoices/${ids.invoice}/transaction`,
      { account: bs58.encode(Buffer.alloc(31, 7)) },
      'account',
    ),
    post(
      'checkout invoice pay: unknown field',
      `/api/checkout/invoices/${ids.invoice}/transaction`,
      { account: WALLET, amount: '1' },
      'amount',
    ),
    {
      ...post(
        'checkout invoice pay: a voided invoice',
        `/api/checkout/invoices/${ids.voidInvoice}/transaction`,
        { account: WALLET },
      ),
      status: 400,
      code: 'INVOICE_NOT_OPEN',
    },
    get('checkout plan: malformed id', '/api/checkout/plans/plan_1', ...NF),
    get('checkout plan request: unknown id', `/api/checkout/plans/${ZERO}/transaction`, ...NF),
    post(
      'checkout subscribe: an inactive plan',
      `/api/checkout/plans/${ids.inactivePlan}/transaction`,
      { account: WALLET },
      'planId',
    ),
    post(
      'checkout subscribe: account an array',
      `/api/checkout/plans/${ids.plan}/transaction`,
      { account: [WALLET] },
      'account',
    ),
    post(
      'checkout confirm: no signature',
      `/api/checkout/plans/${ids.plan}/confirm`,
      {},
      'signature',
    ),
    post(
      'checkout confirm: signature a number',
      `/api/checkout/plans/${ids.plan}/confirm`,
      { signature: 5 },
      'signature',
    ),
    post(
      'checkout confirm: signature of 65 bytes',
      `/api/checkout/plans/${ids.plan}/confirm`,
      { signature: 'z'.repeat(88) },
      'signature',
    ),
    post(
      'checkout confirm: a signature the chain never saw',
      `/api/checkout/plans/${ids.plan}/confirm`,
      { signature: '1'.repeat(64) },
      'signature',
    ),
    {
      ...post('checkout confirm: unknown plan', `/api/checkout/plans/${ZERO}/confirm`, {
        signature: '1'.repeat(64),
      }),
      ...{ status: 404, code: 'NOT_FOUND' },
    },
    post('dev billing run: with a body', '/api/dev/billing/run', { now: true }, 'now'),
    // The Idempotency-Key header
    {
      ...invoices('Idempotency-Key of 256 characters', invoice()),
      headers: { 'Idempotency-Key': long(256) },
      field: 'Idempotency-Key',
    },
    {
      ...plans('Idempotency-Key with a tab', plan()),
      headers: { 'Idempotency-Key': 'a\tb' },
      field: 'Idempotency-Key',
    },
  ];
}

describe('Bad input: plans, invoices, subscriptions', () => {
  let t: TestApp;
  let m: TestMerchant;
  let ids: Ids;

  beforeAll(async () => {
    // The schedule's sweeps off: the tables must show only what the bad requests did (a sweep
    // on a busy machine writes payment-scan cursors in the middle of the table).
    t = await createTestApp({
      env: { WATCH_INTERVAL_MS: '3600000', CHARGE_RUN_INTERVAL_MS: '3600000' },
    });
    m = await t.createMerchant('Careful');
    const other = await t.createMerchant('Other');
    const subscriptions = t.app.get(SubscriptionsService);
    const makePlan = async (who: TestMerchant) =>
      (await t.http.post('/api/plans').set(who.auth).send(plan()).expect(201)).body.plan
        .id as string;
    const makeInvoice = async (who: TestMerchant) =>
      (await t.http.post('/api/invoices').set(who.auth).send(invoice()).expect(201)).body.invoice
        .id as string;
    const subscribe = (who: TestMerchant, planId: string) =>
      t.app.get(Db).transaction(async (em) => {
        const wallet = randomWallet();
        return (
          await subscriptions.create(em, who.id, {
            planId,
            walletAddress: wallet,
            onchainAddress: wallet,
            scheme: 'token-delegate',
          })
        ).id;
      });
    const [planId, otherPlan] = [await makePlan(m), await makePlan(other)];
    ids = {
      plan: planId,
      otherPlan,
      inactivePlan: await makePlan(m),
      invoice: await makeInvoice(m),
      voidInvoice: await makeInvoice(m),
      otherInvoice: await makeInvoice(other),
      activeSub: await subscribe(m, planId),
      cancelledSub: await subscribe(m, planId),
      otherSub: await subscribe(other, otherPlan),
    };
    await t.http.post(`/api/invoices/${ids.voidInvoice}/void`).set(m.auth).expect(200);
    await t.http.post(`/api/subscriptions/${ids.cancelledSub}/cancel`).set(m.auth).expect(200);
    await t.http
      .patch(`/api/plans/${ids.inactivePlan}`)
      .set(m.auth)
      .send({ active: false })
      .expect(200);
  });
  afterAll(() => t.close());

  const snapshot = () =>
    tablesSnapshot(t, {
      customers: 'customers',
      plans: 'plans',
      invoices: 'invoices',
      invoice_numbers: '(SELECT merchant_id AS id, last FROM invoice_numbers)',
      subscriptions: 'subscriptions',
      events: 'events',
      email_outbox: 'email_outbox',
      idempotency_keys: 'idempotency_keys',
      payments: 'payments',
      charge_attempts: 'charge_attempts',
      chain_cursors: '(SELECT address AS id, cursor FROM chain_cursors)',
    });

  it('has at least 40 cases', () => {
    expect(table(ids).length).toBeGreaterThanOrEqual(40);
  });

  it('answers every bad input with its 4xx and code, and changes nothing', async () => {
    const before = await snapshot();
    expect(await badInputFailures(t, m, table(ids))).toEqual([]);
    expect(await snapshot()).toBe(before);
  });
});
