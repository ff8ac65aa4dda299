import { Transaction } from '@solana/web3.js';
import { ChainPort } from '../src/solana/chain.port';
import { createPlanInstruction, onchainPlanId } from '../src/solana/subscriptions-program';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';

const DAY = 86_400;
const PYUSD = 1_000_000n;

/**
 * A metered plan under the Subscriptions program (docs/usage.md, "What the customer
 * authorises"): the plan the merchant registers on-chain commits to the fixed fee plus the
 * meter's cap per period, so the program itself refuses any pull past what the customer
 * authorised, however much was used; the API still shows the fixed fee.
 */
describe('Metered plans under the Subscriptions program', () => {
  let t: TestApp;
  let acme: TestMerchant;

  beforeAll(async () => {
    t = await createTestApp({
      env: { SUBSCRIPTION_SCHEME: 'program', LOCALNET_FINALITY_SLOTS: '0', ROLE: 'api' },
    });
    acme = await t.createMerchant('Acme');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('registers the plan with fixed fee + cap as its amount per period', async () => {
    const res = await t.http
      .post('/api/plans')
      .set(acme.auth)
      .send({
        label: 'API',
        mint: 'PYUSD',
        amount: '10',
        intervalSeconds: 30 * DAY,
        meter: { name: 'calls', unitPrice: '0.01', includedUnits: '100', cap: '5' },
      })
      .expect(201);
    const plan = res.body.plan as { id: string; amount: string; maxAmountPerPeriod: string };
    expect(plan).toMatchObject({ amount: '10', maxAmountPerPeriod: '15' });
    const chain = t.app.get(ChainPort);
    const mint = await chain.mint('PYUSD');
    const createPlan = Transaction.from(
      Buffer.from(res.body.unsignedTx as string, 'base64'),
    ).instructions.at(-1)!;
    const expected = await createPlanInstruction({
      merchant: acme.walletAddress,
      planId: onchainPlanId(plan.id),
      mint: mint.address,
      tokenProgram: mint.tokenProgram,
      amount: 15n * PYUSD,
      periodHours: 720,
      puller: chain.servicePublicKey,
    });
    expect(createPlan.data.toString('hex')).toBe(expected.data.toString('hex'));
    expect(createPlan.programId.toBase58()).toBe(expected.programId.toBase58());
  });
});
