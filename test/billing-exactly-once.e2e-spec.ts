import { EntityManager } from '@mikro-orm/postgresql';
import { createApproveCheckedInstruction } from '@solana/spl-token';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChainPort } from '../src/solana/chain.port';
import { UnsignedTxBuilder } from '../src/solana/transactions';
import { SubscriptionsService } from '../src/subscriptions/subscriptions.service';
import { signAndSend } from './helpers/chain-tx';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';
import { freePortPair } from './helpers/test-chain';
import { waitFor } from './helpers/webhook-receiver';

const MAIN = join(__dirname, '..', 'dist', 'src', 'main.js');
const USDC = 1_000_000n;
const WALLETS = 50;
const MERCHANTS = 4;
const PLANS_PER_MERCHANT = 5; // every wallet subscribes to every plan: 50 x 20 = 1,000

/**
 * Exactly once, across instances and a crash: three service processes on one database and one
 * localnet chain run their charge runs at once over 1,000 due subscriptions; one is killed with
 * SIGKILL mid-run. After the others take over its attempts, every period is charged exactly
 * once, which the chain itself shows: every token balance equals what the ledger says.
 */
describe('Billing engine: exactly once with three instances and a kill', () => {
  let t: TestApp;
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  const serviceKey = Keypair.generate();

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        ROLE: 'api',
        LOCALNET_FINALITY_SLOTS: '0',
        SERVICE_KEYPAIR: JSON.stringify([...serviceKey.secretKey]),
      },
    });
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await t.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  async function startInstance(): Promise<ChildProcess> {
    const port = await freePortPair();
    const dataDir = mkdtempSync(join(tmpdir(), 'billing-instance-'));
    dirs.push(dataDir);
    const child = spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: t.databaseUrl,
        SOLANA_RPC_URL: t.chain!.url,
        SERVICE_KEYPAIR: JSON.stringify([...serviceKey.secretKey]),
        DATA_DIR: dataDir,
        PORT: String(port),
        ROLE: 'worker',
        DEMO_MERCHANT: 'false',
        LOG_LEVEL: 'error',
        CHARGE_RUN_INTERVAL_MS: '1000',
        CHARGE_BATCH_SIZE: '50',
        CHARGE_CONCURRENCY: '16',
        CHARGE_LEASE_SECONDS: '3',
        WATCH_INTERVAL_MS: '3600000',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
    return child;
  }

  it('charges 1,000 due subscriptions exactly once while an instance is killed mid-run', async () => {
    const chain = t.app.get(ChainPort);
    const connection = new Connection(t.chain!.url, 'confirmed');
    const subscriptions = t.app.get(SubscriptionsService);
    const em = t.app.get(EntityManager);
    const mint = await chain.mint('USDC');
    t.chain!.chain.faucet({ wallet: serviceKey.publicKey.toBase58(), lamports: 100_000_000_000n });

    // Merchants and plans: amounts 1..20 USDC, so every plan's charges are told apart by sum.
    const merchants: TestMerchant[] = [];
    const plans: { id: string; merchant: TestMerchant; amount: bigint }[] = [];
    for (let m = 0; m < MERCHANTS; m++) {
      const merchant = await t.createMerchant(`M${m}`);
      merchants.push(merchant);
      for (let p = 0; p < PLANS_PER_MERCHANT; p++) {
        const amount = BigInt(plans.length + 1) * USDC;
        const res = await t.http
          .post('/api/plans')
          .set(merchant.auth)
          .send({
            label: `P${p}`,
            mint: 'USDC',
            amount: `${plans.length + 1}`,
            intervalSeconds: 86_400,
          })
          .expect(201);
        plans.push({ id: res.body.plan.id, merchant, amount });
      }
    }
    const perWallet = plans.reduce((sum, p) => sum + p.amount, 0n); // 210 USDC a period
    const share = (amount: bigint) => chain.subscriptionAllowance(amount);
    const approval = plans.reduce((sum, p) => sum + share(p.amount), 0n);

    // 50 wallets, each funded and approving the service key for all 20 plans' shares.
    const builder = (chain as unknown as { unsigned: UnsignedTxBuilder }).unsigned;
    const wallets: Keypair[] = [];
    for (let w = 0; w < WALLETS; w++) {
      const wallet = Keypair.generate();
      wallets.push(wallet);
      t.chain!.chain.faucet({
        wallet: wallet.publicKey.toBase58(),
        lamports: 1_000_000_000n,
        mint: 'USDC',
        amount: 1000n * USDC,
      });
      const ata = new PublicKey(await chain.tokenAccount(wallet.publicKey.toBase58(), 'USDC'));
      const tx = await builder.build(wallet.publicKey, [
        createApproveCheckedInstruction(
          ata,
          new PublicKey(mint.address),
          serviceKey.publicKey,
          wallet.publicKey,
          approval,
          6,
          [],
          new PublicKey(mint.tokenProgram),
        ),
      ]);
      expect((await signAndSend(t, tx.transaction, tx.lastValidBlockHeight, wallet)).state).toBe(
        'succeeded',
      );
      await em.fork().transactional(async (tx) => {
        for (const plan of plans) {
          await subscriptions.create(tx, plan.merchant.id, {
            planId: plan.id,
            walletAddress: wallet.publicKey.toBase58(),
            onchainAddress: ata.toBase58(),
            authorizedAmount: share(plan.amount),
          });
        }
      });
    }
    const due = await t.sql<{ n: string }>(
      `SELECT count(*) AS n FROM subscriptions WHERE status = 'Active' AND periods_charged = 0`,
    );
    expect(Number(due[0].n)).toBe(1000);

    // Three instances charge at once; one is killed once charging is under way.
    const victim = await startInstance();
    await startInstance();
    await startInstance();
    const succeeded = async () =>
      Number(
        (
          await t.sql<{ n: string }>(
            `SELECT count(*) AS n FROM charge_attempts WHERE state = 'succeeded'`,
          )
        )[0].n,
      );
    await waitFor(
      async () => (await succeeded()) >= 150,
      120_000,
      () => 'charging never started',
    );
    victim.kill('SIGKILL');
    expect(await succeeded()).toBeLessThan(1000); // killed mid-run, not after it
    await waitFor(
      async () => (await succeeded()) >= 1000,
      120_000,
      () => 'not every period was charged',
    );
    await new Promise((resolve) => setTimeout(resolve, 2000)); // anything in flight settles
    for (const child of children) child.kill('SIGTERM');

    // The database: one succeeded attempt and one ledger line per subscription and period.
    const attempts = await t.sql<{ state: string; n: string }>(
      `SELECT state, count(*) AS n FROM charge_attempts GROUP BY state`,
    );
    expect(attempts).toEqual([{ state: 'succeeded', n: '1000' }]);
    const lines = await t.sql<{ n: string; subs: string; periods: string }>(
      `SELECT count(*) AS n, count(DISTINCT subscription_id) AS subs, max(period) AS periods
         FROM payments WHERE kind = 'subscription' AND status <> 'failed'`,
    );
    expect(lines).toEqual([{ n: '1000', subs: '1000', periods: 1 }]);

    // The chain: each wallet paid exactly one period of each plan; each merchant received
    // exactly its plans' amounts from every wallet. Twice would show, and so would none.
    for (const wallet of wallets) {
      const ata = await chain.tokenAccount(wallet.publicKey.toBase58(), 'USDC');
      const balance = await connection.getTokenAccountBalance(new PublicKey(ata));
      expect(BigInt(balance.value.amount)).toBe(1000n * USDC - perWallet);
    }
    for (const merchant of merchants) {
      const ata = await chain.tokenAccount(merchant.walletAddress, 'USDC');
      const balance = await connection.getTokenAccountBalance(new PublicKey(ata));
      const expected = plans
        .filter((p) => p.merchant === merchant)
        .reduce((sum, p) => sum + p.amount * BigInt(WALLETS), 0n);
      expect(BigInt(balance.value.amount)).toBe(expected);
    }
  }, 600_000);
});
