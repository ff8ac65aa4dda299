/**
 * Usage ingestion and x402 settlement (issue 26): `npm run bench:usage`.
 *
 * 1. **Usage events.** The built service (one instance) on a fresh database, one metered plan and
 *    `BENCH_USAGE_SUBSCRIPTIONS` (100) subscriptions seeded by SQL; `BENCH_USAGE_BATCHES` (60)
 *    batches of 1,000 events posted to `POST /api/usage-events`, 4 in flight, events spread over
 *    the subscriptions' current period. Baseline in the same run: a bare `pg` client `COPY`ing
 *    the same rows (the same columns, into the same table of the same PostgreSQL) in batches of
 *    1,000, 4 connections at once. Printed: events/s of each and their ratio (target: >= 50%).
 * 2. **x402 round trips.** A localnet process, the service pointed at it, payers funded with
 *    USDC; each payment built by the official client (`@x402/svm`), then `POST /x402/verify` and
 *    `POST /x402/settle` (which co-signs, sends and answers once confirmed), 8 in flight.
 *    Baseline in the same run: a bare web3.js client sending the same transfers (the payer as
 *    fee payer) and waiting for each to be confirmed, 8 in flight. Printed: payments/s of each
 *    and their ratio (target: >= 60%).
 */
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { createTransferCheckedInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import {
  ComputeBudgetProgram,
  Connection,
  Keypair,
  PublicKey,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import { Client, Pool } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { randomBytes, randomUUID } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { request } from 'undici';
import {
  createMerchant,
  rpc,
  runBench,
  saveResults,
  startDatabase,
  startLocalnet,
  startServer,
  stopServers,
  throughput,
  wallet,
} from './harness';

const SUBSCRIPTIONS = Number(process.env.BENCH_USAGE_SUBSCRIPTIONS ?? 100);
const BATCHES = Number(process.env.BENCH_USAGE_BATCHES ?? 60);
const BATCH = 1000;
const IN_FLIGHT = 4;
const PAYMENTS = Number(process.env.BENCH_X402_PAYMENTS ?? 200);
const PAYMENTS_IN_FLIGHT = 8;
const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
const USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const MEMO = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');

runBench(async () => {
  const usage = await usageEvents();
  const x402 = await x402RoundTrips();
  saveResults('usage', { usage, x402 });
});

async function usageEvents() {
  const db = await startDatabase();
  const { merchant, apiKey } = createMerchant(db.url);
  const server = await startServer(db.url, {
    env: { LOG_LEVEL: 'warn' },
    // BENCH_PROFILE=dir: the service's CPU profile of the run (`--cpu-prof`), to read in DevTools.
    nodeArgs: process.env.BENCH_PROFILE
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
      : undefined,
  });
  const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const plan = await request(`${server.base}/api/plans`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({
      label: 'API',
      mint: 'USDC',
      amount: '10',
      intervalSeconds: 30 * 86_400,
      meter: { name: 'calls', unitPrice: '0.001', includedUnits: '1000', cap: '100' },
    }),
  });
  if (plan.statusCode !== 201) throw new Error(`plan: ${plan.statusCode}`);
  const planId = ((await plan.body.json()) as { plan: { id: string } }).plan.id;
  const client = new Client({ connectionString: db.url });
  await client.connect();
  // Setup: subscriptions whose first period was charged, by SQL (not what is measured).
  const ids: string[] = [];
  for (let i = 0; i < SUBSCRIPTIONS; i++) {
    const customer = randomUUID();
    const id = randomUUID();
    ids.push(id);
    await client.query(
      `INSERT INTO customers (id, created_at, updated_at, merchant_id, wallet_address)
       VALUES ($1, now(), now(), $2, $3)`,
      [customer, merchant.id, wallet()],
    );
    await client.query(
      `INSERT INTO subscriptions (id, created_at, updated_at, merchant_id, plan_id, customer_id,
         status, current_period_end, last_charge_at, periods_charged, authorized_amount, scheme)
       VALUES ($1, now(), now(), $2, $3, $4, 'Active', now() + interval '29 days', now(), 1,
         0, 'token-delegate')`,
      [id, merchant.id, planId, customer],
    );
  }
  const timestamp = new Date().toISOString();
  const batch = (b: number) =>
    Array.from({ length: BATCH }, (_, i) => ({
      id: `ev-${b}-${i}`,
      subscriptionId: ids[(i + 7 * (b + 1)) % SUBSCRIPTIONS],
      meter: 'calls',
      quantity: '1',
      timestamp,
    }));
  // Warm: one batch (the statements prepared, the JIT warm).
  const warm = await post(server.base, auth, batch(-1));
  if (warm !== BATCH) throw new Error(`warm batch: ${warm}`);

  const serviceRate =
    (await throughput(BATCHES, IN_FLIGHT, async (_, b) => {
      const accepted = await post(server.base, auth, batch(b));
      if (accepted !== BATCH) throw new Error(`batch ${b}: ${accepted} accepted`);
    })) * BATCH;

  // Baseline: the same rows COPYed by a bare client, into the same table.
  const pool = new Pool({ connectionString: db.url, max: IN_FLIGHT });
  const copyRate =
    (await throughput(BATCHES, IN_FLIGHT, async (_, b) => {
      const rows = batch(b)
        .map(
          (e) =>
            `${merchant.id}\tcopy-${e.id}\t${e.subscriptionId}\tcalls\t1000000\t2\t${timestamp}\t${timestamp}\n`,
        )
        .join('');
      const connection = await pool.connect();
      try {
        await pipeline(
          Readable.from([rows]),
          connection.query(
            copyFrom(
              `COPY usage_events (merchant_id, event_id, subscription_id, meter, quantity, period,
                 occurred_at, created_at) FROM STDIN`,
            ),
          ),
        );
      } finally {
        connection.release();
      }
    })) * BATCH;
  await pool.end();
  const counted = await client.query<{ n: string }>('SELECT count(*) AS n FROM usage_events');
  await client.end();
  await stopServers([server]);
  await db.stop();
  const expected = (BATCHES + 1) * BATCH + BATCHES * BATCH;
  if (Number(counted.rows[0].n) !== expected) {
    throw new Error(`usage_events holds ${counted.rows[0].n} rows, not ${expected}`);
  }
  const ratio = serviceRate / copyRate;
  process.stdout.write(
    `usage events: service ${Math.round(serviceRate)}/s, bare COPY ${Math.round(copyRate)}/s, ` +
      `ratio ${(ratio * 100).toFixed(1)}% (target >= 50%)\n`,
  );
  return { serviceRate, copyRate, ratio, batches: BATCHES, batch: BATCH, inFlight: IN_FLIGHT };
}

async function post(
  base: string,
  headers: Record<string, string>,
  events: object[],
): Promise<number> {
  const res = await request(`${base}/api/usage-events`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ events }),
  });
  const body = (await res.body.json()) as { accepted: number };
  if (res.statusCode !== 200) throw new Error(`usage-events: ${res.statusCode}`);
  return body.accepted;
}

async function x402RoundTrips() {
  const chain = await startLocalnet();
  const db = await startDatabase();
  const merchantWallet = Keypair.generate();
  const serviceKey = Keypair.generate();
  const { apiKey } = createMerchant(db.url, merchantWallet.publicKey.toBase58());
  const server = await startServer(db.url, {
    env: {
      LOG_LEVEL: 'warn',
      SOLANA_RPC_URL: chain.url,
      SERVICE_KEYPAIR: JSON.stringify([...serviceKey.secretKey]),
      X402_DAILY_FEE_BUDGET_LAMPORTS: '100000000000',
    },
  });
  const fund = (address: string, usdc?: bigint) =>
    rpc(chain.url, 'localnet_faucet', [
      {
        walletAddress: address,
        lamports: 10_000_000_000,
        ...(usdc ? { mint: 'USDC', amount: Number(usdc) } : {}),
      },
    ]);
  await fund(serviceKey.publicKey.toBase58());
  await fund(merchantWallet.publicKey.toBase58(), 1n); // its receiving account exists
  const payers = await Promise.all(
    Array.from({ length: PAYMENTS_IN_FLIGHT }, async () => {
      const keypair = Keypair.generate();
      await fund(keypair.publicKey.toBase58(), 1_000_000_000n);
      return keypair;
    }),
  );
  const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const requirements = {
    scheme: 'exact',
    network: DEVNET,
    amount: '10000',
    asset: USDC_MINT,
    payTo: merchantWallet.publicKey.toBase58(),
    maxTimeoutSeconds: 60,
    extra: { feePayer: serviceKey.publicKey.toBase58() },
  } as const;
  const schemes = await Promise.all(
    payers.map(
      async (p) =>
        new ExactSvmScheme(await createKeyPairSignerFromBytes(p.secretKey), {
          rpcUrl: chain.url,
        }),
    ),
  );
  const pay = async (worker: number) => {
    const created = await schemes[worker].createPaymentPayload(2, requirements);
    const body = JSON.stringify({
      x402Version: 2,
      paymentPayload: {
        x402Version: 2,
        resource: { url: 'https://api.example.com/report' },
        accepted: requirements,
        payload: created.payload,
      },
      paymentRequirements: requirements,
    });
    const verify = await request(`${server.base}/x402/verify`, {
      method: 'POST',
      headers: auth,
      body,
    });
    const verdict = (await verify.body.json()) as { isValid: boolean; invalidReason?: string };
    if (!verdict.isValid) throw new Error(`verify: ${verdict.invalidReason}`);
    const settle = await request(`${server.base}/x402/settle`, {
      method: 'POST',
      headers: auth,
      body,
    });
    const settled = (await settle.body.json()) as { success: boolean; errorReason?: string };
    if (!settled.success) throw new Error(`settle: ${settled.errorReason}`);
  };
  await pay(0); // warm
  const facilitatorRate = await throughput(PAYMENTS, PAYMENTS_IN_FLIGHT, (worker) => pay(worker));

  // Baseline: the same transfers, each payer its own fee payer, sent and confirmed bare.
  const connection = new Connection(chain.url, 'confirmed');
  const mint = new PublicKey(USDC_MINT);
  const destination = getAssociatedTokenAddressSync(mint, merchantWallet.publicKey);
  const send = async (worker: number) => {
    const payer = payers[worker];
    const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash();
    const message = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: blockhash,
      instructions: [
        ComputeBudgetProgram.setComputeUnitLimit({ units: 20_000 }),
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1 }),
        createTransferCheckedInstruction(
          getAssociatedTokenAddressSync(mint, payer.publicKey),
          mint,
          destination,
          payer.publicKey,
          10_000n,
          6,
        ),
        new TransactionInstruction({
          programId: MEMO,
          keys: [],
          data: Buffer.from(randomBytes(16).toString('hex')),
        }),
      ],
    }).compileToV0Message();
    const tx = new VersionedTransaction(message);
    tx.sign([payer]);
    const signature = await connection.sendTransaction(tx, { maxRetries: 0 });
    const confirmed = await connection.confirmTransaction(
      { signature, blockhash, lastValidBlockHeight },
      'confirmed',
    );
    if (confirmed.value.err)
      throw new Error(`bare send failed: ${JSON.stringify(confirmed.value.err)}`);
  };
  await send(0); // warm
  const bareRate = await throughput(PAYMENTS, PAYMENTS_IN_FLIGHT, (worker) => send(worker));
  await stopServers([server]);
  await db.stop();
  await chain.stop();
  const ratio = facilitatorRate / bareRate;
  process.stdout.write(
    `x402 verify+settle: ${facilitatorRate.toFixed(1)}/s, bare web3.js sends ${bareRate.toFixed(1)}/s, ` +
      `ratio ${(ratio * 100).toFixed(1)}% (target >= 60%)\n`,
  );
  return { facilitatorRate, bareRate, ratio, payments: PAYMENTS, inFlight: PAYMENTS_IN_FLIGHT };
}
