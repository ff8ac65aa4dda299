import { createTransferCheckedInstruction } from '@solana/spl-token';
import { Keypair, PublicKey, Transaction } from '@solana/web3.js';
import { ChainPort } from '../src/solana/chain.port';
import { memo } from '../src/solana/transactions';
import { billingHelpers } from './helpers/billing';
import { fund } from './helpers/chain-tx';
import { createTestApp, retryingUnavailable, TestApp, TestMerchant } from './helpers/test-app';
import { waitFor } from './helpers/webhook-receiver';

const USDC = 1_000_000n;

/**
 * Payment scans start where the merchant starts and read long histories in bounded steps that
 * save their progress, a few accounts at a time (through the API, PostgreSQL and localnet).
 */
describe('Payment scans: bounded, resumable, fair', () => {
  let t: TestApp;
  let billing: ReturnType<typeof billingHelpers>;
  let usdc: { address: PublicKey; program: PublicKey };

  const invoiceOf = (merchant: TestMerchant, id: string) =>
    t.http.get(`/api/invoices/${id}`).set(merchant.auth).expect(200);
  const create = async (merchant: TestMerchant, total: string) =>
    (
      await retryingUnavailable(
        () =>
          t.http
            .post('/api/invoices')
            .set(merchant.auth)
            .send({
              walletAddress: Keypair.generate().publicKey.toBase58(),
              mint: 'USDC',
              lineItems: [{ description: 'Work', quantity: 1, unitAmount: total }],
            }),
        201,
      )
    ).body.invoice as { id: string; onchainId: string };
  const cursorOf = async (merchant: TestMerchant) =>
    (
      await t.sql<{
        cursor: string | null;
        window_top: string | null;
        window_before: string | null;
      }>(`SELECT cursor, window_top, window_before FROM chain_cursors WHERE address = $1`, [
        await billing.chain.tokenAccount(merchant.walletAddress, 'USDC'),
      ])
    )[0];

  /**
   * `count` transfers into the merchant's USDC account, written straight to the chain (fast):
   * `amount` each (0: they touch the account and move nothing).
   */
  async function history(merchant: TestMerchant, count: number, amount: bigint) {
    const sender = Keypair.generate();
    fund(t, sender.publicKey.toBase58(), { symbol: 'USDC', amount: 1_000_000n * USDC });
    const source = new PublicKey(
      await billing.chain.tokenAccount(sender.publicKey.toBase58(), 'USDC'),
    );
    const destination = new PublicKey(
      await billing.chain.tokenAccount(merchant.walletAddress, 'USDC'),
    );
    for (let i = 0; i < count; i++) {
      const { blockhash } = t.chain!.chain.latestBlockhash();
      const tx = new Transaction({ feePayer: sender.publicKey, recentBlockhash: blockhash }).add(
        createTransferCheckedInstruction(
          source,
          usdc.address,
          destination,
          sender.publicKey,
          amount,
          6,
          [],
          usdc.program,
        ),
        memo(`#${i}`), // no two of them are the same bytes
      );
      tx.sign(sender);
      t.chain!.chain.sendTransaction(tx.serialize({ verifySignatures: false }), {
        skipPreflight: true,
      });
    }
  }
  /** The payer pays the invoice through the checkout's Solana Pay transaction request. */
  async function pay(invoiceId: string) {
    const payer = Keypair.generate();
    fund(t, payer.publicKey.toBase58(), { symbol: 'USDC', amount: 100n * USDC });
    const req = await retryingUnavailable(
      () =>
        t.http
          .post(`/api/checkout/invoices/${invoiceId}/transaction`)
          .send({ account: payer.publicKey.toBase58() }),
      200,
    );
    await billing.sendSigned(payer, req.body.transaction as string);
  }

  beforeAll(async () => {
    t = await createTestApp({ env: { ROLE: 'api' } });
    billing = billingHelpers(t);
    const m = await billing.chain.mint('USDC');
    usdc = { address: new PublicKey(m.address), program: new PublicKey(m.tokenProgram) };
  });
  afterAll(async () => {
    await t?.close();
  });
  afterEach(() => {
    jest.restoreAllMocks();
    t?.chain?.faults.set({ signaturePageCap: 0 });
  });

  it('a merchant whose account has thousands of earlier transactions: the scan starts at its first invoice', async () => {
    const busy = await t.createMerchant('Busy since forever');
    await history(busy, 3_000, 1n); // 3,000 payments from before the service knew the merchant
    const invoice = await create(busy, '12');
    await pay(invoice.id);
    const { invoices } = await billing.run();
    // Read from the first invoice on (the slot its registration's blockhash was read at: up to
    // the blockhash cache's 20 s earlier), not the account's history.
    const [{ chain_slot: start }] = await t.sql<{ chain_slot: string }>(
      'SELECT chain_slot::text FROM invoices WHERE id = $1',
      [invoice.id],
    );
    expect(invoices.signaturesScanned).toBeLessThan(1_000);
    expect(invoices.paymentsRecorded).toBe(1);
    const lines = (await t.http.get('/api/payments').set(busy.auth).expect(200)).body as {
      kind: string;
      amount: string;
      invoiceId: string | null;
      slot: number;
    }[];
    expect(lines.filter((l) => l.kind === 'invoice')).toMatchObject([
      { amount: '12', invoiceId: invoice.id },
    ]);
    // What arrived before the invoice was never read; what arrived after it (money with no
    // reference, in those seconds) is unattributed, never dropped.
    for (const line of lines.filter((l) => l.kind === 'unattributed')) {
      expect(line).toMatchObject({ amount: '0.000001' });
      expect(line.slot).toBeGreaterThanOrEqual(Number(start));
    }
    expect(lines.length).toBe(1 + invoices.paymentsUnattributed);
    expect(lines.length).toBeLessThan(1_000);
    await waitFor(
      async () => {
        await billing.run();
        return (await invoiceOf(busy, invoice.id)).body.status === 'Paid';
      },
      20_000,
      () => 'the invoice never became Paid',
    );
  }, 120_000);

  it('a merchant receiving thousands of transactions is read in steps that save their progress, and delays no other merchant', async () => {
    const flooded = await t.createMerchant('Flooded');
    const quiet = await t.createMerchant('Quiet');
    const floodedInvoice = await create(flooded, '5');
    const quietInvoice = await create(quiet, '7');
    await billing.run(); // both accounts get their cursors, caught up
    await pay(floodedInvoice.id); // the payment, then 7,000 transactions after it
    await history(flooded, 7_000, 0n);
    await pay(quietInvoice.id);

    const first = (await billing.run()).invoices;
    // The quiet merchant's payment is recorded in the same sweep...
    expect(
      (await t.http.get(`/api/payments?invoiceId=${quietInvoice.id}`).set(quiet.auth)).body,
    ).toMatchObject([{ amount: '7' }]);
    // ...while the flooded account's walk stopped at its budget, its progress saved.
    expect(first.signaturesScanned).toBeLessThan(7_000);
    const midway = await cursorOf(flooded);
    expect(midway.window_top).not.toBeNull();
    expect(midway.window_before).not.toBeNull();
    expect(
      (await t.http.get(`/api/payments?invoiceId=${floodedInvoice.id}`).set(flooded.auth)).body,
    ).toEqual([]);

    // Later sweeps go on from there (never from the start) until the payment is found.
    let scanned = first.signaturesScanned;
    await waitFor(
      async () => {
        scanned += (await billing.run()).invoices.signaturesScanned;
        return (await cursorOf(flooded)).window_top === null;
      },
      240_000,
      () => 'the flooded account was never caught up',
    );
    expect(scanned).toBeLessThan(7_000 + 50); // each signature read about once
    expect(
      (await t.http.get(`/api/payments?invoiceId=${floodedInvoice.id}`).set(flooded.auth)).body,
    ).toMatchObject([{ amount: '5' }]);
    // Moving nothing into the account, the flood left no ledger line.
    expect((await t.http.get('/api/payments?kind=unattributed').set(flooded.auth)).body).toEqual(
      [],
    );
  }, 420_000); // 7,000 transactions, and sweeps until they are read: long on a busy machine

  it('a provider answering short pages: the window is read to its end, and a payment under 30 later transactions is found', async () => {
    const merchant = await t.createMerchant('Behind a capped provider');
    const invoice = await create(merchant, '3');
    await billing.run(); // its cursors, caught up
    await pay(invoice.id); // the payment, then 30 transactions after it
    await history(merchant, 30, 0n);

    // Pages of 10 whatever is asked: each short page is not the end of the history.
    t.chain!.faults.set({ signaturePageCap: 10 });
    const { invoices } = await billing.run();
    expect(await cursorOf(merchant)).toMatchObject({ window_top: null, window_before: null });
    expect(invoices.signaturesScanned).toBeGreaterThanOrEqual(31);
    expect(
      (await t.http.get(`/api/payments?invoiceId=${invoice.id}`).set(merchant.auth)).body,
    ).toMatchObject([{ amount: '3' }]);
    await waitFor(
      async () => {
        await billing.run();
        return (await invoiceOf(merchant, invoice.id)).body.status === 'Paid';
      },
      20_000,
      () => 'the invoice never became Paid',
    );
  }, 60_000);

  it('a sweep takes cursors up as lanes come free (each leased only while it is walked), each once', async () => {
    for (const name of ['Lane one', 'Lane two', 'Lane three']) {
      const merchant = await t.createMerchant(name);
      await create(merchant, '1');
    }
    const first = await t.createMerchant('Lane four');
    await create(first, '1');
    await billing.run(); // every account has its cursor, caught up

    const cursors = await t.sql<{ address: string }>(
      `SELECT address FROM chain_cursors WHERE kind = 'merchant_account'`,
    );
    expect(cursors.length).toBeGreaterThanOrEqual(12);
    const chain = t.app.get(ChainPort);
    const page = chain.signaturePage.bind(chain);
    const reads = new Map<string, number>();
    let mostLeased = 0;
    jest.spyOn(chain, 'signaturePage').mockImplementation(async (address, range) => {
      reads.set(address, (reads.get(address) ?? 0) + 1);
      const [{ n }] = await t.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM chain_cursors WHERE lease_until > now()`,
      );
      mostLeased = Math.max(mostLeased, n);
      await new Promise((resolve) => setTimeout(resolve, 20)); // a provider's round trip
      return page(address, range);
    });
    const { invoices } = await billing.run();
    // Four lanes: never more than four leases at once (all of them, up front, before)...
    expect(mostLeased).toBeLessThanOrEqual(4);
    expect(mostLeased).toBeGreaterThan(0);
    // ...and every account walked exactly once, one call each when idle.
    expect(invoices.accountsScanned).toBe(cursors.length);
    expect([...reads.keys()].sort()).toEqual(cursors.map((c) => c.address).sort());
    expect([...reads.values()].every((n) => n === 1)).toBe(true);
  }, 60_000);
});
