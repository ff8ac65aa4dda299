import { createApproveCheckedInstruction } from '@solana/spl-token';
import { Keypair, PublicKey } from '@solana/web3.js';
import { Db } from '../src/database/db';
import { ChainPort, SharedApproval } from '../src/solana/chain.port';
import { UnsignedTxBuilder } from '../src/solana/transactions';
import { SubscriptionsService } from '../src/subscriptions/subscriptions.service';
import { billingHelpers } from './helpers/billing';
import { signAndSend } from './helpers/chain-tx';
import { Instances } from './helpers/instances';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';
import { waitFor } from './helpers/webhook-receiver';

const USDC = 1_000_000n;
const SUBSCRIPTIONS = 60;
const GRACE_SECONDS = 60;
/** The plan: 1 USDC fixed, 0.01 a unit past 10 included, at most 2 USDC of usage a period. */
const FIXED = 1_000_000n;
const UNIT_PRICE = 10_000n;
const INCLUDED = 10n;
const CAP = 2_000_000n;

interface Sent {
  subscriptionId: string;
  period: 1 | 2;
  units: bigint;
}

/**
 * Metered charges exactly once (docs/usage.md): three worker processes charge 60 metered
 * subscriptions' second period (its fixed fee plus the first period's usage) while the test
 * keeps reporting usage of both periods through the API, and one worker is killed mid-run.
 * The API's clock still holds the first period's grace open, so only the period's lock decides
 * between an event and the charge closing its period. Afterwards every event the API accepted
 * for the first period is in its charge, none it refused is, every event of the second period
 * waits for its own charge, and each period is charged once: in the ledger and on-chain.
 */
describe('Metered charges: exactly once with usage arriving during the runs, three instances and a kill', () => {
  let t: TestApp;
  let instances: Instances;
  let acme: TestMerchant;
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
      CHARGE_CONCURRENCY: '4',
      CHARGE_LEASE_SECONDS: '10',
      WATCH_INTERVAL_MS: '3600000',
    });
    acme = await t.createMerchant('Acme');
  }, 300_000);
  afterAll(async () => {
    t?.chain?.faults.set({ delaySlots: 0 });
    instances?.stopAll();
    await t?.close();
  });

  it('every accepted event of a period is charged once, no refused one is, and no period twice', async () => {
    const chain = t.app.get(ChainPort);
    const billing = billingHelpers(t);
    t.chain!.chain.faucet({ wallet: serviceKey.publicKey.toBase58(), lamports: 100_000_000_000n });
    const plan = (
      await t.http
        .post('/api/plans')
        .set(acme.auth)
        .send({
          label: 'API',
          mint: 'USDC',
          amount: '1',
          intervalSeconds: 86_400,
          meter: {
            name: 'calls',
            unitPrice: '0.01',
            includedUnits: `${INCLUDED}`,
            cap: '2',
            graceSeconds: GRACE_SECONDS,
          },
        })
        .expect(201)
    ).body.plan as { id: string };
    const mint = await chain.mint('USDC');
    const pull = FIXED + CAP; // the most a period pulls (USDC has no transfer fee here)
    const share = (chain.approval as SharedApproval).share(pull);
    const builder = (chain as unknown as { unsigned: UnsignedTxBuilder }).unsigned;

    // Subscribers whose first period was charged: its end is past, its grace ends in a second
    // (for the workers' clocks), while the API's clock (frozen at the start) keeps it open.
    const start = t.clock.now().getTime();
    const periodEnd = start - (GRACE_SECONDS - 1) * 1000;
    const subscriptions: { id: string; wallet: string }[] = [];
    for (let i = 0; i < SUBSCRIPTIONS; i++) {
      const wallet = Keypair.generate();
      const address = wallet.publicKey.toBase58();
      t.chain!.chain.faucet({
        wallet: address,
        lamports: 1_000_000_000n,
        mint: 'USDC',
        amount: 100n * USDC,
      });
      const ata = new PublicKey(await chain.tokenAccount(address, 'USDC'));
      const tx = await builder.build(wallet.publicKey, [
        createApproveCheckedInstruction(
          ata,
          new PublicKey(mint.address),
          serviceKey.publicKey,
          wallet.publicKey,
          share,
          6,
          [],
          new PublicKey(mint.tokenProgram),
        ),
      ]);
      expect((await signAndSend(t, tx.transaction, tx.lastValidBlockHeight, wallet)).state).toBe(
        'succeeded',
      );
      const created = await t.app.get(Db).transaction((tx) =>
        t.app.get(SubscriptionsService).create(tx, acme.id, {
          planId: plan.id,
          walletAddress: address,
          onchainAddress: ata.toBase58(),
          authorizedAmount: share,
          scheme: 'token-delegate',
        }),
      );
      subscriptions.push({ id: created.id, wallet: address });
    }
    // Setup, not what is under test: the first period as charged (its usage is the second's).
    await t.sql(
      `UPDATE subscriptions SET periods_charged = 1, last_charge_at = $2,
              current_period_end = $3 WHERE id = ANY($1)`,
      [subscriptions.map((s) => s.id), new Date(periodEnd - 86_400_000), new Date(periodEnd)],
    );

    // Usage reported all through the runs: batches of one subscription's first period (accepted
    // or refused whole once its charge closed it), and batches of the second (always accepted).
    const accepted: Sent[] = [];
    let refused = 0;
    let n = 0;
    let reporting = true;
    const report = async () => {
      for (let round = 0; reporting; round++) {
        const sub = subscriptions[round % SUBSCRIPTIONS];
        const period = round % 2 === 0 ? 1 : 2;
        const at = period === 1 ? periodEnd - 1000 : periodEnd + 1000;
        const events = Array.from({ length: 5 }, () => ({
          id: `e${n++}`,
          subscriptionId: sub.id,
          meter: 'calls',
          quantity: `${1 + (n % 4)}`,
          timestamp: new Date(at).toISOString(),
        }));
        const res = await t.http.post('/api/usage-events').set(acme.auth).send({ events });
        if (res.status === 200) {
          for (const e of events) {
            accepted.push({ subscriptionId: sub.id, period, units: BigInt(e.quantity) });
          }
        } else {
          expect(res.status).toBe(409);
          expect(res.body.error.code).toBe('USAGE_PERIOD_CLOSED');
          expect(period).toBe(1);
          refused += events.length;
        }
      }
    };
    // Some usage before the workers start, then the workers, with usage still arriving.
    reporting = true;
    const reporter = report();
    await waitFor(
      () => Promise.resolve(accepted.length >= 200),
      60_000,
      () => 'no usage accepted',
    );
    t.chain!.faults.set({ delaySlots: 5 });
    const victim = await instances.start();
    await instances.start();
    await instances.start();
    const succeeded = async () =>
      Number(
        (
          await t.sql<{ n: string }>(
            `SELECT count(*) AS n FROM charge_attempts WHERE state = 'succeeded' AND period = 2`,
          )
        )[0].n,
      );
    // The victim is killed while it holds attempts, once charging is under way.
    await waitFor(
      async () =>
        (await succeeded()) >= 5 &&
        (
          await t.sql(
            `SELECT 1 FROM charge_attempts WHERE state IN ('pending', 'sent')
                AND lease_owner LIKE $1`,
            [`%:${victim.pid}:%`],
          )
        ).length > 0,
      240_000,
      () => 'charging never started, or the victim never held an attempt',
    );
    victim.kill('SIGKILL');
    await waitFor(
      async () => (await succeeded()) >= SUBSCRIPTIONS,
      300_000,
      () => 'not every second period was charged',
    );
    reporting = false;
    await reporter;
    t.chain!.faults.set({ delaySlots: 0 });
    await waitFor(
      () => Promise.resolve(t.chain!.faults.state().held === 0),
      60_000,
      () => 'transactions held',
    );
    instances.stopAll();
    expect(refused).toBeGreaterThan(0); // usage did arrive after periods closed

    // Each subscription: one charge of its second period, in the ledger and on-chain, for the
    // fixed fee plus exactly the first period's accepted usage (past 10 units, capped).
    const lines = await t.sql<{ subscription_id: string; amount: string; units: string }>(
      `SELECT subscription_id, amount::text, details->'usage'->>'units' AS units
         FROM payments WHERE kind = 'subscription' AND status <> 'failed' AND period = 2`,
    );
    expect(lines).toHaveLength(SUBSCRIPTIONS);
    const attempts = await t.sql<{ n: string }>(
      `SELECT count(*) AS n FROM charge_attempts WHERE period = 2 AND state = 'succeeded'`,
    );
    expect(attempts[0].n).toBe(`${SUBSCRIPTIONS}`);
    for (const sub of subscriptions) {
      const units = accepted
        .filter((a) => a.subscriptionId === sub.id && a.period === 1)
        .reduce((sum, a) => sum + a.units, 0n);
      const billable = units > INCLUDED ? units - INCLUDED : 0n;
      const usage = billable * UNIT_PRICE > CAP ? CAP : billable * UNIT_PRICE;
      const line = lines.find((l) => l.subscription_id === sub.id)!;
      expect({ units: line.units, amount: line.amount }).toEqual({
        units: `${units}`,
        amount: `${FIXED + usage}`,
      });
      expect(await billing.balance(sub.wallet)).toBe(100n * USDC - FIXED - usage);
    }
    // The second period's usage all waits for its own charge: none of it was counted.
    const second = accepted.filter((a) => a.period === 2).reduce((sum, a) => sum + a.units, 0n);
    const stored = await t.sql<{ units: string }>(
      `SELECT (sum(quantity) / 1000000)::bigint::text AS units FROM usage_events WHERE period = 2`,
    );
    expect(stored[0].units).toBe(`${second}`);
  }, 900_000);
});
