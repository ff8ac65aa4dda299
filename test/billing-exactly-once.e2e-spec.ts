import { Db } from '../src/database/db';
import { createApproveCheckedInstruction } from '@solana/spl-token';
import { Connection, Keypair, PublicKey } from '@solana/web3.js';
import { ChainPort, SharedApproval } from '../src/solana/chain.port';
import { UnsignedTxBuilder } from '../src/solana/transactions';
import { SubscriptionsService } from '../src/subscriptions/subscriptions.service';
import { signAndSend } from './helpers/chain-tx';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';
import { Instances } from './helpers/instances';
import { waitFor } from './helpers/webhook-receiver';

const USDC = 1_000_000n;
const WALLETS = 50;
const MERCHANTS = 4;
const PLANS_PER_MERCHANT = 5; // every wallet subscribes to every plan: 50 x 20 = 1,000

/**
 * Exactly once, across instances, crashes, stalls and a lossy network: three service processes
 * (the compiled service, built first if needed) on one database and one localnet chain run their
 * charge runs at once over 1,000 due subscriptions, with localnet's faults on (30 sends lost,
 * every transaction landing 5 slots late). One instance is killed with SIGKILL mid-run while it
 * holds attempts, another stopped with SIGSTOP past its lease while it holds attempts, then
 * woken. The others take their attempts over (settling each recorded try by its signature), and
 * every period is charged exactly once, which the chain itself shows: every token balance equals
 * what the ledger says.
 */
describe('Billing engine: exactly once with three instances and a kill', () => {
  let t: TestApp;
  let instances: Instances;
  const serviceKey = Keypair.generate();

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        ROLE: 'api',
        LOCALNET_FINALITY_SLOTS: '0',
        SERVICE_KEYPAIR: JSON.stringify([...serviceKey.secretKey]),
      },
    });
    instances = new Instances({
      DATABASE_URL: t.databaseUrl,
      SOLANA_RPC_URL: t.chain!.url,
      SERVICE_KEYPAIR: JSON.stringify([...serviceKey.secretKey]),
      ROLE: 'worker',
      CHARGE_RUN_INTERVAL_MS: '1000',
      CHARGE_BATCH_SIZE: '50',
      CHARGE_CONCURRENCY: '16',
      CHARGE_LEASE_SECONDS: '10',
      WATCH_INTERVAL_MS: '3600000',
    });
  }, 300_000);
  afterAll(async () => {
    instances?.stopAll();
    await t?.close();
  });

  /** The attempts a process holds now (open, leased to it: `lease_owner` is host:pid:…). */
  const heldBy = async (pid: number) =>
    (
      await t.sql<{ id: string }>(
        `SELECT id FROM charge_attempts
          WHERE state IN ('pending', 'sent') AND lease_owner LIKE $1 ORDER BY id`,
        [`%:${pid}:%`],
      )
    ).map((r) => r.id);

  /**
   * What a process held once it can no longer change anything (killed or stopped): a statement
   * it sent just before may still commit, so the holding is read until two reads agree.
   */
  const settledHolding = async (pid: number) => {
    let last = await heldBy(pid);
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const now = await heldBy(pid);
      if (now.join() === last.join()) return now;
      last = now;
    }
  };

  it('charges 1,000 due subscriptions exactly once with lost and late transactions, an instance killed and one stalled', async () => {
    const chain = t.app.get(ChainPort);
    const connection = new Connection(t.chain!.url, 'confirmed');
    const subscriptions = t.app.get(SubscriptionsService);
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
    const share = (amount: bigint) => (chain.approval as SharedApproval).share(amount);
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
      await t.app.get(Db).transaction(async (tx) => {
        for (const plan of plans) {
          await subscriptions.create(tx, plan.merchant.id, {
            planId: plan.id,
            walletAddress: wallet.publicKey.toBase58(),
            onchainAddress: ata.toBase58(),
            authorizedAmount: share(plan.amount),
            scheme: 'token-delegate',
          });
        }
      });
    }
    const due = await t.sql<{ n: string }>(
      `SELECT count(*) AS n FROM subscriptions WHERE status = 'Active' AND periods_charged = 0`,
    );
    expect(Number(due[0].n)).toBe(1000);

    // Three instances charge at once over a lossy network: 30 sends lost (their tries expire
    // and are signed anew), every transaction landing 5 slots (2 s) late.
    t.chain!.faults.set({ dropSends: 30, delaySlots: 5 });
    const victim = await instances.start();
    const stalled = await instances.start();
    await instances.start();
    const succeeded = async () =>
      Number(
        (
          await t.sql<{ n: string }>(
            `SELECT count(*) AS n FROM charge_attempts WHERE state = 'succeeded'`,
          )
        )[0].n,
      );
    // Killed while it holds attempts, once charging is under way.
    await waitFor(
      async () => (await succeeded()) >= 150 && (await heldBy(victim.pid!)).length > 0,
      // A bound for a machine busy with the rest of the suite (each charge is simulated for its
      // compute limit first), not a measure of speed.
      360_000,
      () => 'charging never started, or the victim never held an attempt',
    );
    victim.kill('SIGKILL');
    const killedHeld = await settledHolding(victim.pid!);
    expect(killedHeld.length).toBeGreaterThan(0);
    expect(await succeeded()).toBeLessThan(1000); // killed mid-run, not after it
    // Stopped while it holds attempts, past its lease; the others take them over; then woken.
    await waitFor(
      async () => (await heldBy(stalled.pid!)).length > 0,
      120_000,
      () => 'the second instance never held an attempt',
    );
    stalled.kill('SIGSTOP');
    const stalledHeld = await settledHolding(stalled.pid!);
    expect(stalledHeld.length).toBeGreaterThan(0);
    let stillHeld: unknown[] = [];
    await waitFor(
      async () => (stillHeld = await heldBy(stalled.pid!)).length === 0,
      120_000,
      () => `the stalled instance's attempts were never taken over: ${stillHeld.length} left`,
    );
    stalled.kill('SIGCONT');
    await waitFor(
      async () => (await succeeded()) >= 1000,
      300_000,
      () => 'not every period was charged',
    );
    // Nothing more is on its way: every transaction sent has landed or died, no attempt is open.
    t.chain!.faults.set({ delaySlots: 0 });
    await waitFor(
      () => t.chain!.faults.state().held === 0,
      60_000,
      () => 'transactions held',
    );
    instances.stopAll();
    expect(t.chain!.faults.state().dropSends).toBe(0); // every drop was suffered

    // What the dead and the stalled instance held was taken over and charged, once each. (An
    // attempt may be in both lists: the stalled instance took it over from the dead one.)
    const held = [...new Set([...killedHeld, ...stalledHeld])];
    const taken = await t.sql<{ state: string; takeovers: number }>(
      `SELECT state, takeovers FROM charge_attempts WHERE id = ANY($1)`,
      [held],
    );
    expect(taken.length).toBe(held.length);
    for (const attempt of taken) {
      expect(attempt.state).toBe('succeeded');
      expect(attempt.takeovers).toBeGreaterThanOrEqual(1);
    }

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
  }, 900_000);
});
