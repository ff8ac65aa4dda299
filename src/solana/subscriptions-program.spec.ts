import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AccountRole, address } from '@solana/kit';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { Keypair, PublicKey, TransactionInstruction } from '@solana/web3.js';
import {
  AccountDiscriminator,
  getPlanEncoder,
  getSubscriptionAuthorityEncoder,
  getSubscriptionDelegationEncoder,
  SUBSCRIPTIONS_PROGRAM_ADDRESS,
} from './subscriptions-client/generated';
import {
  cancelSubscriptionInstruction,
  createPlanInstruction,
  decodeAuthorityAccount,
  decodePlanAccount,
  decodeSubscriptionAccount,
  initAuthorityInstruction,
  MAX_PLAN_DESTINATIONS,
  MAX_PLAN_PULLERS,
  onchainPlanId,
  padAddresses,
  planPda,
  resumeSubscriptionInstruction,
  revokeAuthorityInstruction,
  subscribeInstruction,
  subscriptionAuthorityPda,
  subscriptionPda,
  toWeb3Instruction,
  transferSubscriptionInstruction,
  updatePlanInstruction,
} from './subscriptions-program';
import vectors from './subscriptions-program.vectors.json';

const key = () => Keypair.generate().publicKey.toBase58();

/** Program, every account with its role, and the data: the whole wire form of an instruction. */
function wire(ix: TransactionInstruction) {
  return {
    programId: ix.programId.toBase58(),
    keys: ix.keys.map((k) => [k.pubkey.toBase58(), k.isSigner, k.isWritable]),
    data: ix.data.toString('hex'),
  };
}

const v = vectors.inputs;
const planId = onchainPlanId(v.planUuid);
const terms = { amount: 5_000_000n, periodHours: 24n, createdAt: 1_790_000_000n };
const t22 = TOKEN_2022_PROGRAM_ID.toBase58();

/** Every instruction the service builds, for the fixed inputs of the vectors file. */
const BUILT: Record<string, () => Promise<TransactionInstruction>> = {
  createPlan: () =>
    createPlanInstruction({
      merchant: v.merchant,
      planId,
      mint: v.mint,
      tokenProgram: TOKEN_PROGRAM_ID.toBase58(),
      amount: 9_990_000n,
      periodHours: 720,
      puller: v.service,
    }),
  updatePlan: () =>
    updatePlanInstruction({
      merchant: v.merchant,
      plan: v.plan,
      status: 'Active',
      endTs: 0n,
      pullers: [v.service, v.nextService],
    }),
  initAuthority: () =>
    initAuthorityInstruction({
      subscriber: v.subscriber,
      mint: v.mint,
      tokenProgram: t22,
      subscriberAta: v.subscriberAta,
    }),
  subscribe: () =>
    subscribeInstruction({
      subscriber: v.subscriber,
      merchant: v.merchant,
      planId,
      mint: v.mint,
      terms,
      authorityInitId: 412_345_678n,
    }),
  transferSubscription: () =>
    transferSubscriptionInstruction({
      caller: v.service,
      subscriber: v.subscriber,
      subscriberAta: v.subscriberAta,
      plan: v.plan,
      subscription: v.subscription,
      receiverAta: v.receiverAta,
      mint: v.mint,
      tokenProgram: TOKEN_PROGRAM_ID.toBase58(),
      amount: 5_000_000n,
    }),
  cancelSubscription: () =>
    cancelSubscriptionInstruction({
      subscriber: v.subscriber,
      plan: v.plan,
      subscription: v.subscription,
    }),
  resumeSubscription: () =>
    resumeSubscriptionInstruction({
      subscriber: v.subscriber,
      plan: v.plan,
      subscription: v.subscription,
      mint: v.mint,
    }),
  revokeAuthority: () =>
    revokeAuthorityInstruction({
      subscriber: v.subscriber,
      mint: v.mint,
      tokenProgram: t22,
      subscriberAta: v.subscriberAta,
    }),
};

/**
 * Golden vectors: the exact wire form (program, accounts with signer/writable flags, data hex)
 * of each instruction for fixed inputs, written once from the client generated from the v0.4.0
 * IDL (`UPDATE_VECTORS=1 npx jest subscriptions-program.spec` rewrites them) and read against the
 * program's source (docs/solana.md lists the checks). A regenerated client, an IDL change or a
 * builder change that moves a byte or an account fails here.
 */
describe('Subscriptions program v0.4.0 instructions (golden vectors)', () => {
  if (process.env.UPDATE_VECTORS === '1') {
    it('writes the vectors', async () => {
      const out: Record<string, unknown> = { inputs: v };
      for (const [name, build] of Object.entries(BUILT)) out[name] = wire(await build());
      const path = join(__dirname, 'subscriptions-program.vectors.json');
      writeFileSync(path, `${JSON.stringify(out, null, 2)}\n`);
      expect(Object.keys(out)).toHaveLength(Object.keys(BUILT).length + 1);
    });
    return;
  }

  it('has a vector for every instruction the service builds, and no other', () => {
    expect(Object.keys(vectors).filter((k) => k !== 'inputs')).toEqual(Object.keys(BUILT));
  });

  it('derives the PDAs of the vectors', async () => {
    expect(await planPda(v.merchant, planId)).toBe(v.plan);
    expect(await subscriptionPda(v.plan, v.subscriber)).toBe(v.subscription);
    expect(await subscriptionAuthorityPda(v.subscriber, v.mint)).toBe(v.authority);
  });

  it.each(Object.keys(BUILT))('%s', async (name) => {
    expect(wire(await BUILT[name]())).toEqual(vectors[name as keyof typeof vectors]);
  });

  it('starts each instruction with its v0.4.0 discriminator', async () => {
    const tags = {
      initAuthority: 0,
      createPlan: 7,
      updatePlan: 8,
      transferSubscription: 10,
      subscribe: 11,
      cancelSubscription: 12,
      resumeSubscription: 13,
      revokeAuthority: 14,
    };
    for (const [name, tag] of Object.entries(tags)) {
      expect([name, (await BUILT[name]()).data[0]]).toEqual([name, tag]);
    }
  });

  it('gives update_plan and resume_subscription the accounts v0.4.0 added', async () => {
    const eventAuthority = (await BUILT.updatePlan()).keys[2].pubkey.toBase58();
    const [expected] = PublicKey.findProgramAddressSync(
      [Buffer.from('event_authority')],
      new PublicKey(SUBSCRIPTIONS_PROGRAM_ADDRESS),
    );
    expect(eventAuthority).toBe(expected.toBase58());
    expect((await BUILT.updatePlan()).keys[3].pubkey.toBase58()).toBe(
      SUBSCRIPTIONS_PROGRAM_ADDRESS,
    );
    expect((await BUILT.resumeSubscription()).keys[3].pubkey.toBase58()).toBe(v.authority);
  });

  it('binds the subscribe to the authority init_id it was given', async () => {
    const data = (await BUILT.subscribe()).data;
    expect(data.readBigInt64LE(data.length - 8)).toBe(412_345_678n);
  });

  it('forwards a hooked mint’s extra accounts after the pull’s own', async () => {
    const hook = key();
    const ix = await transferSubscriptionInstruction({
      caller: v.service,
      subscriber: v.subscriber,
      subscriberAta: v.subscriberAta,
      plan: v.plan,
      subscription: v.subscription,
      receiverAta: v.receiverAta,
      mint: v.mint,
      tokenProgram: t22,
      amount: 1n,
      hookAccounts: [{ pubkey: new PublicKey(hook), isSigner: false, isWritable: true }],
    });
    const plain = await BUILT.transferSubscription();
    expect(ix.keys).toHaveLength(plain.keys.length + 1);
    expect(ix.keys.at(-1)).toEqual({
      pubkey: new PublicKey(hook),
      isSigner: false,
      isWritable: true,
    });
  });
});

describe('Subscriptions program accounts (v0.4.0 layouts)', () => {
  const merchant = key();
  const subscriber = key();
  const service = key();
  const mint = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
  const owned = (data: ArrayLike<number>) => ({
    data: Buffer.from(data),
    executable: false,
    lamports: 1_000_000,
    owner: new PublicKey(SUBSCRIPTIONS_PROGRAM_ADDRESS),
  });

  it('derives the on-chain plan id from the first 8 bytes of the plan UUID', () => {
    expect(planId).toBe(0x0b5f6a0e12c44c1en);
    expect(() => onchainPlanId('not-a-uuid')).toThrow(RangeError);
  });

  it('pads plan arrays to the program’s size and refuses more', () => {
    expect(padAddresses([merchant], MAX_PLAN_PULLERS)).toHaveLength(4);
    expect(() => padAddresses([1, 2, 3, 4, 5].map(key), MAX_PLAN_PULLERS)).toThrow(RangeError);
  });

  it('decodes a Plan (491 bytes) encoded by the generated codec', async () => {
    const plan = await planPda(merchant, planId);
    const data = getPlanEncoder().encode({
      discriminator: AccountDiscriminator.Plan,
      owner: address(merchant),
      bump: 254,
      status: 1,
      data: {
        planId,
        mint: address(mint),
        terms: { amount: 9_990_000n, periodHours: 720n, createdAt: 1_790_000_000n },
        endTs: 0n,
        destinations: padAddresses([merchant], MAX_PLAN_DESTINATIONS),
        pullers: padAddresses([service], MAX_PLAN_PULLERS),
        metadataUri: '',
      },
    });
    expect(data.length).toBe(491);
    const decoded = decodePlanAccount(plan, owned(data));
    expect(decoded.owner).toBe(merchant);
    expect(decoded.data.planId).toBe(planId);
    expect(decoded.data.terms).toEqual({
      amount: 9_990_000n,
      periodHours: 720n,
      createdAt: 1_790_000_000n,
    });
    expect(decoded.data.pullers.slice(0, 1)).toEqual([service]);
  });

  it('decodes a SubscriptionAuthority (106 bytes) and a SubscriptionDelegation (155 bytes)', async () => {
    const authority = getSubscriptionAuthorityEncoder().encode({
      discriminator: AccountDiscriminator.SubscriptionAuthority,
      user: address(subscriber),
      tokenMint: address(mint),
      payer: address(subscriber),
      bump: 255,
      initId: 401_000_123n,
    });
    expect(authority.length).toBe(106);
    const at = await subscriptionAuthorityPda(subscriber, mint);
    expect(decodeAuthorityAccount(at, owned(authority)).initId).toBe(401_000_123n);
    const subscription = getSubscriptionDelegationEncoder().encode({
      header: {
        discriminator: AccountDiscriminator.SubscriptionDelegation,
        version: 1,
        bump: 253,
        delegator: address(subscriber),
        delegatee: address(await planPda(merchant, planId)),
        payer: address(subscriber),
        initId: 401_000_123n,
      },
      terms: { amount: 5_000_000n, periodHours: 24n, createdAt: 1_790_000_000n },
      amountPulledInPeriod: 0n,
      currentPeriodStartTs: 1_790_000_100n,
      expiresAtTs: 0n,
    });
    expect(subscription.length).toBe(155);
    const decoded = decodeSubscriptionAccount(key(), owned(subscription));
    expect(decoded.header.initId).toBe(401_000_123n);
    expect(decoded.expiresAtTs).toBe(0n);
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
});
