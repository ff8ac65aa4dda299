import { Keypair, PublicKey, Transaction, TransactionInstruction } from '@solana/web3.js';
import type { UnexecutedEffects } from '@stablecoin-billing/localnet';
import { SUBSCRIPTIONS_PROGRAM_ADDRESS } from '../src/solana/subscriptions-client/generated';
import { SUBSCRIPTIONS_EVENT_AUTHORITY } from '../src/solana/subscriptions-program-events';
import {
  onchainPlanId,
  planPda,
  subscriptionPda,
  transferSubscriptionInstruction,
} from '../src/solana/subscriptions-program';
import { billingHelpers } from './helpers/billing';
import { fund } from './helpers/chain-tx';
import { ProgramAccounts } from './helpers/program-accounts';
import { eventSelfCpi, PullEvent, transferEventBytes } from './helpers/program-events';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';

const DAY = 86_400;
const PYUSD = 1_000_000n;

interface Ledger {
  id: string;
  kind: string;
  status: string;
  amount: string;
  fee: string;
  destination: string | null;
  references: string[];
  payer: string | null;
  note: string | null;
  subscriptionId: string | null;
  customerId: string | null;
  signature: string;
}

/**
 * Pulls the service did not make (DESIGN section 10; issue 24, "Program events"): the
 * Subscriptions program reports each pull by an event it emits by invoking itself, which the
 * watcher reads from the transaction's inner instructions. A pull into the merchant's account
 * by the plan's owner or another of its pullers is recorded once as `unattributed`,
 * `subscription_pull_by_other`, with our subscription; bytes that only look like the event
 * (at the top level, from another program, naming another authority or another account, or
 * claiming more than arrived) explain nothing. Localnet cannot run the program: each pull is
 * recorded unexecuted with what the program would have done (its event, the tokens it moved).
 */
describe('Subscriptions program pulls by others, from the program events', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let billing: ReturnType<typeof billingHelpers>;
  let accounts: ProgramAccounts;
  let planId: string;
  let plan: string;
  let mint: { address: string; tokenProgram: string };
  let merchantAta: string;
  const terms = { amount: 10n * PYUSD, periodHours: 720n, createdAt: 1_790_000_000n };
  const otherPuller = Keypair.generate();
  const serviceKey = Keypair.generate();
  const customer = Keypair.generate();
  let customerAta: string;
  let subscription: { id: string; onchainAddress: string; customerId: string };

  const ledger = async () =>
    (await t.http.get('/api/payments?limit=100').set(acme.auth).expect(200)).body as Ledger[];
  const linesOf = async (signature: string) =>
    (await ledger()).filter((l) => l.signature === signature);
  const unattributedEvents = async (signature: string) =>
    (
      await t.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM events WHERE merchant_id = $1
            AND type = 'payment.unattributed' AND payload->'data'->'object'->>'signature' = $2`,
        [acme.id, signature],
      )
    )[0].n;

  /** What the program's event for a pull of `amount` into the merchant's account says. */
  const pullEvent = (amount: bigint, puller: Keypair): PullEvent => ({
    subscription: subscription.onchainAddress,
    plan,
    delegator: customer.publicKey.toBase58(),
    mint: mint.address,
    amount,
    receiver: acme.walletAddress,
    receiverTokenAccount: merchantAta,
    puller: puller.publicKey.toBase58(),
  });

  /** `instruction`, signed by `signer`, recorded as landed with what the program did. */
  const land = (
    instruction: TransactionInstruction | TransactionInstruction[],
    signer: Keypair,
    effects: UnexecutedEffects,
  ) => {
    const tx = new Transaction({
      feePayer: signer.publicKey,
      recentBlockhash: t.chain!.chain.latestBlockhash().blockhash,
    }).add(...[instruction].flat());
    tx.sign(signer);
    return t.chain!.chain.recordUnexecuted(tx.serialize(), effects);
  };
  /** The program's `transfer_subscription` by `puller`, from the customer to the merchant. */
  const pullInstruction = (puller: Keypair, amount: bigint) =>
    transferSubscriptionInstruction({
      caller: puller.publicKey.toBase58(),
      subscriber: customer.publicKey.toBase58(),
      subscriberAta: customerAta,
      plan,
      subscription: subscription.onchainAddress,
      receiverAta: merchantAta,
      mint: mint.address,
      tokenProgram: mint.tokenProgram,
      amount,
    });
  /** The tokens a pull of `amount` moved. */
  const moved = (amount: bigint) => [{ source: customerAta, destination: merchantAta, amount }];

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        SUBSCRIPTION_SCHEME: 'program',
        LOCALNET_FINALITY_SLOTS: '0',
        ROLE: 'api',
        SERVICE_KEYPAIR: JSON.stringify([...serviceKey.secretKey]),
      },
    });
    billing = billingHelpers(t);
    acme = await t.createMerchant('Acme');
    mint = await billing.chain.mint('PYUSD');
    merchantAta = await billing.chain.tokenAccount(acme.walletAddress, 'PYUSD');
    const created = await t.http
      .post('/api/plans')
      .set(acme.auth)
      .send({ label: 'Pro', mint: 'PYUSD', amount: '10', intervalSeconds: 30 * DAY })
      .expect(201);
    planId = created.body.plan.id;
    accounts = new ProgramAccounts(t.chain!.chain);
    plan = await accounts.plan({
      merchant: acme.walletAddress,
      planId,
      mint: mint.address,
      terms,
      pullers: [billing.chain.servicePublicKey],
    });
    // The customer's subscription, as the service confirmed it (its PDA is its onchainAddress).
    const wallet = customer.publicKey.toBase58();
    fund(t, wallet, { symbol: 'PYUSD', amount: 100n * PYUSD });
    fund(t, otherPuller.publicKey.toBase58());
    fund(t, acme.walletAddress);
    customerAta = await billing.chain.tokenAccount(wallet, 'PYUSD');
    const ask = () =>
      t.http
        .post(`/api/checkout/plans/${planId}/transaction`)
        .send({ account: wallet })
        .then((r) => {
          if (r.status !== 200) throw new Error(JSON.stringify(r.body));
          return r;
        });
    const sign = (transaction: string) => {
      const tx = Transaction.from(Buffer.from(transaction, 'base64'));
      tx.partialSign(customer);
      return t.chain!.chain.recordUnexecuted(tx.serialize());
    };
    sign((await ask()).body.transaction as string);
    const initId = BigInt(t.chain!.chain.slot());
    await accounts.authority(wallet, mint.address, initId);
    const subscribe = sign((await ask()).body.transaction as string);
    await accounts.subscription({
      merchant: acme.walletAddress,
      planId,
      subscriber: wallet,
      terms,
      initId,
      currentPeriodStartTs: terms.createdAt,
    });
    await t.http
      .post(`/api/checkout/plans/${planId}/confirm`)
      .send({ signature: subscribe })
      .expect(200);
    const [row] = await t.sql<{ id: string; onchain_address: string; customer_id: string }>(
      'SELECT id, onchain_address, customer_id FROM subscriptions WHERE merchant_id = $1',
      [acme.id],
    );
    subscription = { id: row.id, onchainAddress: row.onchain_address, customerId: row.customer_id };
    expect(subscription.onchainAddress).toBe(
      await subscriptionPda(await planPda(acme.walletAddress, onchainPlanId(planId)), wallet),
    );
    // Then the merchant adds a puller of its own on-chain (`update_plan`).
    await accounts.plan({
      merchant: acme.walletAddress,
      planId,
      mint: mint.address,
      terms,
      pullers: [billing.chain.servicePublicKey, otherPuller.publicKey.toBase58()],
    });
    // An Open invoice: the watcher scans the merchant's accounts from now on.
    await t.http
      .post('/api/invoices')
      .set(acme.auth)
      .send({
        walletAddress: Keypair.generate().publicKey.toBase58(),
        mint: 'PYUSD',
        lineItems: [{ description: 'Work', quantity: 1, unitAmount: '99' }],
      })
      .expect(201);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a pull by another puller, and one by the plan owner, are each one line with the subscription, however often scanned', async () => {
    const byPuller = land(await pullInstruction(otherPuller, 4n * PYUSD), otherPuller, {
      innerInstructions: [
        { index: 0, instructions: [eventSelfCpi(pullEvent(4n * PYUSD, otherPuller))] },
      ],
      tokenTransfers: moved(4n * PYUSD),
    });
    const byOwner = land(await pullInstruction(acme.wallet, 3n * PYUSD), acme.wallet, {
      innerInstructions: [
        { index: 0, instructions: [eventSelfCpi(pullEvent(3n * PYUSD, acme.wallet))] },
      ],
      tokenTransfers: moved(3n * PYUSD),
    });
    await billing.run();
    await billing.run();
    const common = {
      kind: 'unattributed',
      fee: '0',
      destination: merchantAta,
      payer: customer.publicKey.toBase58(),
      note: 'subscription_pull_by_other',
      subscriptionId: subscription.id,
      customerId: subscription.customerId,
    };
    expect(await linesOf(byPuller)).toEqual([
      expect.objectContaining({
        ...common,
        amount: '4',
        references: [subscription.onchainAddress, otherPuller.publicKey.toBase58()],
      }),
    ]);
    expect(await linesOf(byOwner)).toEqual([
      expect.objectContaining({
        ...common,
        amount: '3',
        references: [subscription.onchainAddress, acme.walletAddress],
      }),
    ]);
    expect(await unattributedEvents(byPuller)).toBe(1);
    expect(await unattributedEvents(byOwner)).toBe(1);
    // Scanned again from the start (a lost cursor): still one line each, no new event.
    await t.sql(`DELETE FROM chain_cursors WHERE merchant_id = $1`, [acme.id]);
    await billing.run();
    expect(await linesOf(byPuller)).toHaveLength(1);
    expect(await unattributedEvents(byPuller)).toBe(1);
  });

  it("the service's own charge is the charge engine's; a pull by the service key that is not one is recorded", async () => {
    expect(billing.chain.servicePublicKey).toBe(serviceKey.publicKey.toBase58());
    const pull = async (amount: bigint) =>
      land(await pullInstruction(serviceKey, amount), serviceKey, {
        innerInstructions: [
          { index: 0, instructions: [eventSelfCpi(pullEvent(amount, serviceKey))] },
        ],
        tokenTransfers: moved(amount),
      });
    const charge = await pull(5n * PYUSD);
    // The charge engine records the signature of each try before sending it.
    await t.sql(
      `INSERT INTO charge_attempts (id, created_at, updated_at, merchant_id, subscription_id,
         period, amount, mint, state, tries, signature)
       VALUES (gen_random_uuid(), now(), now(), $1, $2, 50, 5000000, 'PYUSD', 'succeeded', 1, $3)`,
      [acme.id, subscription.id, charge],
    );
    // Signed by the service key, but no try of ours (another deployment sharing the key).
    const notOurs = await pull(PYUSD);
    await billing.run();
    await billing.run();
    expect(await linesOf(charge)).toEqual([]);
    expect(await unattributedEvents(charge)).toBe(0);
    expect(await linesOf(notOurs)).toEqual([
      expect.objectContaining({
        kind: 'unattributed',
        amount: '1',
        note: 'subscription_pull_by_other',
        subscriptionId: subscription.id,
        references: [subscription.onchainAddress, serviceKey.publicKey.toBase58()],
      }),
    ]);
  });

  it("a pull into another merchant's account (a destination the plan's owner added) names none of that merchant's subscriptions", async () => {
    const beta = await t.createMerchant('Beta');
    const betaAta = await billing.chain.tokenAccount(beta.walletAddress, 'PYUSD');
    await t.http
      .post('/api/invoices')
      .set(beta.auth)
      .send({
        walletAddress: Keypair.generate().publicKey.toBase58(),
        mint: 'PYUSD',
        lineItems: [{ description: 'Work', quantity: 1, unitAmount: '5' }],
      })
      .expect(201);
    const ix = await transferSubscriptionInstruction({
      caller: acme.walletAddress,
      subscriber: customer.publicKey.toBase58(),
      subscriberAta: customerAta,
      plan,
      subscription: subscription.onchainAddress,
      receiverAta: betaAta,
      mint: mint.address,
      tokenProgram: mint.tokenProgram,
      amount: 2n * PYUSD,
    });
    const event = {
      ...pullEvent(2n * PYUSD, acme.wallet),
      receiver: beta.walletAddress,
      receiverTokenAccount: betaAta,
    };
    const signature = land(ix, acme.wallet, {
      innerInstructions: [{ index: 0, instructions: [eventSelfCpi(event)] }],
      tokenTransfers: [{ source: customerAta, destination: betaAta, amount: 2n * PYUSD }],
    });
    await billing.run();
    const lines = (
      (await t.http.get('/api/payments?limit=100').set(beta.auth).expect(200)).body as Ledger[]
    ).filter((l) => l.signature === signature);
    // Beta is told of the pull; acme's subscription and customer are not Beta's to see.
    expect(lines).toEqual([
      expect.objectContaining({
        kind: 'unattributed',
        amount: '2',
        note: 'subscription_pull_by_other',
        subscriptionId: null,
        customerId: null,
        references: [subscription.onchainAddress, acme.walletAddress],
      }),
    ]);
  });

  it('two pulls under one instruction (a program pulling twice by CPI): the first is a pull, the second stays no_transfer_instruction, none is lost', async () => {
    const ix = await pullInstruction(otherPuller, 6n * PYUSD);
    ix.keys.push({ pubkey: Keypair.generate().publicKey, isSigner: false, isWritable: false });
    const signature = land(ix, otherPuller, {
      innerInstructions: [
        {
          index: 0,
          instructions: [
            eventSelfCpi(pullEvent(PYUSD, otherPuller)),
            eventSelfCpi(pullEvent(5n * PYUSD, otherPuller)),
          ],
        },
      ],
      tokenTransfers: moved(6n * PYUSD),
    });
    await billing.run();
    const lines = await linesOf(signature);
    expect(lines.map((l) => [l.note, l.amount]).sort()).toEqual([
      ['no_transfer_instruction', '5'],
      ['subscription_pull_by_other', '1'],
    ]);
  });

  it('forged events explain nothing: the money stays no_transfer_instruction', async () => {
    const event = pullEvent(2n * PYUSD, otherPuller);
    // The event's bytes in a top-level instruction of the program, its authority the one
    // account (as the self-CPI names it), beside an instruction that moves the tokens.
    const topLevel = land(
      [
        new TransactionInstruction({
          programId: new PublicKey(SUBSCRIPTIONS_PROGRAM_ADDRESS),
          keys: [
            {
              pubkey: new PublicKey(SUBSCRIPTIONS_EVENT_AUTHORITY),
              isSigner: false,
              isWritable: false,
            },
          ],
          data: Buffer.from(transferEventBytes(event)),
        }),
        await pullInstruction(otherPuller, 2n * PYUSD),
      ],
      otherPuller,
      { tokenTransfers: moved(2n * PYUSD) },
    );
    const forged = async (
      forge: Parameters<typeof eventSelfCpi>[1],
      e: PullEvent = event,
      amount = 2n * PYUSD,
      salt?: PublicKey,
    ) => {
      const ix = await pullInstruction(otherPuller, e.amount);
      // Every account a forged inner instruction names must be one of the transaction's.
      for (const key of [forge?.programId, forge?.authority]) {
        if (key) ix.keys.push({ pubkey: new PublicKey(key), isSigner: false, isWritable: false });
      }
      // Two forgeries with the same instruction would be one transaction: tell them apart.
      if (salt) ix.keys.push({ pubkey: salt, isSigner: false, isWritable: false });
      return land(ix, otherPuller, {
        innerInstructions: [{ index: 0, instructions: [eventSelfCpi(e, forge)] }],
        tokenTransfers: moved(amount),
      });
    };
    const wrongAuthority = await forged({ authority: Keypair.generate().publicKey.toBase58() });
    const otherProgram = await forged({ programId: Keypair.generate().publicKey.toBase58() });
    // A genuine event of a pull into another account says nothing of this one.
    const otherAccount = await forged(
      {},
      { ...event, receiverTokenAccount: Keypair.generate().publicKey.toBase58() },
      2n * PYUSD,
      Keypair.generate().publicKey,
    );
    // An event claiming more than arrived (10 said, 2 moved) is not what arrived.
    const claimsMore = await forged({}, pullEvent(10n * PYUSD, otherPuller));
    await billing.run();
    await billing.run();
    for (const signature of [topLevel, wrongAuthority, otherProgram, otherAccount, claimsMore]) {
      expect(await linesOf(signature)).toEqual([
        expect.objectContaining({
          kind: 'unattributed',
          amount: '2',
          note: 'no_transfer_instruction',
          subscriptionId: null,
          references: [],
        }),
      ]);
    }
  });
});
