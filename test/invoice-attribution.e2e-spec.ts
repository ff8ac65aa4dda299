import { createTransferCheckedInstruction } from '@solana/spl-token';
import { Keypair, PublicKey, TransactionInstruction } from '@solana/web3.js';
import { billingHelpers } from './helpers/billing';
import { fund } from './helpers/chain-tx';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';
import { waitFor } from './helpers/webhook-receiver';

const USDC = 1_000_000n;
const DAY = 86_400;

interface Ledger {
  id: string;
  kind: string;
  status: string;
  amount: string;
  fee: string;
  excess: string;
  invoiceId: string | null;
  references: string[];
  note: string | null;
  signature: string;
}

/**
 * One payment, at most one invoice (DESIGN section 10), through the API, PostgreSQL and the
 * localnet chain: an invoice is credited with what the transfer instruction carrying its
 * reference moved into the merchant's account in its mint, and nothing else. Money that pays
 * no invoice by that rule is recorded once as unattributed, reported, and attached by the
 * merchant when it knows what it was for.
 */
describe('Invoice payments: attributed per transfer instruction', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let billing: ReturnType<typeof billingHelpers>;
  const mints: Record<string, { address: PublicKey; program: PublicKey }> = {};

  const run = () => billing.run();
  const invoice = async (id: string) =>
    (await t.http.get(`/api/invoices/${id}`).set(acme.auth).expect(200)).body;
  const create = async (total: string, mint = 'USDC') =>
    (
      await t.http
        .post('/api/invoices')
        .set(acme.auth)
        .send({
          walletAddress: Keypair.generate().publicKey.toBase58(),
          mint,
          lineItems: [{ description: 'Work', quantity: 1, unitAmount: total }],
        })
        .expect(201)
    ).body.invoice as { id: string; onchainId: string };
  const ledger = async (query: string) =>
    (await t.http.get(`/api/payments?${query}`).set(acme.auth).expect(200)).body as Ledger[];
  const events = async (type: string) =>
    (
      await t.sql<{ payload: { data: { object: Ledger } } }>(
        `SELECT payload FROM events WHERE merchant_id = $1 AND type = $2 ORDER BY created_at, id`,
        [acme.id, type],
      )
    ).map((e) => e.payload.data.object);
  /** A payer holding `usdc` USDC (and as much PYUSD). */
  const payer = () => {
    const k = Keypair.generate();
    fund(t, k.publicKey.toBase58(), { symbol: 'USDC', amount: 1000n * USDC });
    fund(t, k.publicKey.toBase58(), { symbol: 'PYUSD', amount: 1000n * USDC });
    return k;
  };
  /** A transfer from `from` to the merchant, carrying `references` (Solana Pay's way). */
  const transfer = async (
    from: Keypair,
    amount: bigint,
    references: string[],
    mint: 'USDC' | 'PYUSD' = 'USDC',
  ): Promise<TransactionInstruction> => {
    const m = mints[mint];
    const ix = createTransferCheckedInstruction(
      new PublicKey(await billing.chain.tokenAccount(from.publicKey.toBase58(), mint)),
      m.address,
      new PublicKey(await billing.chain.tokenAccount(acme.walletAddress, mint)),
      from.publicKey,
      amount,
      6,
      [],
      m.program,
    );
    for (const r of references) {
      ix.keys.push({ pubkey: new PublicKey(r), isSigner: false, isWritable: false });
    }
    return ix;
  };
  /**
   * Runs the engine until what was sent is recorded and every line is finalized (the chain's
   * finality lags a slot at most here).
   */
  const settled = async () => {
    await run();
    await waitFor(
      async () => {
        await run();
        const [open] = await t.sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM payments WHERE merchant_id = $1 AND status = 'confirmed'`,
          [acme.id],
        );
        return open.n === 0;
      },
      15_000,
      () => 'payments never finalized',
    );
  };

  beforeAll(async () => {
    t = await createTestApp({ env: { LOCALNET_FINALITY_SLOTS: '0', ROLE: 'api' } });
    billing = billingHelpers(t);
    acme = await t.createMerchant('Acme');
    for (const symbol of ['USDC', 'PYUSD'] as const) {
      const m = await billing.chain.mint(symbol);
      mints[symbol] = { address: new PublicKey(m.address), program: new PublicKey(m.tokenProgram) };
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  it('one transfer carrying two invoices’ references pays neither: one unattributed line, reported; the merchant attaches it to one', async () => {
    const a = await create('100');
    const b = await create('100');
    const k = payer();
    const signature = await billing.sendInstructions(k, [
      await transfer(k, 100n * USDC, [a.onchainId, b.onchainId]),
    ]);
    await settled();
    for (const id of [a.id, b.id]) {
      expect(await invoice(id)).toMatchObject({ status: 'Open', amountPaid: '0' });
      expect(await ledger(`invoiceId=${id}`)).toEqual([]);
    }
    const [line] = (await ledger('kind=unattributed')).filter((l) => l.signature === signature);
    expect(line).toMatchObject({
      kind: 'unattributed',
      status: 'finalized',
      amount: '100',
      fee: '0',
      invoiceId: null,
      note: 'several_invoices',
    });
    expect([...line.references].sort()).toEqual([a.onchainId, b.onchainId].sort());
    expect((await events('payment.unattributed')).map((e) => e.id)).toContain(line.id);
    expect(await events('invoice.paid')).toEqual([]);

    // The merchant knows it was for A: attached once, A is Paid, B still Open.
    const attached = await t.http
      .post(`/api/invoices/${a.id}/payments`)
      .set(acme.auth)
      .send({ paymentId: line.id })
      .expect(200);
    expect(attached.body).toMatchObject({ id: a.id, status: 'Paid', amountPaid: '100' });
    expect(await ledger(`invoiceId=${a.id}`)).toMatchObject([
      { id: line.id, kind: 'invoice', amount: '100', invoiceId: a.id, note: null },
    ]);
    expect(await invoice(b.id)).toMatchObject({ status: 'Open', amountPaid: '0' });
    const again = await t.http
      .post(`/api/invoices/${b.id}/payments`)
      .set(acme.auth)
      .send({ paymentId: line.id })
      .expect(409);
    expect(again.body.error).toMatchObject({
      code: 'CONFLICT',
      message: 'This payment is not unattributed (it was attached already)',
    });
    expect(await invoice(b.id)).toMatchObject({ status: 'Open', amountPaid: '0' });
    // The same transaction scanned again is the same one line.
    await settled();
    expect((await ledger('')).filter((l) => l.signature === signature)).toHaveLength(1);
  });

  it('a transaction recorded before payments were per instruction (a line with no destination) is not credited again when its account is scanned anew', async () => {
    const a = await create('100');
    const k = payer();
    const signature = await billing.sendInstructions(k, [
      await transfer(k, 40n * USDC, [a.onchainId]),
    ]);
    await settled();
    expect(await invoice(a.id)).toMatchObject({ status: 'Open', amountPaid: '40' });
    // As the earlier watcher left it: one line for the transaction, no destination or
    // instruction, and a cursor that never moved past it (stopped between the two).
    await t.sql(`UPDATE payments SET destination = NULL, instruction = NULL WHERE signature = $1`, [
      signature,
    ]);
    await t.sql(
      `UPDATE chain_cursors SET cursor = NULL, window_top = NULL, window_before = NULL
        WHERE merchant_id = $1 AND mint = 'USDC'`,
      [acme.id],
    );
    await settled();
    expect(await invoice(a.id)).toMatchObject({ status: 'Open', amountPaid: '40' });
    expect(await ledger(`invoiceId=${a.id}`)).toMatchObject([{ amount: '40', signature }]);
  });

  it('a payment for A and 0.000001 for B in one transaction: each invoice gets what its own transfer moved', async () => {
    const a = await create('100');
    const b = await create('100');
    const k = payer();
    await billing.sendInstructions(k, [
      await transfer(k, 100n * USDC, [a.onchainId]),
      await transfer(k, 1n, [b.onchainId]),
    ]);
    await settled();
    expect(await invoice(a.id)).toMatchObject({ status: 'Paid', amountPaid: '100' });
    expect(await invoice(b.id)).toMatchObject({
      status: 'Open',
      amountPaid: '0.000001',
      amountDue: '99.999999',
    });
    expect(await ledger(`invoiceId=${a.id}`)).toMatchObject([{ amount: '100', excess: '0' }]);
    expect(await ledger(`invoiceId=${b.id}`)).toMatchObject([{ amount: '0.000001' }]);
    expect(await events('invoice.paid')).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: a.id })]),
    );
    expect((await events('invoice.paid')).map((e) => e.id)).not.toContain(b.id);
  });

  it("a transfer to someone else carrying the invoice's reference pays nothing, whatever else the transaction sends the merchant", async () => {
    const a = await create('100');
    const k = payer();
    const elsewhere = Keypair.generate();
    fund(t, elsewhere.publicKey.toBase58(), { symbol: 'USDC', amount: 1n });
    const m = mints.USDC;
    const toElsewhere = createTransferCheckedInstruction(
      new PublicKey(await billing.chain.tokenAccount(k.publicKey.toBase58(), 'USDC')),
      m.address,
      new PublicKey(await billing.chain.tokenAccount(elsewhere.publicKey.toBase58(), 'USDC')),
      k.publicKey,
      100n * USDC,
      6,
      [],
      m.program,
    );
    toElsewhere.keys.push({
      pubkey: new PublicKey(a.onchainId),
      isSigner: false,
      isWritable: false,
    });
    const signature = await billing.sendInstructions(k, [
      toElsewhere,
      await transfer(k, 1n, []), // and a unit to the merchant, so the merchant's scan reads it
    ]);
    await settled();
    expect(await invoice(a.id)).toMatchObject({ status: 'Open', amountPaid: '0' });
    expect((await ledger('')).filter((l) => l.signature === signature)).toMatchObject([
      { kind: 'unattributed', amount: '0.000001', note: 'no_invoice_reference' },
    ]);
  });

  it("money with no invoice's reference, or an invoice's reference in another mint, is recorded once as unattributed", async () => {
    const usdcInvoice = await create('5');
    const k = payer();
    const stray = await billing.sendInstructions(k, [await transfer(k, 3n * USDC, [])]);
    const wrongMint = await billing.sendInstructions(k, [
      await transfer(k, 5n * USDC, [usdcInvoice.onchainId], 'PYUSD'),
    ]);
    await settled();
    const lines = await ledger('kind=unattributed');
    expect(lines.find((l) => l.signature === stray)).toMatchObject({
      amount: '3',
      note: 'no_invoice_reference',
    });
    expect(lines.find((l) => l.signature === wrongMint)).toMatchObject({
      amount: '5',
      note: 'other_mint',
      references: [usdcInvoice.onchainId],
    });
    expect(await invoice(usdcInvoice.id)).toMatchObject({ status: 'Open', amountPaid: '0' });
    // Attaching the PYUSD to the USDC invoice is refused: another mint.
    const refused = await t.http
      .post(`/api/invoices/${usdcInvoice.id}/payments`)
      .set(acme.auth)
      .send({ paymentId: lines.find((l) => l.signature === wrongMint)!.id })
      .expect(400);
    expect(refused.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: 'paymentId: the payment is in PYUSD, the invoice in USDC',
    });
  });

  it('tokens that arrive with no transfer instruction of their own (a mint) are unattributed, never credited', async () => {
    const open = await create('1');
    const [signature] = t.chain!.chain.faucet({
      wallet: acme.walletAddress,
      mint: 'USDC',
      amount: 2n * USDC,
    });
    await settled();
    expect(
      (await ledger('kind=unattributed')).find((l) => l.signature === signature),
    ).toMatchObject({ amount: '2', note: 'no_transfer_instruction' });
    expect(await invoice(open.id)).toMatchObject({ status: 'Open', amountPaid: '0' });
  });

  it('a charge into the merchant account is the charge engine’s: never unattributed', async () => {
    await create('1'); // keeps the merchant's accounts scanned
    const plan = await t.http
      .post('/api/plans')
      .set(acme.auth)
      .send({ label: 'Pro', mint: 'USDC', amount: '7', intervalSeconds: 30 * DAY })
      .expect(201);
    const customer = payer();
    const { subscription } = await billing.subscribe(customer, plan.body.plan.id, acme.auth);
    await settled();
    const [charge] = await ledger(`subscriptionId=${subscription.id}`);
    expect(charge).toMatchObject({ kind: 'subscription', amount: '7' });
    expect((await ledger('')).filter((l) => l.signature === charge.signature)).toHaveLength(1);
  });

  it('attach: another merchant’s payment or invoice is not found; a bad id is a 400', async () => {
    const other = await t.createMerchant('Other');
    const mine = await create('1');
    const [line] = await ledger('kind=unattributed');
    const foreign = await t.http
      .post(`/api/invoices/${mine.id}/payments`)
      .set(other.auth)
      .send({ paymentId: line.id })
      .expect(404);
    expect(foreign.body.error.code).toBe('INVOICE_NOT_FOUND');
    const otherInvoice = (
      await t.http
        .post('/api/invoices')
        .set(other.auth)
        .send({
          walletAddress: Keypair.generate().publicKey.toBase58(),
          mint: 'USDC',
          lineItems: [{ description: 'x', quantity: 1, unitAmount: '1' }],
        })
        .expect(201)
    ).body.invoice;
    const notMine = await t.http
      .post(`/api/invoices/${otherInvoice.id}/payments`)
      .set(other.auth)
      .send({ paymentId: line.id })
      .expect(404);
    expect(notMine.body.error).toMatchObject({ code: 'NOT_FOUND', message: 'Payment not found' });
    const bad = await t.http
      .post(`/api/invoices/${mine.id}/payments`)
      .set(acme.auth)
      .send({ paymentId: 'nope' })
      .expect(400);
    expect(bad.body.error.details).toEqual([{ field: 'paymentId', message: expect.any(String) }]);
  });
});
