import { createTransferCheckedInstruction } from '@solana/spl-token';
import { Keypair, PublicKey } from '@solana/web3.js';
import { billingHelpers } from './helpers/billing';
import { fund } from './helpers/chain-tx';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';
import { waitFor } from './helpers/webhook-receiver';

const UNIT = 1_000_000n;
const DAY = 86_400;

/**
 * Token-2022 amounts are what arrives (DESIGN section 10), on a localnet whose PYUSD withholds a
 * 1% transfer fee: the one rule, for invoices and charges alike, is that **the price arrives
 * whole**. The payer is asked for the price plus the fee (`grossUp`), every payment is credited
 * and recorded net of what the chain withheld (the fee alongside), and a top-up asks for what
 * is still due plus its own fee, so an invoice never stays a unit short.
 */
describe('A mint with a transfer fee: the price arrives whole', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let billing: ReturnType<typeof billingHelpers>;
  let pyusd: { address: PublicKey; program: PublicKey };

  const pyusdOf = async (wallet: string) => {
    const account = new PublicKey(await billing.chain.tokenAccount(wallet, 'PYUSD'));
    return BigInt((await billing.connection.getTokenAccountBalance(account)).value.amount);
  };
  const payer = () => {
    const k = Keypair.generate();
    fund(t, k.publicKey.toBase58(), { symbol: 'PYUSD', amount: 1_000n * UNIT });
    return k;
  };
  const create = async (total: string) =>
    (
      await t.http
        .post('/api/invoices')
        .set(acme.auth)
        .send({
          walletAddress: Keypair.generate().publicKey.toBase58(),
          mint: 'PYUSD',
          lineItems: [{ description: 'Work', quantity: 1, unitAmount: total }],
        })
        .expect(201)
    ).body.invoice as { id: string; onchainId: string };
  const invoice = async (id: string) =>
    (await t.http.get(`/api/invoices/${id}`).set(acme.auth).expect(200)).body;
  /** Pays through the checkout's transaction request (what the page and wallets do). */
  const payAtCheckout = async (k: Keypair, id: string) => {
    const req = await t.http
      .post(`/api/checkout/invoices/${id}/transaction`)
      .send({ account: k.publicKey.toBase58() })
      .expect(200);
    await billing.sendSigned(k, req.body.transaction as string);
    return req.body.message as string;
  };
  const untilFinal = (id: string, status: string) =>
    waitFor(
      async () => {
        await billing.run();
        return (await invoice(id)).status === status;
      },
      20_000,
      () => `invoice ${id} never became ${status}`,
    );

  beforeAll(async () => {
    t = await createTestApp({
      env: { ROLE: 'api' },
      chainOptions: { transferFees: { PYUSD: { basisPoints: 100, maximumFee: 10n ** 15n } } },
    });
    billing = billingHelpers(t);
    acme = await t.createMerchant('Acme');
    const m = await billing.chain.mint('PYUSD');
    pyusd = { address: new PublicKey(m.address), program: new PublicKey(m.tokenProgram) };
  });
  afterAll(async () => {
    await t?.close();
  });

  it('an invoice of 100: the payer is asked 101.010102, 100 arrive, it is Paid, the fee is recorded beside the amount', async () => {
    const inv = await create('100');
    const view = await t.http.get(`/api/checkout/invoices/${inv.id}`).expect(200);
    expect(view.body).toMatchObject({ amountDue: '100', amountToPay: '101.010102' });
    const page = await t.http.get(`/checkout/invoices/${inv.id}`).expect(200);
    expect(page.text).toContain('Pay 101.010102 PYUSD with a browser wallet');
    expect(page.text).toContain('amount&#61;101.010102'); // the transfer-request link, escaped

    const k = payer();
    const before = await pyusdOf(acme.walletAddress);
    const message = await payAtCheckout(k, inv.id);
    expect(message).toMatch(/: 101\.010102 PYUSD \(100 \+ 1\.010102 network fee\)$/);
    expect((await pyusdOf(acme.walletAddress)) - before).toBe(100n * UNIT);
    expect(1_000n * UNIT - (await pyusdOf(k.publicKey.toBase58()))).toBe(101_010_102n);
    await untilFinal(inv.id, 'Paid');
    expect(await invoice(inv.id)).toMatchObject({ amountPaid: '100', amountDue: '0' });
    const ledger = await t.http.get(`/api/payments?invoiceId=${inv.id}`).set(acme.auth);
    expect(ledger.body).toMatchObject([{ amount: '100', fee: '1.010102', excess: '0' }]);
  });

  it('a top-up after a short payment asks for what is due plus its own fee: the invoice never stays a unit short', async () => {
    const inv = await create('100');
    const k = payer();
    // The customer sends 50 by hand (a plain transfer carrying the reference): 49.5 arrive.
    const transfer = createTransferCheckedInstruction(
      new PublicKey(await billing.chain.tokenAccount(k.publicKey.toBase58(), 'PYUSD')),
      pyusd.address,
      new PublicKey(await billing.chain.tokenAccount(acme.walletAddress, 'PYUSD')),
      k.publicKey,
      50n * UNIT,
      6,
      [],
      pyusd.program,
    );
    transfer.keys.push({
      pubkey: new PublicKey(inv.onchainId),
      isSigner: false,
      isWritable: false,
    });
    await billing.sendInstructions(k, [transfer]);
    await waitFor(async () => {
      await billing.run();
      return (await invoice(inv.id)).amountPaid !== '0';
    }, 20_000);
    expect(await invoice(inv.id)).toMatchObject({
      status: 'Open',
      amountPaid: '49.5',
      amountDue: '50.5',
    });
    const view = await t.http.get(`/api/checkout/invoices/${inv.id}`).expect(200);
    expect(view.body).toMatchObject({ amountDue: '50.5', amountToPay: '51.010102' });
    await payAtCheckout(k, inv.id);
    await untilFinal(inv.id, 'Paid');
    expect(await invoice(inv.id)).toMatchObject({ amountPaid: '100', amountDue: '0' });
    const ledger = (await t.http.get(`/api/payments?invoiceId=${inv.id}`).set(acme.auth)).body as {
      amount: string;
      fee: string;
    }[];
    expect(ledger.map((l) => [l.amount, l.fee]).sort()).toEqual([
      ['49.5', '0.5'],
      ['50.5', '0.510102'],
    ]);
  });

  it('a subscription of 10 a period: each charge pulls 10.101011, 10 arrive, the approval covers twelve such pulls', async () => {
    const plan = await t.http
      .post('/api/plans')
      .set(acme.auth)
      .send({ label: 'Pro', mint: 'PYUSD', amount: '10', intervalSeconds: 30 * DAY })
      .expect(201);
    const planId = plan.body.plan.id as string;
    const view = await t.http.get(`/api/checkout/plans/${planId}`).expect(200);
    expect(view.body).toMatchObject({
      amount: '10',
      amountPerPeriod: '10.101011',
      authorizedAmount: '121.212132',
      authorizedPeriods: 12,
    });
    const k = payer();
    const before = await pyusdOf(acme.walletAddress);
    const { signature, subscription } = await billing.subscribe(k, planId, acme.auth);
    expect(signature).toBeTruthy();
    expect((await pyusdOf(acme.walletAddress)) - before).toBe(10n * UNIT);
    expect(1_000n * UNIT - (await pyusdOf(k.publicKey.toBase58()))).toBe(10_101_011n);
    expect(
      (await billing.chain.readAuthorization(k.publicKey.toBase58(), 'PYUSD')).delegatedAmount,
    ).toBe(11n * 10_101_011n);

    await billing.advance(30 * DAY);
    expect((await billing.run()).charges).toMatchObject({ succeeded: 1 });
    expect((await pyusdOf(acme.walletAddress)) - before).toBe(20n * UNIT);
    const ledger = (
      await t.http.get(`/api/payments?subscriptionId=${subscription.id}`).set(acme.auth)
    ).body as { amount: string; fee: string; period: number }[];
    expect(ledger.map((l) => [l.period, l.amount, l.fee]).sort()).toEqual([
      [1, '10', '0.101011'],
      [2, '10', '0.101011'],
    ]);
  });
});
