import { Keypair } from '@solana/web3.js';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Response } from 'superagent';
import { billingHelpers } from './helpers/billing';
import { fund, signAndSend } from './helpers/chain-tx';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';
import { waitFor } from './helpers/webhook-receiver';

const USDC = 1_000_000n;

/** "2.5" -> 2500000n (the API's decimal strings, 6 places). */
const parseAmountUnits = (amount: string) => {
  const [whole, fraction = ''] = amount.split('.');
  return BigInt(whole) * USDC + BigInt(fraction.padEnd(6, '0'));
};

interface Invoice {
  id: string;
  number: string;
  status: string;
  total: string;
  amountPaid: string;
  amountDue: string;
  amountCredited: string;
  amountCreditedToBalance: string;
  amountRefunded: string;
  customerId: string;
}
interface CreditNote {
  id: string;
  number: string;
  invoiceId: string;
  amount: string;
  subtotal: string;
  tax: string;
  action: string;
  refundId: string | null;
}

const binary = (res: Response, callback: (err: Error | null, body: Buffer) => void) => {
  const stream = res as unknown as NodeJS.ReadableStream;
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => callback(null, Buffer.concat(chunks)));
};

/**
 * Credit notes and customer credit balances (docs/refunds.md) through the API, PostgreSQL and
 * localnet: before payment (the invoice asks for less), after it (a refund, or a credit the
 * customer's next invoice takes), numbered without gaps, and never giving back more than paid.
 */
describe('Credit notes', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let other: TestMerchant;
  let billing: ReturnType<typeof billingHelpers>;

  const invoice = async (id: string) =>
    (await t.http.get(`/api/invoices/${id}`).set(acme.auth).expect(200)).body as Invoice;
  const createInvoice = async (wallet: string, amount: string, extra: object = {}) =>
    (
      await t.http
        .post('/api/invoices')
        .set(acme.auth)
        .send({
          walletAddress: wallet,
          mint: 'USDC',
          lineItems: [{ description: 'Work', quantity: 1, unitAmount: amount }],
          ...extra,
        })
        .expect(201)
    ).body.invoice as Invoice;
  const credit = (invoiceId: string, body: object, auth = acme.auth) =>
    t.http.post(`/api/invoices/${invoiceId}/credit-notes`).set(auth).send(body);
  const lines = (amount: string) => [
    { description: 'Adjustment', quantity: 1, unitAmount: amount },
  ];
  /** A customer with 1,000 USDC. */
  const customer = () => {
    const k = Keypair.generate();
    fund(t, k.publicKey.toBase58(), { symbol: 'USDC', amount: 1000n * USDC });
    return k;
  };
  /** Pays the invoice's amount due through its checkout and waits until it is Paid. */
  const pay = async (payer: Keypair, id: string) => {
    await billing.payInvoice(payer, id);
    await waitFor(
      async () => {
        await billing.run();
        return (await invoice(id)).status === 'Paid';
      },
      20_000,
      () => `invoice ${id} never Paid`,
    );
    return invoice(id);
  };

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        LOCALNET_FINALITY_SLOTS: '0',
        WATCH_INTERVAL_MS: '3600000',
        CHARGE_RUN_INTERVAL_MS: '3600000',
      },
    });
    billing = billingHelpers(t);
    acme = await t.createMerchant('Acme');
    other = await t.createMerchant('Other');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('before payment: the invoice asks for less (its tax on the lines too), and is paid for that', async () => {
    const payer = customer();
    const open = await createInvoice(payer.publicKey.toBase58(), '100', { taxBps: 1000 });
    expect(open.total).toBe('110');
    const res = await credit(open.id, {
      lines: lines('20'),
      action: 'reduce_due',
      reason: 'order_change',
      memo: 'One seat fewer',
    }).expect(201);
    const note = res.body.creditNote as CreditNote;
    expect(note).toMatchObject({
      number: expect.stringMatching(/^CN-\d{6}$/),
      invoiceId: open.id,
      subtotal: '20',
      tax: '2',
      amount: '22',
      action: 'reduce_due',
      refundId: null,
    });
    expect(res.body.refund).toBeNull();
    expect(await invoice(open.id)).toMatchObject({
      status: 'Open',
      amountCredited: '22',
      amountDue: '88',
    });
    const [event] = await t.sql<{ payload: { data: { object: CreditNote } } }>(
      `SELECT payload FROM events WHERE type = 'credit_note.created' AND payload->'data'->'object'->>'id' = $1`,
      [note.id],
    );
    expect(event.payload.data.object.amount).toBe('22');
    // The checkout asks for the rest, and the hosted page says why.
    const checkout = (await t.http.get(`/api/checkout/invoices/${open.id}`).expect(200)).body;
    expect(checkout).toMatchObject({ amountCredited: '22', amountDue: '88', amountToPay: '88' });
    const page = await t.http.get(`/checkout/invoices/${open.id}`).expect(200);
    expect(page.text).toMatch(/<dt>Credited<\/dt>\s*<dd>22\.00 USDC<\/dd>/);
    // More than is still due is refused and changes nothing.
    const over = await credit(open.id, {
      lines: lines('80.000001'),
      action: 'reduce_due',
      reason: 'other',
    });
    expect(over.status).toBe(409);
    expect(over.body.error).toMatchObject({
      code: 'CREDIT_EXCEEDS_DUE',
      message: expect.stringMatching(/^At most 88 USDC is still due/),
    });
    // The checkout asks for 88; paid, the invoice is Paid with 88 paid.
    const paid = await pay(payer, open.id);
    expect(paid).toMatchObject({ amountPaid: '88', amountCredited: '22', amountDue: '0' });
    expect(await billing.balance(payer.publicKey.toBase58())).toBe(912n * USDC);
    // Paid: no more reducing what is due.
    const late = await credit(open.id, {
      lines: lines('1'),
      action: 'reduce_due',
      reason: 'other',
    });
    expect(late.status).toBe(400);
    expect(late.body.error.code).toBe('INVOICE_NOT_OPEN');
  });

  it('a credit note that covers all that is due makes the invoice Paid at once', async () => {
    const open = await createInvoice(Keypair.generate().publicKey.toBase58(), '15');
    await credit(open.id, { lines: lines('15'), action: 'reduce_due', reason: 'duplicate' }).expect(
      201,
    );
    expect(await invoice(open.id)).toMatchObject({ status: 'Paid', amountDue: '0' });
    const paidEvents = await t.sql(
      `SELECT 1 FROM events WHERE type = 'invoice.paid' AND payload->'data'->'object'->>'id' = $1`,
      [open.id],
    );
    expect(paidEvents).toHaveLength(1);
  });

  it('after payment, a refund: the credit note carries the refund, which the merchant signs', async () => {
    const payer = customer();
    const inv = await createInvoice(payer.publicKey.toBase58(), '50');
    await pay(payer, inv.id);
    const res = await credit(inv.id, {
      lines: lines('10'),
      action: 'refund',
      reason: 'product_unsatisfactory',
    }).expect(201);
    const note = res.body.creditNote as CreditNote;
    const refund = res.body.refund as {
      refund: { id: string; amount: string; status: string };
      unsignedTx: string;
      lastValidBlockHeight: number;
    };
    expect(refund.refund).toMatchObject({ amount: '10', status: 'Pending' });
    expect(note.refundId).toBe(refund.refund.id);
    const outcome = await signAndSend(
      t,
      refund.unsignedTx,
      refund.lastValidBlockHeight,
      acme.wallet,
    );
    expect(outcome.state).toBe('succeeded');
    await waitFor(
      async () => {
        await billing.run();
        return (await invoice(inv.id)).amountRefunded === '10';
      },
      20_000,
      () => 'the refund never landed',
    );
    expect(await billing.balance(payer.publicKey.toBase58())).toBe(960n * USDC);

    // A second credit note refund names no payment: the first with enough left is taken.
    const twice = await createInvoice(payer.publicKey.toBase58(), '20');
    for (const part of [12n, 8n]) {
      const tx = await billing.chain.buildInvoicePayment({
        payer: payer.publicKey.toBase58(),
        merchantWallet: acme.walletAddress,
        mint: 'USDC',
        amount: part * USDC,
        reference: (await t.http.get(`/api/invoices/${twice.id}`).set(acme.auth)).body.onchainId,
      });
      await billing.sendSigned(payer, tx.transaction);
    }
    await waitFor(
      async () => {
        await billing.run();
        return (await invoice(twice.id)).status === 'Paid';
      },
      20_000,
      () => 'never Paid',
    );
    const firstTwo = await credit(twice.id, {
      lines: lines('8'),
      action: 'refund',
      reason: 'other',
    }).expect(201);
    // 4 left of the first payment, 8 of the second: the second.
    const secondTwo = await credit(twice.id, {
      lines: lines('8'),
      action: 'refund',
      reason: 'other',
    }).expect(201);
    expect(secondTwo.body.refund.refund.paymentId).not.toBe(firstTwo.body.refund.refund.paymentId);

    // A credit too; then the customer's portal lists both, the balance, and the documents.
    await credit(inv.id, { lines: lines('5'), action: 'credit', reason: 'other' }).expect(201);
    const link = await t.http
      .post(`/api/customers/${inv.customerId}/portal-session`)
      .set(acme.auth)
      .expect(201);
    const token = /\/portal\/([A-Za-z0-9_-]+)$/.exec(link.body.url as string)![1];
    const view = (
      await t.http.get('/api/portal/session').set('x-portal-session', token).expect(200)
    ).body;
    expect(view.refunds).toHaveLength(3);
    expect(view.refunds).toContainEqual(
      expect.objectContaining({ id: refund.refund.id, status: 'Succeeded', amount: '10' }),
    );
    expect(view.creditNotes.map((n: CreditNote) => n.action).sort()).toEqual([
      'credit',
      'refund',
      'refund',
      'refund',
    ]);
    expect(view.creditBalances).toEqual([{ mint: 'USDC', balance: '5' }]);
    const item = view.invoices.find((i: { id: string }) => i.id === inv.id);
    expect(item.pdfUrl).toMatch(new RegExp(`/checkout/invoices/${inv.id}/pdf$`));
    expect(item.receiptUrl).toMatch(new RegExp(`/checkout/invoices/${inv.id}/receipt/pdf$`));
    const page = await t.http.get(`/portal/${token}`).expect(200);
    expect(page.text).toContain('Refunds and credit notes');
    expect(page.text).toContain(`href="${view.creditNotes[0].pdfUrl}"`);
    expect(page.text).toContain('Your credit with Acme: 5.00 USDC');
    await t.http.get(new URL(view.creditNotes[0].pdfUrl as string).pathname).expect(200);
  });

  it("after payment, a credit: the customer's next invoice in the mint takes it, and no more is given back than was paid", async () => {
    const payer = customer();
    const wallet = payer.publicKey.toBase58();
    const first = await pay(payer, (await createInvoice(wallet, '30')).id);
    await credit(first.id, { lines: lines('12'), action: 'credit', reason: 'order_change' }).expect(
      201,
    );
    expect((await invoice(first.id)).amountCreditedToBalance).toBe('12');
    // What is left of the 30 to give back: 18, by refund or credit.
    const ledger = (
      await t.http.get(`/api/payments?invoiceId=${first.id}`).set(acme.auth).expect(200)
    ).body as { id: string }[];
    const refund = await t.http
      .post(`/api/payments/${ledger[0].id}/refunds`)
      .set(acme.auth)
      .send({ amount: '18.000001' });
    expect(refund.status).toBe(409);
    expect(refund.body.error).toMatchObject({
      code: 'REFUND_EXCEEDS_PAYMENT',
      message: "At most 18 USDC is left to give back of this invoice's payments",
    });
    const tooMuchCredit = await credit(first.id, {
      lines: lines('18.000001'),
      action: 'credit',
      reason: 'other',
    });
    expect(tooMuchCredit.status).toBe(409);
    expect(tooMuchCredit.body.error.code).toBe('REFUND_EXCEEDS_PAYMENT');

    // A PYUSD invoice does not take a USDC credit.
    const pyusd = (
      await t.http
        .post('/api/invoices')
        .set(acme.auth)
        .send({
          walletAddress: wallet,
          mint: 'PYUSD',
          lineItems: [{ description: 'Other', quantity: 1, unitAmount: '5' }],
        })
        .expect(201)
    ).body.invoice as Invoice;
    expect(pyusd.amountCredited).toBe('0');
    // The next USDC invoice of 5 takes 5 of it and is Paid at once; the one after takes the 7 left.
    const small = await createInvoice(wallet, '5');
    expect(small).toMatchObject({ amountCredited: '5', amountDue: '0', status: 'Paid' });
    const next = await createInvoice(wallet, '50');
    expect(next).toMatchObject({ amountCredited: '7', amountDue: '43', status: 'Open' });
    // Voided, an invoice gives back to the balance what it took: the next one takes it.
    await t.http.post(`/api/invoices/${next.id}/void`).set(acme.auth).expect(200);
    const retaken = await createInvoice(wallet, '50');
    expect(retaken.amountCredited).toBe('7');
    const after = await createInvoice(wallet, '50');
    expect(after.amountCredited).toBe('0');
    // A balance taken by invoices created at once is taken once: 12 over six invoices of 5.
    await credit(first.id, { lines: lines('12'), action: 'credit', reason: 'other' }).expect(201);
    const racing = await Promise.all(Array.from({ length: 6 }, () => createInvoice(wallet, '5')));
    const taken = racing.reduce((sum, i) => sum + parseAmountUnits(i.amountCredited), 0n);
    expect(taken).toBe(12n * USDC);
    // Shown on the invoice as the API and its PDF give it.
    expect(await invoice(next.id)).toMatchObject({ amountCredited: '7', amountDue: '43' });
  });

  it('numbers follow each other per merchant without gaps, also when issued at once', async () => {
    const inv = await createInvoice(Keypair.generate().publicKey.toBase58(), '100');
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        credit(inv.id, { lines: lines('1'), action: 'reduce_due', reason: 'other' }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201, 201]);
    const all = (await t.http.get('/api/credit-notes').set(acme.auth).expect(200))
      .body as CreditNote[];
    const numbers = all.map((n) => Number(n.number.slice(3))).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => i + 1));
    expect((await invoice(inv.id)).amountCredited).toBe('6');
    // Another merchant starts at CN-000001.
    const theirs = (
      await t.http
        .post('/api/invoices')
        .set(other.auth)
        .send({
          walletAddress: Keypair.generate().publicKey.toBase58(),
          mint: 'USDC',
          lineItems: [{ description: 'Work', quantity: 1, unitAmount: '3' }],
        })
        .expect(201)
    ).body.invoice as Invoice;
    const first = await credit(
      theirs.id,
      { lines: lines('1'), action: 'reduce_due', reason: 'other' },
      other.auth,
    ).expect(201);
    expect(first.body.creditNote.number).toBe('CN-000001');
  });

  it("a credit note's PDF, and the refusals: bad input, another merchant's invoice and notes", async () => {
    const inv = await createInvoice(Keypair.generate().publicKey.toBase58(), '40', {
      taxBps: 825,
    });
    const note = (
      await credit(inv.id, {
        lines: [{ description: 'Seat refund', quantity: 2, unitAmount: '5' }],
        action: 'reduce_due',
        reason: 'order_change',
      }).expect(201)
    ).body.creditNote as CreditNote;
    const res = await t.http
      .get(`/api/credit-notes/${note.id}/pdf`)
      .set(acme.auth)
      .buffer(true)
      .parse(binary)
      .expect(200);
    const dir = mkdtempSync(join(tmpdir(), 'credit-note-'));
    try {
      writeFileSync(join(dir, 'cn.pdf'), res.body as Buffer);
      const text = execFileSync('pdftotext', ['-layout', join(dir, 'cn.pdf'), '-'], {
        encoding: 'utf8',
      });
      expect(text).toContain(`Credit note ${note.number}`);
      expect(text).toContain(`Invoice: ${inv.number}`);
      expect(text).toMatch(/Seat refund\s+2\s+5\.00 USDC\s+10\.00 USDC/);
      expect(text).toMatch(/Tax \(8\.25%\)\s+0\.825 USDC/);
      expect(text).toMatch(/Total credited\s+10\.825 USDC/);
      expect(text).toContain('Effect: Reduces the amount due on the invoice');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    await t.http.get(`/checkout/credit-notes/${note.id}/pdf`).expect(200);
    await t.http.get(`/api/credit-notes/${note.id}/pdf`).set(other.auth).expect(404);
    await t.http.get(`/api/credit-notes/${note.id}`).set(other.auth).expect(404);
    const mine = await t.http.get(`/api/credit-notes/${note.id}`).set(acme.auth).expect(200);
    expect(mine.body).toEqual(note);

    for (const [body, field] of [
      [{ action: 'reduce_due', reason: 'other' }, 'lines'],
      [{ lines: [], action: 'reduce_due', reason: 'other' }, 'lines'],
      [{ lines: lines('1'), action: 'gift', reason: 'other' }, 'action'],
      [{ lines: lines('1'), action: 'reduce_due', reason: 'because' }, 'reason'],
      [{ lines: lines('-1'), action: 'reduce_due', reason: 'other' }, 'lines.0.unitAmount'],
      [{ lines: lines('1'), action: 'credit', reason: 'other', paymentId: inv.id }, 'paymentId'],
    ] as const) {
      const bad = await credit(inv.id, body);
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('VALIDATION_ERROR');
      expect(bad.body.error.message).toMatch(new RegExp(`^${field.replace('.', '\\.')}`));
    }
    const theirs = await credit(
      inv.id,
      { lines: lines('1'), action: 'reduce_due', reason: 'other' },
      other.auth,
    );
    expect(theirs.status).toBe(404);
    expect(theirs.body.error.code).toBe('INVOICE_NOT_FOUND');
    // A refund of an invoice nobody paid has nothing to refund.
    const unpaid = await credit(inv.id, { lines: lines('1'), action: 'refund', reason: 'other' });
    expect(unpaid.status).toBe(409);
    expect(unpaid.body.error.code).toBe('REFUND_EXCEEDS_PAYMENT');
    expect((await invoice(inv.id)).amountCredited).toBe('10.825');
  });
});
