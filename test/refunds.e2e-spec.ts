import { createTransferCheckedInstruction } from '@solana/spl-token';
import { Keypair, PublicKey, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { Db } from '../src/database/db';
import { RefundFinder } from '../src/refunds/refund-finder';
import { RefundsRepository } from '../src/refunds/refunds.repository';
import { billingHelpers } from './helpers/billing';
import { fund, signAndSend } from './helpers/chain-tx';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';
import { waitFor } from './helpers/webhook-receiver';

const USDC = 1_000_000n;
const DAY = 86_400;

interface Refund {
  id: string;
  paymentId: string;
  invoiceId: string | null;
  subscriptionId: string | null;
  customerId: string | null;
  status: string;
  mint: string;
  amount: string;
  fee: string;
  reason: string | null;
  reference: string;
  recipient: string;
  destination: string;
  lastValidBlockHeight: number;
  signature: string | null;
  ledgerPaymentId: string | null;
  succeededAt: string | null;
  expiredAt: string | null;
}
interface Issued {
  refund: Refund;
  unsignedTx: string;
  lastValidBlockHeight: number;
}
interface Line {
  id: string;
  kind: string;
  status: string;
  amount: string;
  fee: string;
  signature: string | null;
  invoiceId: string | null;
  subscriptionId: string | null;
  customerId: string | null;
  payer: string | null;
}

/**
 * Refunds (docs/refunds.md) through the API, PostgreSQL and the localnet chain: the merchant
 * signs and sends the transfer the service built; the refund is Succeeded only once the watcher
 * finds that transfer finalized on-chain, and what refunds hold of a payment never exceeds it.
 */
describe('Refunds', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let other: TestMerchant;
  let billing: ReturnType<typeof billingHelpers>;
  let usdc: { address: PublicKey; program: PublicKey };

  const balance = (wallet: string) => billing.balance(wallet);
  const refundOf = async (paymentId: string, body: object = {}, status = 201) =>
    (
      await t.http
        .post(`/api/payments/${paymentId}/refunds`)
        .set(acme.auth)
        .send(body)
        .expect(status)
    ).body as Issued;
  const refund = async (id: string) =>
    (await t.http.get(`/api/refunds/${id}`).set(acme.auth).expect(200)).body as Refund;
  const ledger = async (query: string) =>
    (await t.http.get(`/api/payments?${query}`).set(acme.auth).expect(200)).body as Line[];
  const events = async (type: string, id: string) =>
    t.sql<{ payload: { data: { object: Refund } } }>(
      `SELECT payload FROM events WHERE type = $1 AND payload->'data'->'object'->>'id' = $2`,
      [type, id],
    );
  /** The merchant signs and sends the refund's transaction. */
  const send = async (issued: { unsignedTx: string; lastValidBlockHeight: number }) => {
    const outcome = await signAndSend(
      t,
      issued.unsignedTx,
      issued.lastValidBlockHeight,
      acme.wallet,
    );
    expect(outcome.state).toBe('succeeded');
  };
  /** Runs the engine until the refund is in `status`. */
  const until = async (id: string, status: string, ms = 20_000) => {
    let last: Refund | undefined;
    await waitFor(
      async () => {
        await billing.run();
        last = await refund(id);
        return last.status === status;
      },
      ms,
      () => `refund ${id} never became ${status}: ${JSON.stringify(last)}`,
    );
    return last!;
  };
  /** A customer holding 1,000 USDC who pays a new invoice of `total`: its finalized ledger line. */
  const paidInvoice = async (total: string) => {
    const customer = Keypair.generate();
    fund(t, customer.publicKey.toBase58(), { symbol: 'USDC', amount: 1000n * USDC });
    const invoice = (
      await t.http
        .post('/api/invoices')
        .set(acme.auth)
        .send({
          walletAddress: customer.publicKey.toBase58(),
          mint: 'USDC',
          lineItems: [{ description: 'Work', quantity: 1, unitAmount: total }],
        })
        .expect(201)
    ).body.invoice as { id: string };
    await billing.payInvoice(customer, invoice.id);
    let line: Line | undefined;
    await waitFor(
      async () => {
        await billing.run();
        [line] = await ledger(`invoiceId=${invoice.id}`);
        return line?.status === 'finalized';
      },
      20_000,
      () => 'the invoice payment never finalized',
    );
    return { customer, invoiceId: invoice.id, line: line! };
  };

  /** A USDC transfer of the test's own making into `destination`, carrying `references`. */
  const transferTo = async (
    destination: PublicKey,
    from: Keypair,
    amount: bigint,
    references: string[],
  ) => {
    const ix = createTransferCheckedInstruction(
      new PublicKey(await billing.chain.tokenAccount(from.publicKey.toBase58(), 'USDC')),
      usdc.address,
      destination,
      from.publicKey,
      amount,
      6,
      [],
      usdc.program,
    );
    for (const r of references) {
      ix.keys.push({ pubkey: new PublicKey(r), isSigner: false, isWritable: false });
    }
    return ix;
  };
  /** The merchant sends a transfer of its own making to the refund's account, with references. */
  const merchantSends = async (refund: Refund, amount: bigint, references: string[]) =>
    billing.sendInstructions(acme.wallet, [
      await transferTo(new PublicKey(refund.destination), acme.wallet, amount, references),
    ]);

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
    const mint = await billing.chain.mint('USDC');
    usdc = { address: new PublicKey(mint.address), program: new PublicKey(mint.tokenProgram) };
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a full refund of an invoice payment: Pending, then Succeeded once its transfer is finalized; a negative ledger line; the invoice stays Paid with amountRefunded', async () => {
    const { customer, invoiceId, line } = await paidInvoice('100');
    const wallet = customer.publicKey.toBase58();
    expect(await balance(wallet)).toBe(900n * USDC);

    const issued = await refundOf(line.id, { reason: 'Order cancelled' });
    expect(issued.refund).toMatchObject({
      paymentId: line.id,
      invoiceId,
      customerId: line.customerId,
      status: 'Pending',
      mint: 'USDC',
      amount: '100',
      fee: '0',
      reason: 'Order cancelled',
      recipient: wallet,
      destination: await billing.chain.tokenAccount(wallet, 'USDC'),
      signature: null,
      ledgerPaymentId: null,
      succeededAt: null,
    });
    expect(issued.lastValidBlockHeight).toBe(issued.refund.lastValidBlockHeight);
    expect(await events('refund.created', issued.refund.id)).toHaveLength(1);
    // Nothing is recorded before the chain says so: a run with the transaction unsent.
    await billing.run();
    expect((await refund(issued.refund.id)).status).toBe('Pending');

    await send(issued);
    const done = await until(issued.refund.id, 'Succeeded');
    expect(done.signature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    expect(done.succeededAt).not.toBeNull();
    expect(await balance(wallet)).toBe(1000n * USDC);
    const [refundLine] = await ledger('kind=refund');
    expect(refundLine).toMatchObject({
      id: done.ledgerPaymentId,
      kind: 'refund',
      status: 'finalized',
      amount: '-100',
      signature: done.signature,
      invoiceId,
      payer: acme.walletAddress,
    });
    const invoice = (await t.http.get(`/api/invoices/${invoiceId}`).set(acme.auth).expect(200))
      .body;
    expect(invoice).toMatchObject({ status: 'Paid', amountPaid: '100', amountRefunded: '100' });
    const listed = (await t.http.get('/api/invoices').set(acme.auth).expect(200)).body as {
      id: string;
      amountRefunded: string;
    }[];
    expect(listed.find((i) => i.id === invoiceId)?.amountRefunded).toBe('100');
    const [succeeded] = await events('refund.succeeded', issued.refund.id);
    expect(succeeded.payload.data.object).toMatchObject({ status: 'Succeeded', amount: '100' });

    // Nothing is left: a second refund is refused, and more runs record nothing again.
    const again = await t.http.post(`/api/payments/${line.id}/refunds`).set(acme.auth).send({});
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({
      code: 'REFUND_EXCEEDS_PAYMENT',
      message: expect.stringMatching(/^Nothing is left to give back/),
    });
    await billing.run();
    expect(await ledger('kind=refund')).toHaveLength(1);
    expect(await events('refund.succeeded', issued.refund.id)).toHaveLength(1);

    // Two instances that read it Pending at once: the second to record, even from another
    // instruction, and the expiry of a height that passed meanwhile, change nothing.
    const repository = t.app.get(RefundsRepository);
    const row = (await repository.find(acme.id, issued.refund.id))!;
    const stale = { ...row, status: 'Pending' as const };
    const finder = t.app.get(RefundFinder);
    const {
      landings: [landing],
      complete,
    } = await finder.look(stale);
    expect(complete).toBe(true);
    expect(landing.signature).toBe(done.signature);
    const again2 = await finder.settle(stale, {
      ...landing,
      transfer: { ...landing.transfer, instruction: landing.transfer.instruction + 7 },
    });
    expect(again2).toBeNull();
    expect(await ledger('kind=refund')).toHaveLength(1);
    const db = t.app.get(Db);
    expect(
      await db.transaction((tx) =>
        repository.expire(tx, row.id, row.last_valid_block_height, new Date()),
      ),
    ).toBeNull();
    expect((await refund(issued.refund.id)).status).toBe('Succeeded');
  });

  it('partial refunds add up to the payment and never beyond it', async () => {
    const { customer, invoiceId, line } = await paidInvoice('10');
    const first = await refundOf(line.id, { amount: '2.5' });
    const tooMuch = await t.http
      .post(`/api/payments/${line.id}/refunds`)
      .set(acme.auth)
      .send({ amount: '7.500001' });
    expect(tooMuch.status).toBe(409);
    expect(tooMuch.body.error).toMatchObject({
      code: 'REFUND_EXCEEDS_PAYMENT',
      message: 'At most 7.5 USDC is left to give back of this payment',
    });
    // The rest by default: what the Pending one does not hold.
    const rest = await refundOf(line.id);
    expect(rest.refund.amount).toBe('7.5');
    await send(first);
    await send(rest);
    await until(first.refund.id, 'Succeeded');
    await until(rest.refund.id, 'Succeeded');
    expect(await balance(customer.publicKey.toBase58())).toBe(1000n * USDC);
    const invoice = (await t.http.get(`/api/invoices/${invoiceId}`).set(acme.auth).expect(200))
      .body;
    expect(invoice.amountRefunded).toBe('10');
    const lines = await ledger(`invoiceId=${invoiceId}&kind=refund`);
    expect(lines.map((l) => l.amount).sort()).toEqual(['-2.5', '-7.5']);
    const listed = (
      await t.http.get(`/api/refunds?paymentId=${line.id}`).set(acme.auth).expect(200)
    ).body as Refund[];
    expect(listed.map((r) => r.id).sort()).toEqual([rest.refund.id, first.refund.id].sort());
  });

  it('refunds racing for the same money: exactly one wins, the others are 409s', async () => {
    const { line } = await paidInvoice('5');
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        t.http.post(`/api/payments/${line.id}/refunds`).set(acme.auth).send({ amount: '3' }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409]);
    for (const lost of answers.filter((a) => a.status === 409)) {
      expect(lost.body.error.code).toBe('REFUND_EXCEEDS_PAYMENT');
    }
    const [{ n }] = await t.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM refunds WHERE payment_id = $1`,
      [line.id],
    );
    expect(n).toBe(1);

    // The same for a charge (no invoice above it: the line's own lock decides alone).
    const [charge] = await t.sql<{ id: string }>(
      `INSERT INTO payments (id, created_at, updated_at, merchant_id, kind, status, mint, amount,
                             payer, signature)
       VALUES (gen_random_uuid(), now(), now(), $1, 'subscription', 'finalized', 'USDC', 5000000,
               $2, 'charge-signature') RETURNING id`,
      [acme.id, Keypair.generate().publicKey.toBase58()],
    );
    const onCharge = await Promise.all(
      Array.from({ length: 5 }, () =>
        t.http.post(`/api/payments/${charge.id}/refunds`).set(acme.auth).send({ amount: '3' }),
      ),
    );
    expect(onCharge.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409]);
  });

  it('an Idempotency-Key answers a retry with the first refund, never a second one', async () => {
    const { line } = await paidInvoice('4');
    const post = () =>
      t.http
        .post(`/api/payments/${line.id}/refunds`)
        .set(acme.auth)
        .set('Idempotency-Key', `refund-${line.id}`)
        .send({ amount: '1' })
        .expect(201);
    const [a, b] = [await post(), await post()];
    expect(b.body).toEqual(a.body);
    const listed = (
      await t.http.get(`/api/refunds?paymentId=${line.id}`).set(acme.auth).expect(200)
    ).body as Refund[];
    expect(listed).toHaveLength(1);
  });

  it('a refund of a subscription charge goes back to the subscriber; the subscription goes on', async () => {
    const plan = await t.http
      .post('/api/plans')
      .set(acme.auth)
      .send({ label: 'Pro', mint: 'USDC', amount: '10', intervalSeconds: 30 * DAY })
      .expect(201);
    const customer = Keypair.generate();
    const wallet = customer.publicKey.toBase58();
    fund(t, wallet, { symbol: 'USDC', amount: 30n * USDC });
    const { subscription } = await billing.subscribe(customer, plan.body.plan.id, acme.auth);
    let charge: Line | undefined;
    await waitFor(
      async () => {
        await billing.run();
        [charge] = await ledger(`subscriptionId=${subscription.id}&kind=subscription`);
        return charge?.status === 'finalized';
      },
      20_000,
      () => 'the charge never finalized',
    );
    expect(await balance(wallet)).toBe(20n * USDC);
    const issued = await refundOf(charge!.id, { amount: '4' });
    expect(issued.refund).toMatchObject({ subscriptionId: subscription.id, recipient: wallet });
    await send(issued);
    const done = await until(issued.refund.id, 'Succeeded');
    expect(await balance(wallet)).toBe(24n * USDC);
    const [line] = await ledger(`subscriptionId=${subscription.id}&kind=refund`);
    expect(line).toMatchObject({ id: done.ledgerPaymentId, amount: '-4' });
    const after = (
      await t.http.get(`/api/subscriptions/${subscription.id}`).set(acme.auth).expect(200)
    ).body;
    expect(after.status).toBe('Active');
  });

  it('a transfer that is not the merchant paying the refund never settles it: another payer, another amount, a second refund on the same transfer', async () => {
    const { customer, line } = await paidInvoice('20');
    const wallet = customer.publicKey.toBase58();
    const a = await refundOf(line.id, { amount: '5' });
    const b = await refundOf(line.id, { amount: '5' });
    const destination = new PublicKey(a.refund.destination);
    const transfer = (from: Keypair, amount: bigint, references: string[]) =>
      transferTo(destination, from, amount, references);
    // Someone else pays the customer with the refund's reference: not the merchant's refund.
    const stranger = Keypair.generate();
    fund(t, stranger.publicKey.toBase58(), { symbol: 'USDC', amount: 10n * USDC });
    await billing.sendInstructions(stranger, [
      await transfer(stranger, 5n * USDC, [a.refund.reference]),
    ]);
    // The merchant sends another amount with it: not this refund either.
    await billing.sendInstructions(acme.wallet, [
      await transfer(acme.wallet, 4n * USDC, [a.refund.reference]),
    ]);
    await billing.run();
    await billing.run();
    expect((await refund(a.refund.id)).status).toBe('Pending');
    // One transfer of 5 carrying both refunds' references settles one of them, never both.
    await billing.sendInstructions(acme.wallet, [
      await transfer(acme.wallet, 5n * USDC, [a.refund.reference, b.refund.reference]),
    ]);
    await waitFor(
      async () => {
        await billing.run();
        const statuses = [(await refund(a.refund.id)).status, (await refund(b.refund.id)).status];
        return statuses.includes('Succeeded');
      },
      20_000,
      () => 'neither refund succeeded',
    );
    await billing.run();
    const statuses = [(await refund(a.refund.id)).status, (await refund(b.refund.id)).status];
    expect(statuses.sort()).toEqual(['Pending', 'Succeeded']);
    const [{ n }] = await t.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM payments p JOIN refunds r ON r.ledger_payment_id = p.id
        WHERE r.payment_id = $1`,
      [line.id],
    );
    expect(n).toBe(1);
    expect(await balance(wallet)).toBe(994n * USDC);
  });

  it('refunds whose transactions never land expire once they cannot, and only then: a new transaction, a late landing, a transfer another refund took, a scan the RPC did not serve whole', async () => {
    // Five paid invoices, a refund of each (and two of the last), all issued now, so that they
    // can no longer land at about the same time (150 slots, a minute on localnet).
    const a = await paidInvoice('8'); // never sent; a new transaction is issued
    const b = await paidInvoice('5'); // sent, but the RPC does not serve it for a while
    const c = await paidInvoice('4'); // never sent; then the merchant pays it by hand
    const d = await paidInvoice('6'); // never sent; a credit note takes its amount meanwhile
    const e = await paidInvoice('10'); // two refunds, one transfer: the other must expire
    const ra = await refundOf(a.line.id);
    const rb = await refundOf(b.line.id);
    const rc = await refundOf(c.line.id);
    const rd = await refundOf(d.line.id);
    const re1 = await refundOf(e.line.id, { amount: '5' });
    const re2 = await refundOf(e.line.id, { amount: '5' });
    // While its transaction can land, no second one.
    const early = await t.http.post(`/api/refunds/${ra.refund.id}/transaction`).set(acme.auth);
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe('PAYMENT_NOT_REFUNDABLE');
    await send(rb);
    const bSignature = Transaction.from(Buffer.from(rb.unsignedTx, 'base64'));
    bSignature.partialSign(acme.wallet);
    t.chain!.faults.set({ unservedTransactions: [bs58.encode(bSignature.signature!)] });
    await merchantSends(re1.refund, 5n * USDC, [re1.refund.reference, re2.refund.reference]);

    try {
      const expired = await until(ra.refund.id, 'Expired', 150_000);
      expect(expired.expiredAt).not.toBeNull();
      expect(await events('refund.expired', ra.refund.id)).toHaveLength(1);
      for (const r of [rc, rd])
        expect((await until(r.refund.id, 'Expired')).status).toBe('Expired');
      // One transfer settled one of the two; the other expired, its amount free again. Issued
      // last, its transaction could land a few slots longer than the others': waited for.
      const pair = async () =>
        [(await refund(re1.refund.id)).status, (await refund(re2.refund.id)).status].sort();
      await waitFor(
        async () => !(await pair()).includes('Pending'),
        20_000,
        () => 'the pair',
      );
      expect(await pair()).toEqual(['Expired', 'Succeeded']);
      // B's transaction landed, but the RPC lists it without serving it: never Expired.
      await waitFor(
        async () =>
          (await billing.connection.getBlockHeight('finalized')) > rb.lastValidBlockHeight,
        30_000,
        () => 'the finalized height never passed B',
      );
      await billing.run();
      await billing.run();
      expect((await refund(rb.refund.id)).status).toBe('Pending');
    } finally {
      t.chain!.faults.set({ unservedTransactions: [] });
    }
    await until(rb.refund.id, 'Succeeded');
    expect(await balance(b.customer.publicKey.toBase58())).toBe(1000n * USDC);

    // A: its old transaction cannot land any more; a new one, same reference, later height.
    const late = await signAndSend(t, ra.unsignedTx, ra.lastValidBlockHeight, acme.wallet).catch(
      (error: Error) => ({ state: error.message }),
    );
    expect(late.state).not.toBe('succeeded');
    const again = (
      await t.http.post(`/api/refunds/${ra.refund.id}/transaction`).set(acme.auth).expect(200)
    ).body as Issued;
    expect(again.refund).toMatchObject({
      id: ra.refund.id,
      status: 'Pending',
      reference: ra.refund.reference,
      expiredAt: null,
    });
    expect(again.lastValidBlockHeight).toBeGreaterThan(ra.lastValidBlockHeight);
    const [reissued] = await events('refund.reissued', ra.refund.id);
    expect(reissued.payload.data.object).toMatchObject({ status: 'Pending' });
    await send(again);
    await until(ra.refund.id, 'Succeeded');
    expect(await balance(a.customer.publicKey.toBase58())).toBe(1000n * USDC);

    // C: the merchant paid it by hand after it expired: asking for a new transaction finds that
    // transfer and records it instead (no transaction); its amount is held again.
    await merchantSends(rc.refund, 4n * USDC, [rc.refund.reference]);
    // Until that transfer is final, no new transaction either (409): it may be the refund.
    let found: { status: number; body: { unsignedTx: string | null; refund: Refund } } | undefined;
    await waitFor(
      async () => {
        found = await t.http.post(`/api/refunds/${rc.refund.id}/transaction`).set(acme.auth);
        if (found.status === 409) {
          expect(found.body).toMatchObject({ error: { code: 'PAYMENT_NOT_REFUNDABLE' } });
          return false;
        }
        return true;
      },
      20_000,
      () => `never settled: ${JSON.stringify(found?.body)}`,
    );
    expect(found!.status).toBe(200);
    expect(found!.body.unsignedTx).toBeNull();
    expect(found!.body.refund).toMatchObject({ status: 'Succeeded', expiredAt: null });
    const none = await t.http.post(`/api/payments/${c.line.id}/refunds`).set(acme.auth).send({});
    expect(none.status).toBe(409);
    expect(none.body.error.code).toBe('REFUND_EXCEEDS_PAYMENT');

    // D: a credit note turned its amount into the customer's balance meanwhile: no new
    // transaction (the invoice's payments are all given back).
    await t.http
      .post(`/api/invoices/${d.invoiceId}/credit-notes`)
      .set(acme.auth)
      .send({
        lines: [{ description: 'Credit', quantity: 1, unitAmount: '6' }],
        action: 'credit',
        reason: 'other',
      })
      .expect(201);
    const refused = await t.http.post(`/api/refunds/${rd.refund.id}/transaction`).set(acme.auth);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('REFUND_EXCEEDS_PAYMENT');
    expect((await refund(rd.refund.id)).status).toBe('Expired');
  }, 300_000);

  it("what an invoice's books say decides: no refund of an Open invoice's payments, a late payment to a voided one refunded on its own, money refunded never attached", async () => {
    const customer = Keypair.generate();
    const wallet = customer.publicKey.toBase58();
    fund(t, wallet, { symbol: 'USDC', amount: 1000n * USDC });
    const create = async (total: string) =>
      (
        await t.http
          .post('/api/invoices')
          .set(acme.auth)
          .send({
            walletAddress: wallet,
            mint: 'USDC',
            lineItems: [{ description: 'Work', quantity: 1, unitAmount: total }],
          })
          .expect(201)
      ).body.invoice as { id: string; onchainId: string };
    /** Pays `amount` carrying the invoice's reference; its finalized line. */
    const payPart = async (invoice: { id: string; onchainId: string }, amount: bigint) => {
      const tx = await billing.chain.buildInvoicePayment({
        payer: wallet,
        merchantWallet: acme.walletAddress,
        mint: 'USDC',
        amount,
        reference: invoice.onchainId,
      });
      await billing.sendSigned(customer, tx.transaction);
      let line: Line | undefined;
      await waitFor(
        async () => {
          await billing.run();
          [line] = await ledger(`invoiceId=${invoice.id}`);
          return line?.status === 'finalized';
        },
        20_000,
        () => 'the payment never finalized',
      );
      return line!;
    };
    // Partly paid and Open: what it brought still counts towards paying it.
    const open = await create('10');
    const part = await payPart(open, 6n * USDC);
    const refused = await t.http.post(`/api/payments/${part.id}/refunds`).set(acme.auth).send({});
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: 'PAYMENT_NOT_REFUNDABLE',
      message: expect.stringMatching(/^The invoice is Open/),
    });
    const credit = await t.http
      .post(`/api/invoices/${open.id}/credit-notes`)
      .set(acme.auth)
      .send({
        lines: [{ description: 'Credit', quantity: 1, unitAmount: '6' }],
        action: 'credit',
        reason: 'other',
      });
    expect(credit.status).toBe(409);
    expect(credit.body.error.code).toBe('PAYMENT_NOT_REFUNDABLE');
    // Voided, it can be refunded.
    await t.http.post(`/api/invoices/${open.id}/void`).set(acme.auth).expect(200);
    const back = await refundOf(part.id);
    expect(back.refund).toMatchObject({ amount: '6', invoiceId: open.id });

    // A payment that arrives after the invoice was voided is not the invoice's: refunded on its
    // own, whatever the invoice's own payments hold.
    const voided = await create('3');
    await t.http.post(`/api/invoices/${voided.id}/void`).set(acme.auth).expect(200);
    const lateLine = await payPart(voided, 3n * USDC);
    const lateRefund = await refundOf(lateLine.id);
    expect(lateRefund.refund).toMatchObject({ amount: '3', invoiceId: null });

    // Money that paid nothing, refunded: it can no longer be attached to an invoice.
    await billing.sendInstructions(customer, [
      await transferTo(
        new PublicKey(await billing.chain.tokenAccount(acme.walletAddress, 'USDC')),
        customer,
        2n * USDC,
        [],
      ),
    ]);
    let loose: Line | undefined;
    await waitFor(
      async () => {
        await billing.run();
        loose = (await ledger('kind=unattributed')).find(
          (l) => l.payer === wallet && l.status === 'finalized',
        );
        return loose !== undefined;
      },
      20_000,
      () => 'the unattributed line never finalized',
    );
    await refundOf(loose!.id, { amount: '0.5' });
    const target = await create('2');
    const attach = await t.http
      .post(`/api/invoices/${target.id}/payments`)
      .set(acme.auth)
      .send({ paymentId: loose!.id });
    expect(attach.status).toBe(409);
    expect(attach.body.error.message).toMatch(/has refunds/);
    expect((await ledger(`invoiceId=${target.id}`)).length).toBe(0);
  });

  it('refuses what cannot be refunded with the right code, and another merchant sees nothing', async () => {
    const { line } = await paidInvoice('3');
    const post = (id: string, body: object, auth = acme.auth) =>
      t.http.post(`/api/payments/${id}/refunds`).set(auth).send(body);
    for (const [body, field] of [
      [{ amount: 'abc' }, 'amount'],
      [{ amount: '0' }, 'amount'],
      [{ amount: '-1' }, 'amount'],
      [{ amount: '1.0000001' }, 'amount'],
      [{ amount: 1 }, 'amount'],
      [{ reason: 'x'.repeat(501) }, 'reason'],
      [{ reason: 42 }, 'reason'],
    ] as const) {
      const res = await post(line.id, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.message).toMatch(new RegExp(`^${field}`));
    }
    for (const id of ['nope', '00000000-0000-4000-8000-000000000000']) {
      const res = await post(id, {});
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    // Another merchant's payment and refunds are not found.
    const theirs = await post(line.id, {}, other.auth);
    expect(theirs.status).toBe(404);
    const mine = await refundOf(line.id, { amount: '1' });
    await t.http.get(`/api/refunds/${mine.refund.id}`).set(other.auth).expect(404);
    await t.http.post(`/api/refunds/${mine.refund.id}/transaction`).set(other.auth).expect(404);
    expect((await t.http.get('/api/refunds').set(other.auth).expect(200)).body).toEqual([]);
    // A refund's own line is not refundable.
    await send(mine);
    const done = await until(mine.refund.id, 'Succeeded');
    const res = await post(done.ledgerPaymentId!, {});
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('PAYMENT_NOT_REFUNDABLE');
    // A payment not finalized yet, a failed charge, money with no known payer: not refundable.
    for (const [status, payer, why] of [
      ['confirmed', 'x', /^This payment is not finalized yet/],
      ['failed', 'x', /^This charge failed/],
      ['finalized', null, /^Nobody is known to have paid this/],
    ] as const) {
      const [row] = await t.sql<{ id: string }>(
        `INSERT INTO payments (id, created_at, updated_at, merchant_id, kind, status, mint, amount,
                               payer)
         VALUES (gen_random_uuid(), now(), now(), $1, 'subscription', $2, 'USDC', 1000000, $3)
         RETURNING id`,
        [acme.id, status, payer],
      );
      const refused = await post(row.id, {});
      expect(refused.status).toBe(409);
      expect(refused.body.error).toMatchObject({
        code: 'PAYMENT_NOT_REFUNDABLE',
        message: expect.stringMatching(why),
      });
    }
    // Nothing was written by any refusal.
    const [{ n }] = await t.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM refunds WHERE payment_id = $1`,
      [line.id],
    );
    expect(n).toBe(1);
  });
});
