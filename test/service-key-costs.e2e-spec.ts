import { Db } from '../src/database/db';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createCloseAccountInstruction,
  createTransferCheckedInstruction,
} from '@solana/spl-token';
import { Connection, Keypair, PublicKey, Transaction } from '@solana/web3.js';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serviceKeySpend } from '../src/billing/service-key-spend';
import { billingHelpers } from './helpers/billing';
import { fund, signAndSend } from './helpers/chain-tx';
import { ensureBuilt } from './helpers/dist';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';

const USDC = 1_000_000n;
const DAY = 86_400;

/**
 * The service key pays only for what it must (DESIGN section 10): the network fee of its own
 * pulls, never rent for an account someone else can close. The merchant's receiving accounts
 * exist before money is asked for (its registrations create them, at its expense); without one,
 * charges wait and the merchant is told, and a payer is never made to pay its rent.
 */
describe('Who pays: receiving accounts and the service key', () => {
  let t: TestApp;
  let billing: ReturnType<typeof billingHelpers>;
  let connection: Connection;
  let service: PublicKey;

  const lamports = (key: PublicKey) => connection.getBalance(key);
  const createInvoice = (merchant: TestMerchant) =>
    t.http
      .post('/api/invoices')
      .set(merchant.auth)
      .send({
        walletAddress: Keypair.generate().publicKey.toBase58(),
        mint: 'USDC',
        lineItems: [{ description: 'Work', quantity: 1, unitAmount: '3' }],
      })
      .expect(201);
  const payer = () => {
    const k = Keypair.generate();
    fund(t, k.publicKey.toBase58(), { symbol: 'USDC', amount: 100n * USDC });
    return k;
  };

  /** The merchant empties its USDC receiving account and closes it (reclaiming its rent). */
  async function closeReceivingAccount(merchant: TestMerchant): Promise<PublicKey> {
    const mint = await billing.chain.mint('USDC');
    const account = new PublicKey(await billing.chain.tokenAccount(merchant.walletAddress, 'USDC'));
    const held = await billing.balance(merchant.walletAddress);
    const elsewhere = payer();
    const { blockhash } = await connection.getLatestBlockhash();
    const close = new Transaction({
      feePayer: merchant.wallet.publicKey,
      recentBlockhash: blockhash,
    });
    if (held > 0n) {
      close.add(
        createTransferCheckedInstruction(
          account,
          new PublicKey(mint.address),
          new PublicKey(await billing.chain.tokenAccount(elsewhere.publicKey.toBase58(), 'USDC')),
          merchant.wallet.publicKey,
          held,
          6,
          [],
          new PublicKey(mint.tokenProgram),
        ),
      );
    }
    close.add(
      createCloseAccountInstruction(
        account,
        merchant.wallet.publicKey,
        merchant.wallet.publicKey,
        [],
        new PublicKey(mint.tokenProgram),
      ),
    );
    close.sign(merchant.wallet);
    t.chain!.chain.sendTransaction(close.serialize());
    return account;
  }

  beforeAll(async () => {
    t = await createTestApp({ env: { ROLE: 'api' } });
    billing = billingHelpers(t);
    connection = billing.connection;
    service = new PublicKey(billing.chain.servicePublicKey);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("an invoice of a merchant without a receiving account cannot be paid until the merchant's signed registration creates it, at the merchant's expense", async () => {
    const fresh = await t.createMerchant('Fresh', { receivingAccounts: false });
    fund(t, fresh.walletAddress);
    const created = await createInvoice(fresh);
    const { invoice, unsignedTx } = created.body as {
      invoice: { id: string };
      unsignedTx: string;
    };
    const customer = payer();
    const refused = await t.http
      .post(`/api/checkout/invoices/${invoice.id}/transaction`)
      .send({ account: customer.publicKey.toBase58() })
      .expect(409);
    expect(refused.body.error).toMatchObject({
      code: 'CONFLICT',
      message: expect.stringMatching(/^The merchant cannot receive USDC yet/),
    });

    // The merchant signs the registration the API handed it: its receiving account now exists.
    const before = await lamports(fresh.wallet.publicKey);
    expect(
      await signAndSend(t, unsignedTx, (await connection.getBlockHeight()) + 150, fresh.wallet),
    ).toMatchObject({ state: 'succeeded' });
    const account = new PublicKey(await billing.chain.tokenAccount(fresh.walletAddress, 'USDC'));
    const rent = (await connection.getAccountInfo(account))!.lamports;
    expect(before - (await lamports(fresh.wallet.publicKey))).toBe(rent + 5_000);

    // The customer's payment moves the amount and pays its own fee, no rent.
    const req = await t.http
      .post(`/api/checkout/invoices/${invoice.id}/transaction`)
      .send({ account: customer.publicKey.toBase58() })
      .expect(200);
    const customerBefore = await lamports(customer.publicKey);
    await billing.sendSigned(customer, req.body.transaction as string);
    expect(customerBefore - (await lamports(customer.publicKey))).toBe(5_000);
    expect(await billing.balance(fresh.walletAddress)).toBe(3n * USDC);
  });

  it('a merchant that closed its receiving account: charges wait and send nothing, the merchant is told once, the service key pays no rent; charged once it exists again', async () => {
    const acme = await t.createMerchant('Acme');
    const plan = await t.http
      .post('/api/plans')
      .set(acme.auth)
      .send({ label: 'Pro', mint: 'USDC', amount: '4', intervalSeconds: 30 * DAY })
      .expect(201);
    const customer = payer();
    const { subscription } = await billing.subscribe(customer, plan.body.plan.id, acme.auth);
    expect(await billing.balance(acme.walletAddress)).toBe(4n * USDC);

    // The merchant empties and closes its account (reclaiming its rent).
    const mint = await billing.chain.mint('USDC');
    const account = await closeReceivingAccount(acme);
    expect(await connection.getAccountInfo(account)).toBeNull();

    await billing.advance(30 * DAY);
    const serviceBefore = await lamports(service);
    const customerBefore = await billing.balance(customer.publicKey.toBase58());
    for (let i = 0; i < 2; i++) {
      const { charges } = await billing.run();
      expect(charges).toMatchObject({ succeeded: 0, failed: 0 });
    }
    expect(await lamports(service)).toBe(serviceBefore);
    expect(await billing.balance(customer.publicKey.toBase58())).toBe(customerBefore);
    expect(await connection.getAccountInfo(account)).toBeNull();
    expect((await billing.attempts(subscription.id))[1]).toMatchObject({
      state: 'pending',
      signature: null,
      last_error: "the merchant's receiving token account does not exist",
    });
    const view = await t.http.get(`/api/subscriptions/${subscription.id}`).set(acme.auth);
    expect(view.body).toMatchObject({ status: 'Active', failureReason: null });
    const told = await t.sql<{ payload: { data: { object: Record<string, string> } } }>(
      `SELECT payload FROM events WHERE merchant_id = $1 AND type = 'merchant.receiving_account_missing'`,
      [acme.id],
    );
    expect(told.map((e) => e.payload.data.object)).toEqual([
      {
        object: 'receiving_account',
        walletAddress: acme.walletAddress,
        mint: 'USDC',
        address: account.toBase58(),
        missingSince: expect.any(String),
      },
    ]);

    // The merchant opens it again (its own rent): the next run forgets the alert, and once the
    // attempt's wait is over (set to over here rather than waited for: five minutes) it is
    // charged, once.
    const { blockhash: again } = await connection.getLatestBlockhash();
    const reopen = new Transaction({ feePayer: acme.wallet.publicKey, recentBlockhash: again }).add(
      createAssociatedTokenAccountIdempotentInstruction(
        acme.wallet.publicKey,
        account,
        acme.wallet.publicKey,
        new PublicKey(mint.address),
        new PublicKey(mint.tokenProgram),
      ),
    );
    reopen.sign(acme.wallet);
    t.chain!.chain.sendTransaction(reopen.serialize());
    await t.sql(`UPDATE charge_attempts SET lease_until = now() WHERE subscription_id = $1`, [
      subscription.id,
    ]);
    expect((await billing.run()).charges).toMatchObject({ succeeded: 1 });
    expect(await billing.balance(acme.walletAddress)).toBe(4n * USDC);
    expect(
      await t.sql(`SELECT * FROM receiving_account_alerts WHERE merchant_id = $1`, [acme.id]),
    ).toEqual([]);
  });

  it("one merchant's missing receiving account holds up only its own charge: the wallet's subscription at another merchant in that mint is charged meanwhile", async () => {
    const late = await t.createMerchant('Late');
    const other = await t.createMerchant('Other');
    const planOf = async (merchant: TestMerchant, amount: string) =>
      (
        await t.http
          .post('/api/plans')
          .set(merchant.auth)
          .send({ label: 'Pro', mint: 'USDC', amount, intervalSeconds: 30 * DAY })
          .expect(201)
      ).body.plan.id as string;
    const customer = payer();
    // Late's first: its period ends first, so its charge is the wallet's first claimed.
    const first = await billing.subscribe(customer, await planOf(late, '4'), late.auth);
    const second = await billing.subscribe(customer, await planOf(other, '5'), other.auth);
    expect(await billing.balance(other.walletAddress)).toBe(5n * USDC);
    await closeReceivingAccount(late);

    await billing.advance(30 * DAY);
    await billing.run();
    await billing.run();
    expect((await billing.attempts(first.subscription.id))[1]).toMatchObject({
      state: 'pending',
      signature: null,
      last_error: "the merchant's receiving token account does not exist",
    });
    expect((await billing.attempts(second.subscription.id))[1]).toMatchObject({
      state: 'succeeded',
    });
    expect(await billing.balance(other.walletAddress)).toBe(10n * USDC);
  });

  it('what the service key spends is counted per merchant: one network fee per landed charge, nothing else', async () => {
    const spender = await t.createMerchant('Spender');
    const plan = await t.http
      .post('/api/plans')
      .set(spender.auth)
      .send({ label: 'Basic', mint: 'USDC', amount: '1', intervalSeconds: DAY })
      .expect(201);
    const before = await lamports(service);
    for (let i = 0; i < 3; i++) {
      await billing.subscribe(payer(), plan.body.plan.id, spender.auth);
    }
    const spentOnChain = before - (await lamports(service));
    expect(spentOnChain).toBe(3 * 5_000);
    const mine = (await serviceKeySpend(t.app.get(Db))).find((m) => m.merchantId === spender.id);
    expect(mine).toEqual({
      merchantId: spender.id,
      merchantName: 'Spender',
      landedCharges: 3,
      lamports: String(spentOnChain),
    });

    // The operator's command says the same.
    const dataDir = mkdtempSync(join(tmpdir(), 'billing-spend-'));
    try {
      const out = execFileSync(
        process.execPath,
        [ensureBuilt('src', 'cli', 'service-key-spend.js'), '--json'],
        {
          env: {
            PATH: process.env.PATH,
            DATABASE_URL: t.databaseUrl,
            SOLANA_RPC_URL: t.chain!.url,
            DATA_DIR: dataDir,
            LOG_LEVEL: 'silent',
          },
          encoding: 'utf8',
        },
      );
      expect(JSON.parse(out)).toEqual(expect.arrayContaining([mine]));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
