import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  createRevokeInstruction,
  getExtraAccountMetaAddress,
  getAssociatedTokenAddressSync,
  TOKEN_2022_PROGRAM_ID,
} from '@solana/spl-token';
import {
  Connection,
  Keypair,
  PublicKey,
  Transaction,
  TransactionInstruction,
} from '@solana/web3.js';
import { ABSENT_HOOK_PROGRAM, testMint } from '@stablecoin-billing/localnet';
import { randomUUID } from 'node:crypto';
import { classify } from '../src/common/filters/all-exceptions.filter';
import { ChargeInput, PlanTermsMismatchError } from '../src/solana/chain.port';
import { mintTable } from '../src/solana/mints';
import { RpcChainAdapter } from '../src/solana/rpc-chain.adapter';
import { readProgramSubscription } from '../src/solana/schemes/program-state';
import { TransferHooks } from '../src/solana/transfer-hook';
import {
  cancelSubscriptionInstruction,
  createPlanInstruction,
  initAuthorityInstruction,
  onchainPlanId,
  planPda,
  subscribeInstruction,
  subscriptionAuthorityPda,
  subscriptionPda,
  transferSubscriptionInstruction,
} from '../src/solana/subscriptions-program';
import { approveAuthority, ProgramAccounts } from './helpers/program-accounts';
import { startTestChain, TestChain } from './helpers/test-chain';

/**
 * The Subscriptions-program scheme (v0.4.0) against localnet. The program itself cannot run here
 * (its binary is not available offline), so its accounts are written onto the chain in their
 * v0.4.0 layouts by the client generated from its IDL (`ProgramAccounts`), and the adapter's
 * readers and builders are checked against them over JSON-RPC. The builders' bytes are held by
 * the golden vectors (src/solana/subscriptions-program.spec.ts).
 */
describe('Subscriptions-program scheme on localnet', () => {
  let tc: TestChain;
  let connection: Connection;
  let adapter: RpcChainAdapter;
  let accounts: ProgramAccounts;
  const serviceKey = Keypair.generate();
  const merchant = Keypair.generate().publicKey.toBase58();
  const planId = randomUUID();
  const PYUSD = mintTable('localnet')[1].address;
  const TOKEN_2022 = TOKEN_2022_PROGRAM_ID.toBase58();
  const terms = { amount: 9_990_000n, periodHours: 720n, createdAt: 1_790_000_000n };
  const u32 = (n: number) => {
    const bytes = Buffer.alloc(4);
    bytes.writeUInt32LE(n);
    return [...bytes];
  };
  beforeAll(async () => {
    tc = await startTestChain();
    connection = new Connection(tc.url, 'confirmed');
    adapter = new RpcChainAdapter(connection, {
      cluster: 'localnet',
      scheme: 'program',
      commitment: 'confirmed',
      mints: mintTable('localnet'),
      serviceKey,
      approvalPeriods: 12,
    });
    accounts = new ProgramAccounts(tc.chain);
    // The plan as create_plan would have left it.
    await accounts.plan({
      merchant,
      planId,
      mint: PYUSD,
      terms,
      pullers: [serviceKey.publicKey.toBase58()],
    });
  });
  afterAll(async () => {
    await tc.close();
  });

  // Decoded from a compiled transaction, an account's writable flag is the message's (the union
  // over its instructions, and the fee payer is always writable), so it can only be at least the
  // builder's; program, accounts in order, signers and data must match exactly.
  const wire = (ix: TransactionInstruction) => ({
    programId: ix.programId.toBase58(),
    keys: ix.keys.map((k) => [k.pubkey.toBase58(), k.isSigner]),
    data: ix.data.toString('hex'),
  });
  const writable = (ix: TransactionInstruction) =>
    ix.keys.filter((k) => k.isWritable).map((k) => k.pubkey.toBase58());
  /**
   * Sends instructions signed (and paid) by `signer`, landed. A serial in a memo keeps two equal
   * sends within one slot (one blockhash) apart: the same bytes would be the same signature,
   * refused as AlreadyProcessed (the re-approval after a revoke, sent within a slot of the first).
   */
  let sends = 0;
  const send = async (signer: Keypair, ixs: TransactionInstruction[]) => {
    const serial = new TransactionInstruction({
      programId: new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr'),
      keys: [],
      data: Buffer.from(`test-send:${++sends}`),
    });
    const tx = new Transaction().add(...ixs, serial);
    tx.feePayer = signer.publicKey;
    tx.recentBlockhash = (await connection.getLatestBlockhash()).blockhash;
    tx.sign(signer);
    const signature = await connection.sendRawTransaction(tx.serialize());
    await connection.confirmTransaction(signature, 'confirmed');
  };
  const instructions = (base64: string) =>
    Transaction.from(Buffer.from(base64, 'base64')).instructions;

  it("plan registration is the merchant's receiving account and create_plan, merchant-signed and merchant-paid", async () => {
    const unsigned = await adapter.buildPlanRegistration({
      merchantWallet: merchant,
      planId,
      mint: 'PYUSD',
      amount: terms.amount,
      periodHours: 720,
    });
    const tx = Transaction.from(Buffer.from(unsigned.transaction, 'base64'));
    expect(tx.feePayer?.toBase58()).toBe(merchant);
    const merchantAta = getAssociatedTokenAddressSync(
      new PublicKey(PYUSD),
      new PublicKey(merchant),
      true,
      TOKEN_2022_PROGRAM_ID,
    );
    // The merchant's receiving account of the plan's mint (where charges go), paid by the
    // merchant, then the official create_plan.
    const [account, createPlan] = tx.instructions;
    expect(tx.instructions).toHaveLength(2);
    expect(account.programId.toBase58()).toBe(ASSOCIATED_TOKEN_PROGRAM_ID.toBase58());
    expect(account.keys.map((k) => k.pubkey.toBase58())).toEqual([
      merchant,
      merchantAta.toBase58(),
      merchant,
      PYUSD,
      '11111111111111111111111111111111',
      TOKEN_2022,
    ]);
    expect(wire(createPlan)).toEqual(
      wire(
        await createPlanInstruction({
          merchant,
          planId: onchainPlanId(planId),
          mint: PYUSD,
          tokenProgram: TOKEN_2022,
          amount: terms.amount,
          periodHours: 720,
          puller: serviceKey.publicKey.toBase58(),
        }),
      ),
    );
    expect(await adapter.planAddress(merchant, planId)).toBe(
      await planPda(merchant, onchainPlanId(planId)),
    );
  });

  it('subscribe takes two steps for a first subscription: the authority, then the subscribe bound to its init_id as it landed', async () => {
    const customer = Keypair.generate();
    const subscriber = customer.publicKey.toBase58();
    tc.chain.faucet({ wallet: subscriber, lamports: 1_000_000_000n, mint: 'PYUSD', amount: 1n });
    const subscriberAta = getAssociatedTokenAddressSync(
      new PublicKey(PYUSD),
      new PublicKey(subscriber),
      true,
      TOKEN_2022_PROGRAM_ID,
    ).toBase58();
    const input = {
      subscriber,
      merchantWallet: merchant,
      planId,
      mint: 'PYUSD' as const,
      amount: terms.amount,
      periodHours: 720,
    };

    // No authority for PYUSD yet: initialize_subscription_authority alone, nothing else.
    const first = await adapter.buildSubscribe(input);
    expect(first.step).toBe('authority');
    const [init] = instructions(first.transaction);
    expect(instructions(first.transaction)).toHaveLength(1);
    const expectedInit = await initAuthorityInstruction({
      subscriber,
      mint: PYUSD,
      tokenProgram: TOKEN_2022,
      subscriberAta,
    });
    expect(wire(init)).toEqual(wire(expectedInit));
    expect(writable(init)).toEqual(expect.arrayContaining(writable(expectedInit)));

    // The authority landed: the program stamped it with its slot and made it the token
    // account's delegate. The subscribe names that init_id and the plan's live terms (its
    // createdAt included), read from the chain.
    await accounts.authority(subscriber, PYUSD, 381_204_117n);
    await send(customer, [await approveAuthority(customer.publicKey, PYUSD)]);
    const second = await adapter.buildSubscribe(input);
    expect(second.step).toBe('subscribe');
    const expectedSubscribe = await subscribeInstruction({
      subscriber,
      merchant,
      planId: onchainPlanId(planId),
      mint: PYUSD,
      terms,
      authorityInitId: 381_204_117n,
    });
    expect(instructions(second.transaction).map(wire)).toEqual([wire(expectedSubscribe)]);

    // Re-initialised after a close (a new slot): the next subscribe consents to the new one.
    await accounts.authority(subscriber, PYUSD, 381_999_001n);
    const third = await adapter.buildSubscribe(input);
    const [subscribe] = instructions(third.transaction);
    expect(subscribe.data.readBigInt64LE(subscribe.data.length - 8)).toBe(381_999_001n);

    // The token account's delegate revoked (or replaced by another dApp's approval): the
    // subscribe's transaction initialises the authority again first, which approves it again
    // and keeps its init_id.
    const ata = new PublicKey(subscriberAta);
    await send(customer, [
      createRevokeInstruction(ata, customer.publicKey, [], TOKEN_2022_PROGRAM_ID),
    ]);
    const fourth = await adapter.buildSubscribe(input);
    expect(fourth.step).toBe('subscribe');
    expect(instructions(fourth.transaction).map(wire)).toEqual([
      wire(expectedInit),
      wire(
        await subscribeInstruction({
          subscriber,
          merchant,
          planId: onchainPlanId(planId),
          mint: PYUSD,
          terms,
          authorityInitId: 381_999_001n,
        }),
      ),
    ]);
  });

  describe("a wallet's old subscription account of the plan", () => {
    const customer = Keypair.generate();
    const wallet = customer.publicKey.toBase58();
    const INIT = 383_000_000n;
    const input = {
      subscriber: wallet,
      merchantWallet: merchant,
      planId,
      mint: 'PYUSD' as const,
      amount: terms.amount,
      periodHours: 720,
    };
    const old = (initId: bigint, expiresAtTs: bigint) =>
      accounts.subscription({ merchant, planId, subscriber: wallet, terms, initId, expiresAtTs });
    const chainNow = async () =>
      BigInt((await connection.getBlockTime(await connection.getSlot()))!);

    beforeAll(async () => {
      tc.chain.faucet({ wallet, lamports: 1_000_000_000n, mint: 'PYUSD', amount: 1n });
      await accounts.authority(wallet, PYUSD, INIT);
      await send(customer, [await approveAuthority(customer.publicKey, PYUSD)]);
    });

    it('cancelled and expired: closed (revoke_delegation, with the plan) before the new subscribe', async () => {
      await old(INIT, (await chainNow()) - 60n);
      const built = instructions((await adapter.buildSubscribe(input)).transaction);
      expect(built.map((ix) => ix.data[0])).toEqual([3, 11]);
      const plan = await planPda(merchant, onchainPlanId(planId));
      expect(built[0].keys.map((k) => k.pubkey.toBase58())).toEqual([
        wallet,
        await subscriptionPda(plan, wallet),
        plan,
      ]);
    });

    it('bound to an authority since re-initialised: closed as abandoned before the new subscribe', async () => {
      await old(INIT - 1n, 0n);
      const built = instructions((await adapter.buildSubscribe(input)).transaction);
      expect(built.map((ix) => ix.data[0])).toEqual([16, 11]);
    });

    it('cancelled and still running, or running: a 409 saying so, nothing built', async () => {
      await old(INIT, (await chainNow()) + 86_400n);
      await expect(adapter.buildSubscribe(input)).rejects.toMatchObject({
        code: 'CONFLICT',
        message: /was cancelled and runs until .* it can subscribe again after that/,
      });
      await old(INIT, 0n);
      await expect(adapter.buildSubscribe(input)).rejects.toMatchObject({
        code: 'CONFLICT',
        message:
          'This wallet already has a running subscription to the plan on-chain: cancel it ' +
          '(cancel_subscription) and subscribe again once it has run out',
      });
      accounts.close(await subscriptionPda(await planPda(merchant, onchainPlanId(planId)), wallet));
      const fresh = instructions((await adapter.buildSubscribe(input)).transaction);
      expect(fresh.map((ix) => ix.data[0])).toEqual([11]);
    });
  });

  it('refuses to build a subscribe for a plan that is not on-chain', async () => {
    await expect(
      adapter.buildSubscribe({
        subscriber: Keypair.generate().publicKey.toBase58(),
        merchantWallet: merchant,
        planId: randomUUID(),
        mint: 'PYUSD',
        amount: 1n,
        periodHours: 24,
      }),
    ).rejects.toMatchObject({
      kind: 'not_registered',
      message: /is not registered on-chain/,
      code: 'CONFLICT',
    });
  });

  describe('a plan front-run on-chain with other terms is refused', () => {
    const attacker = Keypair.generate().publicKey.toBase58();
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['another puller', { pullers: [attacker] }, /pullers \[/],
      ['an extra puller', { pullers: ['SERVICE', attacker] }, /pullers \[/],
      ['another destination', { destinations: [attacker] }, /destinations \[/],
      ['an extra destination', { destinations: ['MERCHANT', attacker] }, /destinations \[/],
      ['another amount', { amount: terms.amount + 1n }, /amount 9990001/],
      ['another period', { periodHours: 24n }, /period 24 hours/],
      ['another mint', { mint: mintTable('localnet')[2].address }, /mint /],
      ['an end time', { endTs: 1_900_000_000n }, /an end time/],
    ];
    it.each(cases)('%s', async (_name, change, message) => {
      const id = randomUUID();
      const named = (list: unknown) =>
        (list as string[]).map((a) =>
          a === 'SERVICE' ? serviceKey.publicKey.toBase58() : a === 'MERCHANT' ? merchant : a,
        );
      await accounts.plan({
        merchant,
        planId: id,
        mint: (change.mint as string | undefined) ?? PYUSD,
        terms: {
          ...terms,
          ...(change.amount !== undefined ? { amount: change.amount as bigint } : {}),
          ...(change.periodHours !== undefined
            ? { periodHours: change.periodHours as bigint }
            : {}),
        },
        endTs: (change.endTs as bigint | undefined) ?? 0n,
        destinations: named(change.destinations ?? [merchant]),
        pullers: named(change.pullers ?? [serviceKey.publicKey.toBase58()]),
      });
      const attempt = adapter.buildSubscribe({
        subscriber: Keypair.generate().publicKey.toBase58(),
        merchantWallet: merchant,
        planId: id,
        mint: 'PYUSD',
        amount: terms.amount,
        periodHours: 720,
      });
      await expect(attempt).rejects.toBeInstanceOf(PlanTermsMismatchError);
      await expect(attempt).rejects.toMatchObject({ kind: 'terms_differ', message });
      // A clear 409 through the one exception filter, never a 500.
      const error = await attempt.catch((e: unknown) => e);
      expect(classify(error)).toMatchObject({ code: 'CONFLICT', message });
    });
  });

  it("revoke is the subscriber's cancel_subscription of that subscription (closing it would be refused while it runs)", async () => {
    const subscriber = Keypair.generate().publicKey.toBase58();
    const plan = await planPda(merchant, onchainPlanId(planId));
    const subscription = await subscriptionPda(plan, subscriber);
    expect(
      await adapter.subscriptionAddress({
        merchantWallet: merchant,
        planId,
        subscriber,
        mint: 'PYUSD',
      }),
    ).toBe(subscription);
    const unsigned = await adapter.buildRevoke({
      subscriber,
      merchantWallet: merchant,
      planId,
      mint: 'PYUSD',
    });
    const tx = Transaction.from(Buffer.from(unsigned.transaction, 'base64'));
    expect(tx.feePayer?.toBase58()).toBe(subscriber);
    const expected = await cancelSubscriptionInstruction({ subscriber, plan, subscription });
    expect(tx.instructions.map(wire)).toEqual([wire(expected)]);
    expect(tx.instructions[0].data[0]).toBe(12); // cancel_subscription, not revoke_delegation (3)
  });

  describe('a subscription delegation on-chain', () => {
    const subscriber = Keypair.generate();
    let subscription: string;
    const charge = (amount = terms.amount): ChargeInput => ({
      chargeId: randomUUID(),
      subscriber: subscriber.publicKey.toBase58(),
      merchantWallet: merchant,
      planId,
      mint: 'PYUSD',
      amount,
    });

    const INIT_ID = 377_000_042n;
    /** The subscription as `subscribe` leaves it (`expiresAtTs` 0), or as a cancel does. */
    const writeDelegation = (expiresAtTs: bigint) =>
      accounts.subscription({
        merchant,
        planId,
        subscriber: subscriber.publicKey.toBase58(),
        terms,
        initId: INIT_ID,
        expiresAtTs,
        amountPulledInPeriod: 4_000_000n,
        currentPeriodStartTs: 1_790_100_000n,
      });

    beforeAll(async () => {
      const plan = await planPda(merchant, onchainPlanId(planId));
      subscription = await subscriptionPda(plan, subscriber.publicKey.toBase58());
      await accounts.authority(subscriber.publicKey.toBase58(), PYUSD, INIT_ID);
      await writeDelegation(0n);
      tc.chain.faucet({
        wallet: subscriber.publicKey.toBase58(),
        lamports: 1_000_000_000n,
        mint: 'PYUSD',
        amount: 50_000_000n,
      });
      await send(subscriber, [await approveAuthority(subscriber.publicKey, PYUSD)]);
      // The merchant's receiving account (its plan registration created it).
      tc.chain.faucet({ wallet: merchant, mint: 'PYUSD', amount: 1n });
    });

    it('decodes to the state written', async () => {
      const chain = { connection: adapter.connection, commitment: 'confirmed' as const };
      expect(
        await readProgramSubscription(chain, merchant, planId, subscriber.publicKey.toBase58()),
      ).toEqual({
        address: subscription,
        terms,
        amountPulledInPeriod: 4_000_000n,
        currentPeriodStartTs: 1_790_100_000n,
        expiresAtTs: 0n,
      });
      expect(
        await readProgramSubscription(
          chain,
          merchant,
          planId,
          Keypair.generate().publicKey.toBase58(),
        ),
      ).toBeNull();
    });

    it('what a subscribe left: the running subscription with the plan terms, bound to the authority as it is; withdrawn once cancelled, gone, or its authority rotated or closed', async () => {
      const wallet = subscriber.publicKey.toBase58();
      const stranger = Keypair.generate().publicKey.toBase58();
      const plan = {
        merchantWallet: merchant,
        planId,
        mint: 'PYUSD' as const,
        amount: terms.amount,
        periodHours: Number(terms.periodHours),
      };
      // The program keeps the terms: no approval to budget, and a pull is the plan's amount.
      expect(adapter.approval).toBeNull();
      expect(await adapter.pullAmount('PYUSD', terms.amount)).toBe(terms.amount);
      expect(await adapter.authorizationLeft(plan, wallet)).toEqual({
        address: subscription,
        approved: null,
      });
      expect(await adapter.authorizationLeft({ ...plan, amount: terms.amount - 1n }, wallet)).toBe(
        null,
      );
      expect(await adapter.authorizationLeft({ ...plan, periodHours: 24 }, wallet)).toBeNull();
      expect(await adapter.authorizationLeft(plan, stranger)).toBeNull();
      expect(await adapter.authorizationWithdrawn({ ...plan, subscriber: wallet })).toBe(false);
      expect(await adapter.authorizationWithdrawn({ ...plan, subscriber: stranger })).toBe(true);

      await writeDelegation(1_790_200_000n); // cancelled: it runs to the end of its period
      try {
        expect(await adapter.authorizationLeft(plan, wallet)).toBeNull();
        expect(await adapter.authorizationWithdrawn({ ...plan, subscriber: wallet })).toBe(true);
      } finally {
        await writeDelegation(0n);
      }

      // The authority re-initialised (init_id rotated) or closed: the subscription is bound to an
      // authority that is gone, so no pull can use it.
      for (const change of [
        () => accounts.authority(wallet, PYUSD, INIT_ID + 1n),
        async () => accounts.close(await subscriptionAuthorityPda(wallet, PYUSD)),
      ]) {
        await change();
        try {
          expect(await adapter.authorizationLeft(plan, wallet)).toBeNull();
          expect(await adapter.authorizationWithdrawn({ ...plan, subscriber: wallet })).toBe(true);
        } finally {
          await accounts.authority(wallet, PYUSD, INIT_ID);
        }
      }
      expect(await adapter.authorizationLeft(plan, wallet)).not.toBeNull();
    });

    it('a charge is transfer_subscription signed by the service key, with the attempt id in a memo', async () => {
      const input = charge();
      const signed = await adapter.signCharge(input);
      const tx = Transaction.from(Buffer.from(signed.transaction, 'base64'));
      expect(tx.feePayer?.toBase58()).toBe(serviceKey.publicKey.toBase58());
      expect(tx.verifySignatures()).toBe(true);
      const plan = await planPda(merchant, onchainPlanId(planId));
      const receiverAta = getAssociatedTokenAddressSync(
        new PublicKey(PYUSD),
        new PublicKey(merchant),
        true,
        TOKEN_2022_PROGRAM_ID,
      ).toBase58();
      const subscriberAta = getAssociatedTokenAddressSync(
        new PublicKey(PYUSD),
        subscriber.publicKey,
        true,
        TOKEN_2022_PROGRAM_ID,
      ).toBase58();
      const expected = await transferSubscriptionInstruction({
        caller: serviceKey.publicKey.toBase58(),
        subscriber: subscriber.publicKey.toBase58(),
        subscriberAta,
        plan,
        subscription,
        receiverAta,
        mint: PYUSD,
        tokenProgram: TOKEN_2022,
        amount: terms.amount,
      });
      // The compute budget, the memo and the pull, nothing else: never the merchant's account,
      // at the service's cost. Localnet cannot run the program, so its simulation fails and the
      // limit is the runtime's default for two instructions, stated (the fee stays exact); no
      // price, as localnet's recent fees are 0.
      expect(tx.instructions).toHaveLength(3);
      const [budget, memo, pull] = tx.instructions;
      expect(budget.programId.toBase58()).toBe('ComputeBudget111111111111111111111111111111');
      expect(budget.data).toEqual(Buffer.from([2, ...u32(400_000)]));
      expect(memo.data.toString()).toBe(`charge:v1:${planId}:${input.chargeId}`);
      expect(wire(pull)).toEqual(wire(expected));
      expect(writable(pull)).toEqual(expect.arrayContaining(writable(expected)));
    });

    describe('refuses a pull the program would refuse, before signing, from the accounts it checks', () => {
      const wallet = () => subscriber.publicKey.toBase58();
      afterEach(async () => {
        // Back to a running subscription, its authority and the plan as registered.
        await accounts.authority(wallet(), PYUSD, INIT_ID);
        await writeDelegation(0n);
        await accounts.plan({
          merchant,
          planId,
          mint: PYUSD,
          terms,
          pullers: [serviceKey.publicKey.toBase58()],
        });
      });

      it('signs while the subscription runs, its authority is the one it was bound to, and the plan lets the service pull', async () => {
        await expect(adapter.signCharge(charge())).resolves.toMatchObject({
          signature: expect.any(String) as string,
        });
      });

      it('a cancelled subscription (its expiry set): authorization_gone', async () => {
        await writeDelegation(1_790_200_000n);
        await expect(adapter.signCharge(charge())).rejects.toMatchObject({
          reason: 'authorization_gone',
          message: /cancelled/,
        });
      });

      it('an authority re-initialised since the subscribe (init_id rotated): authorization_gone', async () => {
        await accounts.authority(wallet(), PYUSD, INIT_ID + 1n);
        await expect(adapter.signCharge(charge())).rejects.toMatchObject({
          reason: 'authorization_gone',
          message: /re-initialised/,
        });
      });

      it('an authority closed (revoke_subscription_authority): authorization_gone', async () => {
        accounts.close(await subscriptionAuthorityPda(wallet(), PYUSD));
        await expect(adapter.signCharge(charge())).rejects.toMatchObject({
          reason: 'authorization_gone',
          message: /authority for the mint is closed/,
        });
      });

      it("a plan its owner updated on-chain to drop the service key: transient (not the customer's doing)", async () => {
        const other = Keypair.generate().publicKey.toBase58();
        await accounts.plan({ merchant, planId, mint: PYUSD, terms, pullers: [other] });
        await expect(adapter.signCharge(charge())).rejects.toMatchObject({
          reason: 'transient',
          message: /removed the service key/,
        });
      });

      it("the token account's delegation to the authority revoked: authorization_gone", async () => {
        const ata = getAssociatedTokenAddressSync(
          new PublicKey(PYUSD),
          subscriber.publicKey,
          true,
          TOKEN_2022_PROGRAM_ID,
        );
        await send(subscriber, [
          createRevokeInstruction(ata, subscriber.publicKey, [], TOKEN_2022_PROGRAM_ID),
        ]);
        try {
          await expect(adapter.signCharge(charge())).rejects.toMatchObject({
            reason: 'authorization_gone',
            message: /revoked or replaced its token account's delegation/,
          });
        } finally {
          await send(subscriber, [await approveAuthority(subscriber.publicKey, PYUSD)]);
        }
      });

      it('a plan deleted and created again with other terms (a ghost), or ended: authorization_gone', async () => {
        const again = { ...terms, createdAt: terms.createdAt + 1n };
        await accounts.plan({
          merchant,
          planId,
          mint: PYUSD,
          terms: again,
          pullers: [serviceKey.publicKey.toBase58()],
        });
        await expect(adapter.signCharge(charge())).rejects.toMatchObject({
          reason: 'authorization_gone',
          message: /created again with other terms/,
        });
        await accounts.plan({
          merchant,
          planId,
          mint: PYUSD,
          terms,
          pullers: [serviceKey.publicKey.toBase58()],
          endTs: 1_000n,
          status: 'Sunset',
        });
        await expect(adapter.signCharge(charge())).rejects.toMatchObject({
          reason: 'authorization_gone',
          message: /the plan ended at 1000/,
        });
      });

      it("a period whose allowance someone else already pulled: transient, until the next period (not the customer's doing)", async () => {
        const within = (amountPulledInPeriod: bigint, startedSecondsAgo: number) =>
          accounts.subscription({
            merchant,
            planId,
            subscriber: wallet(),
            terms,
            initId: INIT_ID,
            amountPulledInPeriod,
            currentPeriodStartTs: BigInt(tc.chain.now() - startedSecondsAgo),
          });
        // The plan's owner pulled the whole period a day into it.
        await within(terms.amount, 86_400);
        await expect(adapter.signCharge(charge())).rejects.toMatchObject({
          reason: 'transient',
          message: /this period's allowance is already pulled \(9990000 of 9990000 since/,
        });
        // Nothing pulled yet in the period: the pull fits.
        await within(0n, 86_400);
        await expect(adapter.signCharge(charge())).resolves.toMatchObject({
          signature: expect.any(String) as string,
        });
        // The period has run its length: the program starts the next one afresh.
        await within(terms.amount, 720 * 3600);
        await expect(adapter.signCharge(charge())).resolves.toMatchObject({
          signature: expect.any(String) as string,
        });
      });

      it('a plan closed by its owner: authorization_gone', async () => {
        accounts.close(await planPda(merchant, onchainPlanId(planId)));
        await expect(adapter.signCharge(charge())).rejects.toMatchObject({
          reason: 'authorization_gone',
          message: /plan account is gone/,
        });
      });
    });

    it('classifies what it can before sending, and the program refusals after', async () => {
      await expect(adapter.signCharge(charge(60_000_000n))).rejects.toMatchObject({
        reason: 'insufficient_funds',
      });
      const stranger: ChargeInput = {
        ...charge(),
        subscriber: Keypair.generate().publicKey.toBase58(),
      };
      await expect(adapter.signCharge(stranger)).rejects.toMatchObject({
        reason: 'authorization_gone',
      });
      // SUBSCRIPTION_CANCELLED (508), DELEGATION_EXPIRED (128), STALE_SUBSCRIPTION_AUTHORITY (136):
      // the customer's authorisation is over.
      for (const code of [508, 128, 136]) {
        expect(
          await adapter.classifyChargeFailure(
            charge(),
            `{"InstructionError":[1,{"Custom":${code}}]}`,
          ),
        ).toBe('authorization_gone');
      }
      // As a preflight refusal reads (web3.js SendTransactionError): the hex form.
      expect(
        await adapter.classifyChargeFailure(
          charge(),
          'Transaction simulation failed: Error processing Instruction 1: custom program error: 0x1fc',
        ),
      ).toBe('authorization_gone');
      // Already pulled this period, or the service key not a puller: not the customer's doing.
      for (const code of [300, 130]) {
        expect(
          await adapter.classifyChargeFailure(
            charge(),
            `{"InstructionError":[1,{"Custom":${code}}]}`,
          ),
        ).toBe('transient');
      }
      // PERIOD_NOT_ELAPSED (401) is not the customer's doing: retry later.
      expect(
        await adapter.classifyChargeFailure(charge(), '{"InstructionError":[1,{"Custom":401}]}'),
      ).toBe('transient');
    });
  });
  it("a pull of a hooked mint forwards the hook's extra accounts, resolved for the transfer the program makes (the subscriber's authority is its delegate)", async () => {
    // PYUSD configured as localnet's HOOKED test mint, its hook program deployed (the Memo
    // program's code at the hook's address) so the issuer-side check lets the pull be signed.
    const HOOKED = testMint('HOOKED')!.address;
    const memo = tc.chain.getAccount('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr')!;
    tc.chain.setAccount(ABSENT_HOOK_PROGRAM.toBase58(), {
      lamports: memo.lamports,
      owner: memo.owner,
      data: memo.data,
      executable: true,
    });
    const hooked = new RpcChainAdapter(connection, {
      cluster: 'localnet',
      scheme: 'program',
      commitment: 'confirmed',
      mints: mintTable('localnet').map((m) =>
        m.symbol === 'PYUSD' ? { ...m, address: HOOKED } : m,
      ),
      serviceKey,
      approvalPeriods: 12,
    });
    const hookedPlan = randomUUID();
    const subscriber = Keypair.generate();
    const wallet = subscriber.publicKey.toBase58();
    await accounts.plan({
      merchant,
      planId: hookedPlan,
      mint: HOOKED,
      terms,
      pullers: [serviceKey.publicKey.toBase58()],
    });
    await accounts.authority(wallet, HOOKED, 390_000_001n);
    await accounts.subscription({
      merchant,
      planId: hookedPlan,
      subscriber: wallet,
      terms,
      initId: 390_000_001n,
    });
    tc.chain.faucet({ wallet, lamports: 1_000_000_000n, mint: HOOKED, amount: 50_000_000n });
    tc.chain.faucet({ wallet: merchant, mint: HOOKED, amount: 1n });
    await send(subscriber, [await approveAuthority(subscriber.publicKey, HOOKED)]);

    const signed = await hooked.signCharge({
      chargeId: randomUUID(),
      subscriber: wallet,
      merchantWallet: merchant,
      planId: hookedPlan,
      mint: 'PYUSD',
      amount: terms.amount,
    });
    const pull = Transaction.from(Buffer.from(signed.transaction, 'base64')).instructions.at(-1)!;
    expect(pull.data[0]).toBe(10); // transfer_subscription
    const ata = (owner: string) =>
      getAssociatedTokenAddressSync(
        new PublicKey(HOOKED),
        new PublicKey(owner),
        true,
        TOKEN_2022_PROGRAM_ID,
      );
    const extra = await new TransferHooks(connection, 'confirmed').extraAccounts(
      await hooked.mint('PYUSD'),
      {
        source: ata(wallet),
        destination: ata(merchant),
        authority: new PublicKey(await subscriptionAuthorityPda(wallet, HOOKED)),
        amount: terms.amount,
      },
    );
    expect(extra.length).toBeGreaterThan(0);
    // The pull's ten accounts, then exactly the hook's (in a compiled message a key's writable
    // flag is the union over the transaction, so addresses and order are what is compared).
    expect(pull.keys).toHaveLength(10 + extra.length);
    expect(pull.keys.slice(10).map((k) => k.pubkey.toBase58())).toEqual(
      extra.map((k) => k.pubkey.toBase58()),
    );

    // A hook whose validation list names the service key (a signer of the pull: it would stay
    // one inside the hook's call), or asks any account to sign: refused, nothing signed.
    const validation = getExtraAccountMetaAddress(new PublicKey(HOOKED), ABSENT_HOOK_PROGRAM);
    const listing = (key: PublicKey, signer: boolean) => {
      const meta = Buffer.concat([
        Buffer.from([0]),
        key.toBuffer(),
        Buffer.from([signer ? 1 : 0, 1]),
      ]);
      const value = Buffer.concat([Buffer.from([1, 0, 0, 0]), meta]);
      const length = Buffer.alloc(4);
      length.writeUInt32LE(value.length);
      const execute = Buffer.from([0x69, 0x25, 0x65, 0xc5, 0x4b, 0xfb, 0x66, 0x1a]);
      tc.chain.setAccount(validation.toBase58(), {
        lamports: 10_000_000n,
        owner: ABSENT_HOOK_PROGRAM.toBase58(),
        data: new Uint8Array(Buffer.concat([execute, length, value])),
      });
    };
    const original = tc.chain.getAccount(validation.toBase58())!;
    const charge = () =>
      hooked.signCharge({
        chargeId: randomUUID(),
        subscriber: wallet,
        merchantWallet: merchant,
        planId: hookedPlan,
        mint: 'PYUSD',
        amount: terms.amount,
      });
    try {
      listing(serviceKey.publicKey, false);
      await expect(charge()).rejects.toMatchObject({
        reason: 'transfer_hook_failed',
        message: `The mint's transfer hook asks for ${serviceKey.publicKey.toBase58()}, a key that signs the transfer: refused, nothing was built`,
      });
      listing(Keypair.generate().publicKey, true);
      await expect(charge()).rejects.toMatchObject({
        reason: 'transfer_hook_failed',
        message: / as a signer: refused, nothing was built$/,
      });
    } finally {
      tc.chain.setAccount(validation.toBase58(), {
        lamports: original.lamports,
        owner: original.owner,
        data: original.data,
      });
    }
  });
});
