import { AccountRole, address, createNoopSigner, type Instruction } from '@solana/kit';
import {
  findPlanPda,
  findSubscriptionDelegationPda,
  getCreatePlanOverlayInstructionAsync,
  getInitSubscriptionAuthorityOverlayInstructionAsync,
  getPlanEncoder,
  getSubscribeOverlayInstructionAsync,
  getTransferSubscriptionOverlayInstructionAsync,
  MAX_PLAN_DESTINATIONS,
  MAX_PLAN_PULLERS,
  SUBSCRIPTIONS_PROGRAM_ADDRESS,
  ZERO_ADDRESS,
} from '@solana/subscriptions';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { Keypair, PublicKey, TransactionInstruction } from '@solana/web3.js';
import {
  createPlanInstruction,
  decodePlanAccount,
  onchainPlanId,
  planPda,
  revokeSubscriptionInstruction,
  subscribeInstructions,
  subscriptionPda,
  toWeb3Instruction,
  transferSubscriptionInstruction,
} from './subscriptions-program';
import vectors from './subscriptions-program.vectors.json';

const pad = <T>(items: T[], size: number): T[] => [
  ...items,
  ...Array.from({ length: size - items.length }, () => ZERO_ADDRESS as T),
];
const key = () => Keypair.generate().publicKey.toBase58();

/** Program, every account with its role, and the data: the whole wire form of an instruction. */
function wire(ix: TransactionInstruction) {
  return {
    programId: ix.programId.toBase58(),
    keys: ix.keys.map((k) => [k.pubkey.toBase58(), k.isSigner, k.isWritable]),
    data: ix.data.toString('hex'),
  };
}

function officialWire(ix: Instruction) {
  const signer = (r: AccountRole) =>
    r === AccountRole.READONLY_SIGNER || r === AccountRole.WRITABLE_SIGNER;
  const writable = (r: AccountRole) =>
    r === AccountRole.WRITABLE || r === AccountRole.WRITABLE_SIGNER;
  return {
    programId: ix.programAddress as string,
    keys: (ix.accounts ?? []).map((a) => [a.address as string, signer(a.role), writable(a.role)]),
    data: Buffer.from(ix.data ?? []).toString('hex'),
  };
}

/**
 * Golden vectors: the exact wire form (program, accounts with signer/writable flags, data hex)
 * of each instruction for fixed inputs, written down once from the official client's output.
 * Our builders wrap that client, so comparing the two only proves the wrapping; the vectors
 * also catch a client upgrade that changes bytes on the wire.
 */
describe('Subscriptions program instructions (golden vectors)', () => {
  const v = vectors.inputs;
  const planId = onchainPlanId(v.planUuid);
  const terms = { amount: 5_000_000n, periodHours: 24n, createdAt: 1_790_000_000n };

  it('derives the PDAs of the vectors', async () => {
    expect(await planPda(v.merchant, planId)).toBe(v.plan);
    expect(await subscriptionPda(v.plan, v.subscriber)).toBe(v.subscription);
  });

  it('create_plan', async () => {
    const ix = await createPlanInstruction({
      merchant: v.merchant,
      planId,
      mint: v.mint,
      tokenProgram: TOKEN_PROGRAM_ID.toBase58(),
      amount: 9_990_000n,
      periodHours: 720,
      puller: v.service,
    });
    expect(wire(ix)).toEqual(vectors.createPlan);
  });

  it('initialize_subscription_authority + subscribe, and subscribe alone', async () => {
    const input = {
      subscriber: v.subscriber,
      merchant: v.merchant,
      planId,
      mint: v.mint,
      tokenProgram: TOKEN_2022_PROGRAM_ID.toBase58(),
      subscriberAta: v.subscriberAta,
      terms,
    };
    expect((await subscribeInstructions({ ...input, authorityInitId: null })).map(wire)).toEqual(
      vectors.subscribeWithInit,
    );
    expect((await subscribeInstructions({ ...input, authorityInitId: 3n })).map(wire)).toEqual(
      vectors.subscribeExisting,
    );
  });

  it('transfer_subscription', async () => {
    const ix = await transferSubscriptionInstruction({
      caller: v.service,
      subscriber: v.subscriber,
      plan: v.plan,
      subscription: v.subscription,
      receiverAta: v.receiverAta,
      mint: v.mint,
      tokenProgram: TOKEN_PROGRAM_ID.toBase58(),
      amount: 5_000_000n,
    });
    expect(wire(ix)).toEqual(vectors.transferSubscription);
  });

  it('revoke of a subscription', () => {
    const ix = revokeSubscriptionInstruction({
      subscriber: v.subscriber,
      plan: v.plan,
      subscription: v.subscription,
    });
    expect(wire(ix)).toEqual(vectors.revokeSubscription);
  });
});

describe('Subscriptions program builders (official client)', () => {
  const merchant = key();
  const subscriber = key();
  const service = key();
  const mint = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
  const planId = onchainPlanId('0b5f6a0e-12c4-4c1e-9f3a-8d2b7c6e5f40');

  it('derives the on-chain plan id from the first 8 bytes of the plan UUID', () => {
    expect(planId).toBe(0x0b5f6a0e12c44c1en);
    expect(() => onchainPlanId('not-a-uuid')).toThrow(RangeError);
  });

  it('create_plan is what the official client builds, signed by the merchant', async () => {
    const ours = await createPlanInstruction({
      merchant,
      planId,
      mint,
      tokenProgram: TOKEN_PROGRAM_ID.toBase58(),
      amount: 9_990_000n,
      periodHours: 720,
      puller: service,
    });
    const official = await getCreatePlanOverlayInstructionAsync({
      owner: createNoopSigner(address(merchant)),
      planId,
      mint: address(mint),
      tokenProgram: address(TOKEN_PROGRAM_ID.toBase58()),
      amount: 9_990_000n,
      periodHours: 720,
      endTs: 0,
      destinations: [address(merchant)],
      pullers: [address(service)],
      metadataUri: '',
    });
    expect(wire(ours)).toEqual(officialWire(official));
    expect(ours.programId.toBase58()).toBe(SUBSCRIPTIONS_PROGRAM_ADDRESS);
    const [pda] = await findPlanPda({ owner: address(merchant), planId });
    expect(await planPda(merchant, planId)).toBe(pda);
    expect(ours.keys.map((k) => k.pubkey.toBase58())).toContain(pda);
    expect(ours.keys.find((k) => k.pubkey.toBase58() === merchant)?.isSigner).toBe(true);
  });

  it('initialize_subscription_authority + subscribe equal the official client', async () => {
    const subscriberAta = key();
    const terms = { amount: 5_000_000n, periodHours: 24n, createdAt: 1_790_000_000n };
    const ours = await subscribeInstructions({
      subscriber,
      merchant,
      planId,
      mint,
      tokenProgram: TOKEN_2022_PROGRAM_ID.toBase58(),
      subscriberAta,
      terms,
      authorityInitId: null,
    });
    const signer = createNoopSigner(address(subscriber));
    const init = await getInitSubscriptionAuthorityOverlayInstructionAsync({
      owner: signer,
      tokenMint: address(mint),
      tokenProgram: address(TOKEN_2022_PROGRAM_ID.toBase58()),
      userAta: address(subscriberAta),
    });
    const subscribe = await getSubscribeOverlayInstructionAsync({
      subscriber: signer,
      merchant: address(merchant),
      planId,
      tokenMint: address(mint),
      expectedAmount: terms.amount,
      expectedPeriodHours: terms.periodHours,
      expectedCreatedAt: terms.createdAt,
      expectedSubscriptionAuthorityInitId: 0n,
    });
    expect(ours.map(wire)).toEqual([officialWire(init), officialWire(subscribe)]);

    // An existing authority: no init, and its init_id is the one consented to.
    const again = await subscribeInstructions({
      subscriber,
      merchant,
      planId,
      mint,
      tokenProgram: TOKEN_2022_PROGRAM_ID.toBase58(),
      subscriberAta,
      terms,
      authorityInitId: 3n,
    });
    const official = await getSubscribeOverlayInstructionAsync({
      subscriber: signer,
      merchant: address(merchant),
      planId,
      tokenMint: address(mint),
      expectedAmount: terms.amount,
      expectedPeriodHours: terms.periodHours,
      expectedCreatedAt: terms.createdAt,
      expectedSubscriptionAuthorityInitId: 3n,
    });
    expect(again.map(wire)).toEqual([officialWire(official)]);
  });

  it('transfer_subscription equals the official client; PDAs match', async () => {
    const plan = await planPda(merchant, planId);
    const subscription = await subscriptionPda(plan, subscriber);
    const [expected] = await findSubscriptionDelegationPda({
      planPda: address(plan),
      subscriber: address(subscriber),
    });
    expect(subscription).toBe(expected);
    const receiverAta = key();
    const ours = await transferSubscriptionInstruction({
      caller: service,
      subscriber,
      plan,
      subscription,
      receiverAta,
      mint,
      tokenProgram: TOKEN_PROGRAM_ID.toBase58(),
      amount: 5_000_000n,
    });
    const official = await getTransferSubscriptionOverlayInstructionAsync({
      caller: createNoopSigner(address(service)),
      delegator: address(subscriber),
      planPda: address(plan),
      subscriptionPda: address(subscription),
      receiverAta: address(receiverAta),
      tokenMint: address(mint),
      tokenProgram: address(TOKEN_PROGRAM_ID.toBase58()),
      amount: 5_000_000n,
    });
    expect(wire(ours)).toEqual(officialWire(official));
    expect(ours.keys.find((k) => k.pubkey.toBase58() === service)).toMatchObject({
      isSigner: true,
    });
  });

  it('maps each kit account role to web3.js signer and writable flags', () => {
    const accounts = [
      AccountRole.READONLY,
      AccountRole.WRITABLE,
      AccountRole.READONLY_SIGNER,
      AccountRole.WRITABLE_SIGNER,
    ].map((role) => ({ address: address(key()), role }));
    const ix = toWeb3Instruction({
      programAddress: address(SUBSCRIPTIONS_PROGRAM_ADDRESS),
      accounts,
      data: new Uint8Array([1, 2, 3]),
    });
    expect(ix.keys.map((k) => [k.isSigner, k.isWritable])).toEqual([
      [false, false],
      [false, true],
      [true, false],
      [true, true],
    ]);
    expect([...ix.data]).toEqual([1, 2, 3]);
  });

  it('decodes a Plan account encoded by the official codec', async () => {
    const plan = await planPda(merchant, planId);
    const data = getPlanEncoder().encode({
      discriminator: 1,
      owner: address(merchant),
      bump: 254,
      status: 1,
      data: {
        planId,
        mint: address(mint),
        terms: { amount: 9_990_000n, periodHours: 720n, createdAt: 1_790_000_000n },
        endTs: 0n,
        // Fixed-size on-chain arrays, padded with the zero address.
        destinations: pad([address(merchant)], MAX_PLAN_DESTINATIONS),
        pullers: pad([address(service)], MAX_PLAN_PULLERS),
        metadataUri: '',
      },
    });
    const decoded = decodePlanAccount(plan, {
      data: Buffer.from(data),
      executable: false,
      lamports: 1_000_000,
      owner: new PublicKey(SUBSCRIPTIONS_PROGRAM_ADDRESS),
    });
    expect(decoded.owner).toBe(merchant);
    expect(decoded.data.planId).toBe(planId);
    expect(decoded.data.terms).toEqual({
      amount: 9_990_000n,
      periodHours: 720n,
      createdAt: 1_790_000_000n,
    });
    expect(decoded.data.pullers.slice(0, 1)).toEqual([service]);
  });
});
