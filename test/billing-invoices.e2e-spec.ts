import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { createTransferCheckedInstruction } from '@solana/spl-token';
import { ChainPort } from '../src/solana/chain.port';
import { UnsignedTxBuilder } from '../src/solana/transactions';
import { fund, signAndSend } from './helpers/chain-tx';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';

const USDC = 1_000_000n;
const DAY_MS = 86_400_000;

/** Invoice payments found on localnet by the watcher, partial and over, late and spammed. */
describe('Billing engine: invoice payments', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let chain: ChainPort;
  let connection: Connection;

  const run = async () =>
    (await t.http.post('/api/dev/billing/run').set(t.devAuth).expect(200)).body;
  /** Runs the billing engine until the invoice reaches `status` (finality takes a few slots). */
  const runUntil = async (id: string, status: string) => {
    const totals = { paymentsRecorded: 0, invoicesPaid: 0 };
    const deadline = Date.now() + 15_000;
    for (;;) {
      const swept = (await run()).invoices;
      totals.paymentsRecorded += swept.paymentsRecorded;
      totals.invoicesPaid += swept.invoicesPaid;
      if ((await invoice(id)).status === status) return totals;
      if (Date.now() > deadline) throw new Error(`invoice ${id} never became ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  const invoice = async (id: string) =>
    (await t.http.get(`/api/invoices/${id}`).set(acme.auth).expect(200)).body;
  const create = async (payer: string, total: string, extra: object = {}) =>
    (
      await t.http
        .post('/api/invoices')
        .set(acme.auth)
        .send({
          walletAddress: payer,
          mint: 'USDC',
          lineItems: [{ description: 'Work', quantity: 1, unitAmount: total }],
          ...extra,
        })
        .expect(201)
    ).body.invoice;
  /** The payer pays `amount` of the invoice through the Solana Pay transaction request. */
  async function pay(payer: Keypair, invoiceId: string, amount?: bigint) {
    let transaction: string;
    if (amount === undefined) {
      const res = await t.http
        .post(`/api/checkout/invoices/${invoiceId}/transaction`)
        .send({ account: payer.publicKey.toBase58() })
        .expect(200);
      transaction = res.body.transaction;
    } else {
      const inv = await invoice(invoiceId);
      const tx = await chain.buildInvoicePayment({
        payer: payer.publicKey.toBase58(),
        merchantWallet: acme.walletAddress,
        mint: 'USDC',
        amount,
        reference: inv.onchainId,
      });
      transaction = tx.transaction;
    }
    const height = await connection.getBlockHeight();
    const outcome = await signAndSend(t, transaction, height + 150, payer);
    expect(outcome.state).toBe('succeeded');
  }
  const eventTypes = async (invoiceId: string) =>
    (
      await t.sql<{ type: string }>(
        `SELECT type FROM events
          WHERE payload->'data'->'object'->>'id' = $1 OR payload->'data'->'object'->>'invoiceId' = $1
          ORDER BY created_at, id`,
        [invoiceId],
      )
    ).map((e) => e.type);
  const payer = () => {
    const k = Keypair.generate();
    fund(t, k.publicKey.toBase58(), { symbol: 'USDC', amount: 1000n * USDC });
    return k;
  };

  beforeAll(async () => {
    // Only the test's own runs sweep: a scheduled sweep on a busy machine read part of the
    // reference spam before the run whose scan the test counts.
    t = await createTestApp({
      env: {
        LOCALNET_FINALITY_SLOTS: '0',
        WATCH_INTERVAL_MS: '3600000',
        CHARGE_RUN_INTERVAL_MS: '3600000',
      },
    });
    chain = t.app.get(ChainPort);
    connection = new Connection(t.chain!.url, 'confirmed');
    acme = await t.createMerchant('Acme');
  });
  afterAll(() => t.close());

  it('pay at the checkout -> Paid, with payment.received, payment.confirmed, invoice.paid in order', async () => {
    const k = payer();
    const inv = await create(k.publicKey.toBase58(), '12.5');
    const view = await t.http.get(`/api/checkout/invoices/${inv.id}`).expect(200);
    expect(view.body).toMatchObject({
      number: inv.number,
      status: 'Open',
      merchantName: 'Acme',
      total: '12.5',
      amountPaid: '0',
      amountDue: '12.5',
    });
    expect(view.body).not.toHaveProperty('memo');
    const meta = await t.http.get(`/api/checkout/invoices/${inv.id}/transaction`).expect(200);
    expect(meta.body).toEqual({
      label: 'Acme',
      icon: expect.stringMatching(/\/checkout\/icon\.svg$/),
    });
    await pay(k, inv.id);
    t.clock.advance(1000);
    expect(await runUntil(inv.id, 'Paid')).toEqual({ paymentsRecorded: 1, invoicesPaid: 1 });
    const paid = await invoice(inv.id);
    expect(paid).toMatchObject({ status: 'Paid', amountPaid: '12.5', amountDue: '0' });
    expect(paid.paymentSignature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    expect(await eventTypes(inv.id)).toEqual([
      'invoice.created',
      'payment.received',
      'payment.confirmed',
      'invoice.paid',
    ]);
    const ledger = await t.http.get(`/api/payments?invoiceId=${inv.id}`).set(acme.auth).expect(200);
    expect(ledger.body).toMatchObject([
      {
        kind: 'invoice',
        status: 'finalized',
        amount: '12.5',
        excess: '0',
        mint: 'USDC',
        payer: k.publicKey.toBase58(),
        signature: paid.paymentSignature,
        note: null,
      },
    ]);
    // Paid: the checkout refuses another payment transaction.
    const refused = await t.http
      .post(`/api/checkout/invoices/${inv.id}/transaction`)
      .send({ account: k.publicKey.toBase58() })
      .expect(400);
    expect(refused.body.error.code).toBe('INVOICE_NOT_OPEN');
    // A second sweep finds nothing new: one line, one set of events.
    expect((await run()).invoices.paymentsRecorded).toBe(0);
  });

  it('two partial payments accumulate to Paid; an overpayment is recorded with its excess', async () => {
    const k = payer();
    const inv = await create(k.publicKey.toBase58(), '10');
    await pay(k, inv.id, 4n * USDC);
    await run();
    expect(await invoice(inv.id)).toMatchObject({
      status: 'Open',
      amountPaid: '4',
      amountDue: '6',
    });
    const view = await t.http.get(`/api/checkout/invoices/${inv.id}`).expect(200);
    expect(view.body).toMatchObject({ amountPaid: '4', amountDue: '6' });
    await pay(k, inv.id, 7n * USDC);
    await runUntil(inv.id, 'Paid');
    expect(await invoice(inv.id)).toMatchObject({
      status: 'Paid',
      amountPaid: '11',
      amountDue: '0',
    });
    const ledger = (
      await t.http.get(`/api/payments?invoiceId=${inv.id}`).set(acme.auth).expect(200)
    ).body as { amount: string; excess: string }[];
    expect(ledger.map((p) => [p.amount, p.excess]).sort()).toEqual([
      ['4', '0'],
      ['7', '1'],
    ]);
  });

  it('a payment after void is recorded and reported, never lost', async () => {
    const k = payer();
    const inv = await create(k.publicKey.toBase58(), '3');
    await t.http.post(`/api/invoices/${inv.id}/void`).set(acme.auth).expect(200);
    await pay(k, inv.id, 3n * USDC);
    await run();
    expect((await invoice(inv.id)).status).toBe('Cancelled');
    const ledger = await t.http.get(`/api/payments?invoiceId=${inv.id}`).set(acme.auth).expect(200);
    expect(ledger.body).toMatchObject([{ amount: '3', excess: '3', note: 'invoice_not_open' }]);
    const types = await eventTypes(inv.id);
    expect(types).toContain('payment.received');
    expect(types).not.toContain('invoice.paid');
  });

  it('reference spam in the merchant account’s history does not hide a payment, and is no payment itself', async () => {
    const k = payer();
    const inv = await create(k.publicKey.toBase58(), '2');
    await run(); // the merchant's account has its cursor
    // 40 transactions carrying the invoice's reference that name the merchant's account (so
    // they are in its history, which the watcher reads) but move nothing into it: 1-unit
    // self-transfers of the spammer's.
    const spammer = payer();
    const mint = await chain.mint('USDC');
    const ata = new PublicKey(await chain.tokenAccount(spammer.publicKey.toBase58(), 'USDC'));
    const merchantAccount = new PublicKey(await chain.tokenAccount(acme.walletAddress, 'USDC'));
    const builder = (chain as unknown as { unsigned: UnsignedTxBuilder }).unsigned;
    for (let i = 0; i < 40; i++) {
      const ix = createTransferCheckedInstruction(
        ata,
        new PublicKey(mint.address),
        ata,
        spammer.publicKey,
        BigInt(i + 1),
        6,
        [],
        new PublicKey(mint.tokenProgram),
      );
      ix.keys.push({ pubkey: new PublicKey(inv.onchainId), isSigner: false, isWritable: false });
      ix.keys.push({ pubkey: merchantAccount, isSigner: false, isWritable: false });
      const tx = await builder.build(spammer.publicKey, [ix]);
      expect((await signAndSend(t, tx.transaction, tx.lastValidBlockHeight, spammer)).state).toBe(
        'succeeded',
      );
    }
    await pay(k, inv.id);
    const { invoices } = await run();
    expect(invoices.signaturesScanned).toBeGreaterThanOrEqual(41); // the spam was read
    expect(invoices).toMatchObject({ paymentsRecorded: 1, paymentsUnattributed: 0 });
    await runUntil(inv.id, 'Paid');
    const ledger = await t.http.get(`/api/payments?invoiceId=${inv.id}`).set(acme.auth).expect(200);
    expect(ledger.body).toMatchObject([{ amount: '2', payer: k.publicKey.toBase58() }]);
  });

  it('overdue once when dueDate passes; Expired after INVOICE_EXPIRY_DAYS (test clock)', async () => {
    const k = payer();
    const due = new Date(t.clock.now().getTime() + DAY_MS).toISOString();
    const inv = await create(k.publicKey.toBase58(), '1', { dueDate: due });
    await run();
    expect(await eventTypes(inv.id)).toEqual(['invoice.created']);
    await t.http
      .post('/api/dev/clock/advance')
      .set(t.devAuth)
      .send({ seconds: 2 * 86_400 })
      .expect(200);
    expect((await run()).invoices.invoicesOverdue).toBeGreaterThanOrEqual(1);
    await run();
    expect(await eventTypes(inv.id)).toEqual(['invoice.created', 'invoice.overdue']);
    expect((await invoice(inv.id)).status).toBe('Open');
    await t.http
      .post('/api/dev/clock/advance')
      .set(t.devAuth)
      .send({ seconds: 30 * 86_400 })
      .expect(200);
    await run();
    expect((await invoice(inv.id)).status).toBe('Expired');
    const refused = await t.http
      .post(`/api/checkout/invoices/${inv.id}/transaction`)
      .send({ account: k.publicKey.toBase58() })
      .expect(400);
    expect(refused.body.error.code).toBe('INVOICE_NOT_OPEN');
  });
});
