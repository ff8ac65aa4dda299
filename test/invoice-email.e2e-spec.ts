import { FAST, quiet, S } from './helpers/email';
import { TestSmtpServer } from './helpers/smtp-server';
import { createTestApp, randomWallet, TestApp, TestMerchant } from './helpers/test-app';
import { waitFor } from './helpers/webhook-receiver';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * The invoice notification through the real API: queued in the invoice's transaction, sent by
 * the outbox's worker to a real SMTP server on loopback, its delivery shown on the invoice.
 */
describe('Invoice e-mail', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let acme: TestMerchant;

  beforeAll(async () => {
    smtp = await new TestSmtpServer().start();
    t = await createTestApp({ env: { ...FAST, SMTP_URL: smtp.url } });
    acme = await t.createMerchant('Acme & Sons');
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  const createInvoice = (body: Record<string, unknown>) =>
    t.http
      .post('/api/invoices')
      .set(acme.auth)
      .send({
        walletAddress: randomWallet(),
        mint: 'USDC',
        lineItems: [
          { description: 'Design <b>work</b>', quantity: 3, unitAmount: '150.5' },
          { description: 'Hosting', quantity: 1, unitAmount: '9.99' },
        ],
        taxBps: 825,
        ...body,
      })
      .expect(201);
  const detail = async (id: string) =>
    (await t.http.get(`/api/invoices/${id}`).set(acme.auth).expect(200)).body;
  const mailTo = (address: string) => smtp.received.filter((m) => m.envelope.to.includes(address));

  it("never shows the customer the merchant's internal memo", async () => {
    const memo = 'INTERNAL: margin 40%, chase Bob';
    const created = await createInvoice({ customerEmail: 'memo@example.com', memo });
    expect(created.body.invoice.memo).toBe(memo); // the merchant still has it
    await waitFor(() => mailTo('memo@example.com').length === 1);
    const [mail] = mailTo('memo@example.com');
    expect(mail.parsed.text).toContain(created.body.invoice.number);
    for (const body of [mail.parsed.text!, String(mail.parsed.html), mail.parsed.subject!]) {
      expect(body).not.toContain('margin 40%');
      expect(body).not.toMatch(/memo/i);
    }
  });

  it('sends the customer the invoice (merchant, items, total and mint, due date, link) once', async () => {
    const dueDate = new Date(t.clock.now().getTime() + 14 * 86_400 * S).toISOString();
    const created = await createInvoice({ customerEmail: 'ada@example.com', dueDate });
    const { invoice } = created.body;
    expect(invoice.customer.email).toBe('ada@example.com');

    await waitFor(() => mailTo('ada@example.com').length === 1);
    const [mail] = mailTo('ada@example.com');
    expect(mail.parsed.subject).toBe(`Invoice ${invoice.number} from Acme & Sons: 499.562925 USDC`);
    const text = mail.parsed.text!;
    for (const part of [
      'Acme & Sons sent you invoice',
      invoice.number,
      'Amount due: 499.562925 USDC',
      '- Design <b>work</b>: 3 x 150.5 USDC = 451.5 USDC',
      '- Hosting: 1 x 9.99 USDC = 9.99 USDC',
      'Tax (8.25%): 38.072925 USDC',
      invoice.hostedCheckoutUrl,
    ]) {
      expect(text).toContain(part);
    }
    expect(text).toMatch(/Due: .*20\d\d/);
    const html = String(mail.parsed.html);
    expect(html).toContain('Acme &amp; Sons');
    expect(html).toContain('Design &lt;b&gt;work&lt;/b&gt;');
    expect(html).toContain(`href="${invoice.hostedCheckoutUrl}"`);

    await waitFor(async () => (await detail(invoice.id)).email?.status === 'sent');
    const got = await detail(invoice.id);
    expect(got.email).toEqual({
      to: 'ada@example.com',
      status: 'sent',
      attempts: 1,
      lastError: null,
      sentAt: expect.stringMatching(ISO),
      nextAttemptAt: null,
    });
    const { email: _email, ...withoutEmail } = got;
    expect(withoutEmail).toEqual(invoice);
    await quiet(200); // a duplicate would have arrived by now
    expect(mailTo('ada@example.com')).toHaveLength(1);
  });

  it('uses the e-mail the customer already has; no e-mail, no message and `email: null`', async () => {
    const wallet = randomWallet();
    await t.http
      .post('/api/customers')
      .set(acme.auth)
      .send({ walletAddress: wallet, email: 'known@example.com' })
      .expect(201);
    const known = await createInvoice({ walletAddress: wallet });
    await waitFor(() => mailTo('known@example.com').length === 1);
    expect(mailTo('known@example.com')[0].parsed.subject).toContain(known.body.invoice.number);

    const anonymous = await createInvoice({});
    expect(anonymous.body.invoice.customer.email).toBeNull();
    expect((await detail(anonymous.body.invoice.id)).email).toBeNull();
    expect(
      await t.sql('SELECT id FROM email_outbox WHERE invoice_id = $1', [anonymous.body.invoice.id]),
    ).toEqual([]);
  });

  it('with the SMTP server down the invoice is still created; the e-mail is retried and arrives once', async () => {
    await smtp.stop();
    let id: string;
    try {
      const created = await createInvoice({ customerEmail: 'later@example.com' });
      id = created.body.invoice.id;
      // Settled: an attempt is counted when a worker takes the message, its error when it fails.
      await waitFor(async () => (await detail(id)).email?.lastError != null);
      expect((await detail(id)).email).toEqual({
        to: 'later@example.com',
        status: 'pending',
        attempts: 1,
        lastError: expect.stringMatching(/ECONNREFUSED/),
        sentAt: null,
        nextAttemptAt: expect.stringMatching(ISO),
      });
    } finally {
      await smtp.start();
    }
    t.clock.advance(75 * S); // past the first retry delay (1 min ± 20 %)
    await waitFor(async () => (await detail(id)).email?.status === 'sent');
    expect((await detail(id)).email).toMatchObject({ status: 'sent', attempts: 2 });
    await quiet(200);
    expect(mailTo('later@example.com')).toHaveLength(1);
  });

  it('another merchant never sees the delivery; a refused invoice queues nothing', async () => {
    const globex = await t.createMerchant('Globex');
    const created = await createInvoice({ customerEmail: 'private@example.com' });
    await t.http.get(`/api/invoices/${created.body.invoice.id}`).set(globex.auth).expect(404);
    const before = await t.sql('SELECT count(*)::int AS n FROM email_outbox');
    await t.http
      .post('/api/invoices')
      .set(acme.auth)
      .send({
        walletAddress: randomWallet(),
        customerEmail: 'never@example.com',
        mint: 'USDC',
        lineItems: [{ description: 'Too much', quantity: 1_000_000, unitAmount: '18446744073709' }],
      })
      .expect(400);
    expect(await t.sql('SELECT count(*)::int AS n FROM email_outbox')).toEqual(before);
  });
});
