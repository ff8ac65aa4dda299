import { address, createNoopSigner, type Instruction, AccountRole } from '@solana/kit';
import {
  AccountDiscriminator,
  getInitSubscriptionAuthorityOverlayInstructionAsync,
  getPlanEncoder,
  getRevokeSubscriptionOverlayInstruction,
  getSubscribeOverlayInstructionAsync,
  getSubscriptionAuthorityEncoder,
  getSubscriptionDelegationEncoder,
  getTransferSubscriptionOverlayInstructionAsync,
  MAX_PLAN_DESTINATIONS,
  MAX_PLAN_PULLERS,
  SUBSCRIPTIONS_PROGRAM_ADDRESS,
  ZERO_ADDRESS,
} from '@solana/subscriptions';
import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
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
import { randomUUID } from 'node:crypto';
import { classify } from '../src/common/filters/all-exceptions.filter';
import { ChargeInput, PlanTermsMismatchError } from '../src/solana/chain.port';
import { mintTable } from '../src/solana/mints';
import { RpcChainAdapter } from '../src/solana/rpc-chain.adapter';
import {
  createPlanInstruction,
  onchainPlanId,
  planPda,
  subscriptionAuthorityPda,
  subscriptionPda,
} from '../src/solana/subscriptions-program';
import { startTestChain, TestChain } from './helpers/test-chain';

/**
 * The Subscriptions-program scheme against localnet. The program itself cannot run here (its
 * binary is not available offline), so its accounts are written onto the chain with the official
 * codecs, and the adapter's readers and builders are checked against them over JSON-RPC.
 */
describe('Subscriptions-program scheme on localnet', () => {
  let tc: TestChain;
  let connection: Connection;
  let adapter: RpcChainAdapter;
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
  const pad = (items: string[], size: number) =>
    [...items, ...Array.from({ length: size - items.length }, () => ZERO_ADDRESS)].map((a) =>
      address(a),
    );

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
    // The plan as create_plan would have left it.
    const plan = await planPda(merchant, onchainPlanId(planId));
    tc.chain.setAccount(plan, {
      lamports: 10_000_000n,
      owner: SUBSCRIPTIONS_PROGRAM_ADDRESS,
      data: new Uint8Array(
        getPlanEncoder().encode({
          discriminator: AccountDiscriminator.Plan,
          owner: address(merchant),
          bump: 255,
          status: 1,
          data: {
            planId: onchainPlanId(planId),
            mint: address(PYUSD),
            terms,
            endTs: 0n,
            destinations: pad([merchant], MAX_PLAN_DESTINATIONS),
            pullers: pad([serviceKey.publicKey.toBase58()], MAX_PLAN_PULLERS),
            metadataUri: '',
          },
        }),
      ),
    });
  });
  afterAll(async () => {
    await tc.close();
  });

  // Decoded from a compiled transaction, an account's writable flag is the message's (the union
  // over its instructions, and the fee payer is always writable), so it can only be at least the
  // official one; program, accounts in order, signers and data must match exactly. (The builders
  // themselves are compared flag for flag in subscriptions-program.spec.ts.)
  const wire = (ix: TransactionInstruction) => ({
    programId: ix.programId.toBase58(),
    keys: ix.keys.map((k) => [k.pubkey.toBase58(), k.isSigner]),
    data: ix.data.toString('hex'),
    writable: ix.keys.filter((k) => k.isWritable).map((k) => k.pubkey.toBase58()),
  });
  const officialWire = (ix: Instruction) => {
    const writable = (ix.accounts ?? [])
      .filter((a) => a.role === AccountRole.WRITABLE || a.role === AccountRole.WRITABLE_SIGNER)
      .map((a) => a.address as string);
    return {
      programId: ix.programAddress as string,
      keys: (ix.accounts ?? []).map((a) => [
        a.address as string,
        a.role === AccountRole.READONLY_SIGNER || a.role === AccountRole.WRITABLE_SIGNER,
      ]),
      data: Buffer.from(ix.data ?? []).toString('hex'),
      writable: expect.arrayContaining(writable) as unknown as string[],
    };
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

  it('subscribe reads the live plan terms from the chain; initializes the authority only when missing', async () => {
    const subscriber = Keypair.generate().publicKey.toBase58();
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
    const signer = createNoopSigner(address(subscriber));
    const subscribeWith = (initId: bigint) =>
      getSubscribeOverlayInstructionAsync({
        subscriber: signer,
        merchant: address(merchant),
        planId: onchainPlanId(planId),
        tokenMint: address(PYUSD),
        expectedAmount: terms.amount,
        expectedPeriodHours: terms.periodHours,
        expectedCreatedAt: terms.createdAt,
        expectedSubscriptionAuthorityInitId: initId,
      });

    const first = await adapter.buildSubscribe(input);
    expect(instructions(first.transaction).map(wire)).toEqual([
      officialWire(
        await getInitSubscriptionAuthorityOverlayInstructionAsync({
          owner: signer,
          tokenMint: address(PYUSD),
          tokenProgram: address(TOKEN_2022),
          userAta: address(subscriberAta),
        }),
      ),
      officialWire(await subscribeWith(0n)),
    ]);

    // With an authority on-chain (init_id 7), subscribe alone, consenting to that init_id.
    const authority = await subscriptionAuthorityPda(subscriber, PYUSD);
    tc.chain.setAccount(authority, {
      lamports: 2_000_000n,
      owner: SUBSCRIPTIONS_PROGRAM_ADDRESS,
      data: new Uint8Array(
        getSubscriptionAuthorityEncoder().encode({
          discriminator: AccountDiscriminator.SubscriptionAuthority,
          user: address(subscriber),
          tokenMint: address(PYUSD),
          payer: address(subscriber),
          bump: 254,
          initId: 7n,
        }),
      ),
    });
    const again = await adapter.buildSubscribe(input);
    expect(instructions(again.transaction).map(wire)).toEqual([
      officialWire(await subscribeWith(7n)),
    ]);
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
      const plan = await planPda(merchant, onchainPlanId(id));
      const named = (list: unknown) =>
        (list as string[]).map((a) =>
          a === 'SERVICE' ? serviceKey.publicKey.toBase58() : a === 'MERCHANT' ? merchant : a,
        );
      tc.chain.setAccount(plan, {
        lamports: 10_000_000n,
        owner: SUBSCRIPTIONS_PROGRAM_ADDRESS,
        data: new Uint8Array(
          getPlanEncoder().encode({
            discriminator: AccountDiscriminator.Plan,
            owner: address(merchant),
            bump: 255,
            status: 1,
            data: {
              planId: onchainPlanId(id),
              mint: address((change.mint as string | undefined) ?? PYUSD),
              terms: {
                ...terms,
                ...(change.amount !== undefined ? { amount: change.amount as bigint } : {}),
                ...(change.periodHours !== undefined
                  ? { periodHours: change.periodHours as bigint }
                  : {}),
              },
              endTs: (change.endTs as bigint | undefined) ?? 0n,
              destinations: pad(named(change.destinations ?? [merchant]), MAX_PLAN_DESTINATIONS),
              pullers: pad(
                named(change.pullers ?? [serviceKey.publicKey.toBase58()]),
                MAX_PLAN_PULLERS,
              ),
              metadataUri: '',
            },
          }),
        ),
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

  it('revoke is the subscriber-signed revoke of that subscription (the official instruction)', async () => {
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
    expect(tx.instructions.map(wire)).toEqual([
      officialWire(
        getRevokeSubscriptionOverlayInstruction({
          authority: createNoopSigner(address(subscriber)),
          planPda: address(plan),
          subscriptionPda: address(subscription),
        }),
      ),
    ]);
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

    /** The delegation as `subscribe` leaves it (`expiresAtTs` 0), or as a cancel does. */
    const writeDelegation = async (expiresAtTs: bigint) => {
      const plan = await planPda(merchant, onchainPlanId(planId));
      tc.chain.setAccount(subscription, {
        lamports: 2_000_000n,
        owner: SUBSCRIPTIONS_PROGRAM_ADDRESS,
        data: new Uint8Array(
          getSubscriptionDelegationEncoder().encode({
            header: {
              discriminator: AccountDiscriminator.SubscriptionDelegation,
              version: 1,
              bump: 253,
              delegator: address(subscriber.publicKey.toBase58()),
              delegatee: address(plan),
              payer: address(subscriber.publicKey.toBase58()),
              initId: 0n,
            },
            terms,
            amountPulledInPeriod: 4_000_000n,
            currentPeriodStartTs: 1_790_100_000n,
            expiresAtTs,
          }),
        ),
      });
    };

    beforeAll(async () => {
      const plan = await planPda(merchant, onchainPlanId(planId));
      subscription = await subscriptionPda(plan, subscriber.publicKey.toBase58());
      await writeDelegation(0n);
      tc.chain.faucet({
        wallet: subscriber.publicKey.toBase58(),
        lamports: 1_000_000_000n,
        mint: 'PYUSD',
        amount: 50_000_000n,
      });
      // The merchant's receiving account (its plan registration created it).
      tc.chain.faucet({ wallet: merchant, mint: 'PYUSD', amount: 1n });
    });

    it('decodes to the state written', async () => {
      expect(
        await adapter.readProgramSubscription(merchant, planId, subscriber.publicKey.toBase58()),
      ).toEqual({
        address: subscription,
        terms,
        amountPulledInPeriod: 4_000_000n,
        currentPeriodStartTs: 1_790_100_000n,
        expiresAtTs: 0n,
      });
      expect(
        await adapter.readProgramSubscription(
          merchant,
          planId,
          Keypair.generate().publicKey.toBase58(),
        ),
      ).toBeNull();
    });

    it('what a subscribe left: the running subscription with the plan terms; withdrawn once cancelled or gone', async () => {
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
      const official = await getTransferSubscriptionOverlayInstructionAsync({
        caller: createNoopSigner(address(serviceKey.publicKey.toBase58())),
        delegator: address(subscriber.publicKey.toBase58()),
        planPda: address(plan),
        subscriptionPda: address(subscription),
        receiverAta: address(receiverAta),
        tokenMint: address(PYUSD),
        tokenProgram: address(TOKEN_2022),
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
      expect(wire(pull)).toEqual(officialWire(official));
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
      // SUBSCRIPTION_CANCELLED (508), DELEGATION_EXPIRED (128): the customer's authorisation is over.
      for (const code of [508, 128]) {
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
});
