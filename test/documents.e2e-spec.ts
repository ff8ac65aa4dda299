import { Keypair } from '@solana/web3.js';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Response } from 'superagent';
import { billingHelpers } from './helpers/billing';
import { fund, signAndSend } from './helpers/chain-tx';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';
import { waitFor } from './helpers/webhook-receiver';

const USDC = 1_000_000n;

/** A response body as a Buffer (supertest leaves binary bodies to a parser). */
const binary = (res: Response, callback: (err: Error | null, body: Buffer) => void) => {
  const stream = res as unknown as NodeJS.ReadableStream;
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => callback(null, Buffer.concat(chunks)));
};

/**
 * The documents an accountant asks for (docs/refunds.md): invoice and receipt PDFs, read back
 * with poppler's `pdftotext` and rendered with `pdftoppm`, and the ledger's CSV export, through
 * the API, PostgreSQL and the localnet chain.
 */
describe('Documents and the ledger export', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let other: TestMerchant;
  let billing: ReturnType<typeof billingHelpers>;
  let dir: string;
  let paid: { id: string; number: string };
  let open: { id: string };
  let paymentSignature: string;
  let refundSignature: string;

  const pdfText = (pdf: Buffer, name: string) => {
    const file = join(dir, `${name}.pdf`);
    writeFileSync(file, pdf);
    return execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
  };
  const getPdf = (path: string, auth: Record<string, string> = acme.auth) =>
    t.http.get(path).set(auth).buffer(true).parse(binary);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'documents-'));
    t = await createTestApp({
      env: {
        LOCALNET_FINALITY_SLOTS: '0',
        WATCH_INTERVAL_MS: '3600000',
        CHARGE_RUN_INTERVAL_MS: '3600000',
      },
    });
    billing = billingHelpers(t);
    acme = await t.createMerchant('Acme Studio');
    other = await t.createMerchant('Other');
    const customer = Keypair.generate();
    fund(t, customer.publicKey.toBase58(), { symbol: 'USDC', amount: 5000n * USDC });
    const created = await t.http
      .post('/api/invoices')
      .set(acme.auth)
      .send({
        walletAddress: customer.publicKey.toBase58(),
        customerLabel: 'Globex Corporation',
        mint: 'USDC',
        taxBps: 825,
        lineItems: [
          { description: 'Design sprint', quantity: 2, unitAmount: '600' },
          { description: 'Hosting, November', quantity: 1, unitAmount: '0.5' },
        ],
      })
      .expect(201);
    paid = created.body.invoice;
    open = (
      await t.http
        .post('/api/invoices')
        .set(acme.auth)
        .send({
          walletAddress: customer.publicKey.toBase58(),
          mint: 'USDC',
          lineItems: [{ description: 'Later', quantity: 1, unitAmount: '1' }],
        })
        .expect(201)
    ).body.invoice;
    paymentSignature = await billing.payInvoice(customer, paid.id);
    let lineId = '';
    await waitFor(
      async () => {
        await billing.run();
        const [line] = (
          await t.http.get(`/api/payments?invoiceId=${paid.id}`).set(acme.auth).expect(200)
        ).body as { id: string; status: string }[];
        lineId = line?.id;
        return line?.status === 'finalized';
      },
      20_000,
      () => 'the payment never finalized',
    );
    // A minute later (the service's clock): the ledger's order is its lines' times.
    await billing.advance(60);
    const refund = await t.http
      .post(`/api/payments/${lineId}/refunds`)
      .set(acme.auth)
      .send({ amount: '100.25', reason: 'Hosting credit' })
      .expect(201);
    const outcome = await signAndSend(
      t,
      refund.body.unsignedTx,
      refund.body.lastValidBlockHeight,
      acme.wallet,
    );
    expect(outcome.state).toBe('succeeded');
    await waitFor(
      async () => {
        await billing.run();
        const r = await t.http.get(`/api/refunds/${refund.body.refund.id}`).set(acme.auth);
        refundSignature = r.body.signature;
        return r.body.status === 'Succeeded';
      },
      20_000,
      () => 'the refund never succeeded',
    );
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("the invoice's PDF: the merchant's name, number, dates, lines, tax and totals as money", async () => {
    const res = await getPdf(`/api/invoices/${paid.id}/pdf`).expect(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toBe(`inline; filename="${paid.number}.pdf"`);
    const text = pdfText(res.body as Buffer, 'invoice');
    expect(text).toContain('Acme Studio');
    expect(text).toContain(`Invoice ${paid.number}`);
    expect(text).toContain('Globex Corporation');
    expect(text).toMatch(/Design sprint\s+2\s+600\.00 USDC\s+1,200\.00 USDC/);
    expect(text).toMatch(/Hosting, November\s+1\s+0\.50 USDC\s+0\.50 USDC/);
    expect(text).toMatch(/Subtotal\s+1,200\.50 USDC/);
    // 8.25% of 1,200.50 = 99.04125, exact to the base unit.
    expect(text).toMatch(/Tax \(8\.25%\)\s+99\.04125 USDC/);
    expect(text).toMatch(/Total\s+1,299\.54125 USDC/);
    expect(text).toMatch(/Refunded\s+100\.25 USDC/);
    expect(text).toMatch(/Amount due\s+0\.00 USDC/);
    expect(text).toMatch(/Issued: \d{4}-\d{2}-\d{2}/);
    expect(text).toContain('Status: Paid');
  });

  it('the receipt: each payment and refund with its signature and an explorer link for the cluster', async () => {
    const res = await getPdf(`/api/invoices/${paid.id}/receipt/pdf`).expect(200);
    expect(res.headers['content-disposition']).toBe(
      `inline; filename="${paid.number}-receipt.pdf"`,
    );
    const text = pdfText(res.body as Buffer, 'receipt');
    expect(text).toContain(`Receipt ${paid.number} (paid)`);
    expect(text).toMatch(/Amount received\s+1,299\.54125 USDC/);
    expect(text).toMatch(/Payment 1,299\.54125 USDC/);
    expect(text).toMatch(new RegExp(`Signature\\s+${paymentSignature}`));
    expect(text).toMatch(/Refund 100\.25 USDC/);
    expect(text).toMatch(new RegExp(`Signature\\s+${refundSignature}`));
    const rpcOrigin = encodeURIComponent(new URL(t.chain!.url).origin);
    expect(text.replace(/\s+/g, '')).toContain(
      `https://explorer.solana.com/tx/${paymentSignature}?cluster=custom&customUrl=${rpcOrigin}`,
    );
    // A page renders (poppler's rasteriser), with ink on it; it is the README's picture.
    const file = join(dir, 'receipt.pdf');
    const page = join(__dirname, '..', 'docs', 'screenshots', 'receipt-pdf');
    execFileSync('pdftoppm', ['-png', '-r', '60', '-singlefile', file, page]);
    expect(statSync(`${page}.png`).size).toBeGreaterThan(5_000);
  });

  it('the customer opens the same documents from the invoice link; no receipt before payment; another merchant sees nothing', async () => {
    const res = await t.http
      .get(`/checkout/invoices/${paid.id}/pdf`)
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(pdfText(res.body as Buffer, 'public')).toContain(`Invoice ${paid.number}`);
    await t.http.get(`/checkout/invoices/${paid.id}/receipt/pdf`).expect(200);
    // The hosted invoice page links to both.
    const page = await t.http.get(`/checkout/invoices/${paid.id}`).expect(200);
    expect(page.text).toContain(`href="/checkout/invoices/${paid.id}/pdf"`);
    expect(page.text).toContain(`href="/checkout/invoices/${paid.id}/receipt/pdf"`);
    const notPaid = await t.http.get(`/api/invoices/${open.id}/receipt/pdf`).set(acme.auth);
    expect(notPaid.status).toBe(409);
    expect(notPaid.body.error).toMatchObject({
      code: 'CONFLICT',
      message: expect.stringMatching(/is Open: its receipt exists once it is Paid$/),
    });
    const theirs = await t.http.get(`/api/invoices/${paid.id}/pdf`).set(other.auth);
    expect(theirs.status).toBe(404);
    expect(theirs.body.error.code).toBe('INVOICE_NOT_FOUND');
    for (const path of ['/api/invoices/nope/pdf', '/checkout/invoices/nope/pdf']) {
      const res404 = await t.http.get(path).set(acme.auth);
      expect(res404.status).toBe(404);
    }
    await t.http
      .get('/checkout/invoices/00000000-0000-4000-8000-000000000000/receipt/pdf')
      .expect(404);
  });

  it('the ledger export: every line, oldest first, amounts exact (a refund negative), signatures', async () => {
    const res = await t.http.get('/api/exports/ledger?format=csv').set(acme.auth).expect(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="ledger-start-now.csv"');
    const records = res.text.trimEnd().split('\r\n');
    expect(records[0]).toBe(
      'created_at,id,kind,status,amount,fee,excess,mint,signature,instruction,invoice_id,' +
        'subscription_id,period,customer_id,payer,destination,references,note,slot,finalized_at',
    );
    const rows = records.slice(1).map((r) => r.split(','));
    expect(rows.map((r) => [r[2], r[3], r[4], r[7], r[8], r[10]])).toEqual([
      ['invoice', 'finalized', '1299.54125', 'USDC', paymentSignature, paid.id],
      ['refund', 'finalized', '-100.25', 'USDC', refundSignature, paid.id],
    ]);
    // A range that holds neither, and another merchant's export, have the header alone.
    const empty = await t.http
      .get('/api/exports/ledger?from=2000-01-01T00:00:00Z&to=2000-01-02T00:00:00Z')
      .set(acme.auth)
      .expect(200);
    expect(empty.text.trimEnd().split('\r\n')).toHaveLength(1);
    const theirs = await t.http.get('/api/exports/ledger').set(other.auth).expect(200);
    expect(theirs.text.trimEnd().split('\r\n')).toHaveLength(1);
    for (const query of [
      'format=xml',
      'from=yesterday',
      'from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z',
      'from=20261101',
      'from=2026-W01',
      'from=2026-100',
      'to=2026-11-01T10',
      'from=-2026-11-01',
      'from=2026-13-01T00:00:00Z',
      'from=2026-02-31',
      'to=2026-04-00T00:00:00Z',
    ]) {
      const bad = await t.http.get(`/api/exports/ledger?${query}`).set(acme.auth);
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    }
  });

  it('streams a long ledger whole, exact to the base unit', async () => {
    const merchant = await t.createMerchant('Long ledger', { receivingAccounts: false });
    const n = 30_000;
    await t.sql(
      `INSERT INTO payments (id, created_at, updated_at, merchant_id, kind, status, mint, amount,
                             signature, payer)
       SELECT gen_random_uuid(), now() + make_interval(secs => g), now(), $1, 'invoice',
              'finalized', 'USDC', g, 'sig' || g, 'payer'
         FROM generate_series(1, $2::int) g`,
      [merchant.id, n],
    );
    const res = await t.http.get('/api/exports/ledger').set(merchant.auth).expect(200);
    const rows = res.text.trimEnd().split('\r\n').slice(1);
    expect(rows).toHaveLength(n);
    // Amounts 0.000001 .. 0.03 USDC: their sum in base units, n(n+1)/2.
    const units = rows.reduce((sum, row) => {
      const [whole, fraction = ''] = row.split(',')[4].split('.');
      return sum + BigInt(whole) * USDC + BigInt(fraction.padEnd(6, '0'));
    }, 0n);
    expect(units).toBe(BigInt((n * (n + 1)) / 2));
    expect(rows[0].split(',')[8]).toBe('sig1');
    expect(rows[n - 1].split(',')[8]).toBe(`sig${n}`);
  });
});
