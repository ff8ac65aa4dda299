import {
  ComputeBudgetProgram,
  Keypair,
  MessageV0,
  PublicKey,
  SystemProgram,
  TransactionInstruction,
  VersionedTransaction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import {
  ComputeBudget,
  computeExhausted,
  MAX_COMPUTE_UNITS,
  MIN_COMPUTE_UNITS,
  networkFee,
  percentileFee,
  PRIORITY_FEE_CACHE_MS,
  UNITS_CACHE_MS,
} from './compute-budget';
import type { JsonRpcAnswer } from './rpc-transport';
import { compileLegacyMessage, memo, ServiceSigner } from './transactions';

type Call = { method: string; params: unknown[] };

/** A transport whose answers the test decides, recording each batch it is asked. */
function fakeRpc(answer: (call: Call) => Omit<JsonRpcAnswer, 'id'>) {
  const batches: Call[][] = [];
  return {
    batches,
    rpc: {
      batch(calls: Call[]) {
        batches.push(calls);
        return Promise.resolve(calls.map((call, id) => ({ id, ...answer(call) })));
      },
    },
  };
}

const fees = (...values: number[]) => values.map((fee, slot) => ({ slot, prioritizationFee: fee }));
const blockhash = bs58.encode(Buffer.alloc(32, 7));
const payer = Keypair.generate();

describe('percentileFee', () => {
  it('is the nearest-rank 75th percentile of the slots, null for no slot or what is not fees', () => {
    expect(percentileFee(fees(1, 2, 3, 4))).toBe(3);
    expect(percentileFee(fees(0, 0, 0, 100))).toBe(0);
    expect(percentileFee(fees(0, 100, 100, 100))).toBe(100);
    expect(percentileFee(fees(...Array.from({ length: 150 }, (_, i) => i)))).toBe(112);
    expect(percentileFee([])).toBeNull();
    expect(percentileFee(null)).toBeNull();
    expect(percentileFee([{ slot: 1, prioritizationFee: -1 }])).toBeNull();
    expect(percentileFee([{ slot: 1 }])).toBeNull();
  });
});

describe('ComputeBudget: the compute-unit price', () => {
  it('is the estimate for the account, capped at the ceiling', async () => {
    const { rpc, batches } = fakeRpc(() => ({ result: fees(500, 9_000, 9_000, 9_000) }));
    const budget = new ComputeBudget(rpc, { maxMicroLamports: 5_000, commitment: 'confirmed' });
    expect(await budget.price('Merchant1')).toBe(5_000);
    expect(batches).toEqual([[{ method: 'getRecentPrioritizationFees', params: [['Merchant1']] }]]);
    const uncapped = new ComputeBudget(rpc, { maxMicroLamports: 1e6, commitment: 'confirmed' });
    expect(await uncapped.price('Merchant1')).toBe(9_000);
  });

  it('reads each account once per cache period, and the accounts asked together in one batch', async () => {
    const clock = { now: 0 };
    const { rpc, batches } = fakeRpc((call) => ({
      result: fees((call.params[0] as string[])[0] === 'A' ? 100 : 200),
    }));
    const budget = new ComputeBudget(rpc, {
      maxMicroLamports: 1e6,
      commitment: 'confirmed',
      now: () => clock.now,
    });
    // A run of 200 charges to two merchants: one batch of two reads.
    const prices = await Promise.all(
      Array.from({ length: 200 }, (_, i) => budget.price(i % 2 ? 'A' : 'B')),
    );
    expect(prices.filter((p) => p === 100)).toHaveLength(100);
    expect(prices.filter((p) => p === 200)).toHaveLength(100);
    expect(batches.map((b) => b.length)).toEqual([2]);
    clock.now += PRIORITY_FEE_CACHE_MS - 1;
    await budget.price('A');
    expect(batches).toHaveLength(1);
    clock.now += 1;
    await budget.price('A');
    expect(batches).toHaveLength(2);
  });

  it("keeps the account's last estimate when a read fails, else the latest of any account, else the ceiling", async () => {
    const clock = { now: 0 };
    let fail = false;
    const { rpc } = fakeRpc((call) =>
      fail
        ? { error: { code: -32603, message: 'down' } }
        : { result: fees((call.params[0] as string[])[0] === 'A' ? 700 : 900) },
    );
    const budget = new ComputeBudget(rpc, {
      maxMicroLamports: 1e6,
      commitment: 'confirmed',
      now: () => clock.now,
    });
    expect(await budget.price('A')).toBe(700);
    expect(await budget.price('C')).toBe(900);
    fail = true;
    clock.now += PRIORITY_FEE_CACHE_MS;
    expect(await budget.price('A')).toBe(700);
    // B was never read: the latest estimate of any account (C's).
    expect(await budget.price('B')).toBe(900);
    const down = new ComputeBudget(
      { batch: () => Promise.reject(new Error('Solana RPC unavailable')) },
      { maxMicroLamports: 40_000, commitment: 'confirmed' },
    );
    expect(await down.price('A')).toBe(40_000);
    // No slot reported (a cluster just started) is no estimate either.
    const empty = new ComputeBudget(fakeRpc(() => ({ result: [] })).rpc, {
      maxMicroLamports: 40_000,
      commitment: 'confirmed',
    });
    expect(await empty.price('A')).toBe(40_000);
  });

  it('with a ceiling of 0 sets no price and reads nothing', async () => {
    const { rpc, batches } = fakeRpc(() => ({ result: fees(700) }));
    const budget = new ComputeBudget(rpc, { maxMicroLamports: 0, commitment: 'confirmed' });
    expect(await budget.price('A')).toBe(0);
    expect(batches).toEqual([]);
    expect(budget.instructions(20_000, 700)).toEqual([
      ComputeBudgetProgram.setComputeUnitLimit({ units: 20_000 }),
    ]);
  });
});

describe('ComputeBudget: the compute-unit limit', () => {
  const instructions = [memo('charge:v1:plan:attempt')];
  const simulating = (value: unknown) =>
    fakeRpc(() => ({ result: { context: { slot: 1 }, value } }));

  it('is what the simulation consumed plus 10%, simulated with the largest limit and a price', async () => {
    const { rpc, batches } = simulating({ err: null, unitsConsumed: 30_001 });
    const budget = new ComputeBudget(rpc, { maxMicroLamports: 1e6, commitment: 'finalized' });
    expect(await budget.unitLimit(payer.publicKey, instructions, blockhash)).toBe(33_002);
    const [[call]] = batches;
    expect(call.method).toBe('simulateTransaction');
    expect(call.params[1]).toEqual({
      encoding: 'base64',
      sigVerify: false,
      replaceRecentBlockhash: true,
      commitment: 'finalized',
    });
    const simulated = VersionedTransaction.deserialize(
      Buffer.from(call.params[0] as string, 'base64'),
    );
    expect(simulated.message.compiledInstructions.map((ix) => Buffer.from(ix.data))).toEqual([
      ComputeBudgetProgram.setComputeUnitLimit({ units: MAX_COMPUTE_UNITS }).data,
      ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1 }).data,
      instructions[0].data,
    ]);
  });

  it('is at least the floor and at most the maximum', async () => {
    const small = new ComputeBudget(simulating({ err: null, unitsConsumed: 300 }).rpc, {
      maxMicroLamports: 1e6,
      commitment: 'confirmed',
    });
    expect(await small.unitLimit(payer.publicKey, instructions, blockhash)).toBe(MIN_COMPUTE_UNITS);
    const large = new ComputeBudget(simulating({ err: null, unitsConsumed: 1_390_000 }).rpc, {
      maxMicroLamports: 1e6,
      commitment: 'confirmed',
    });
    expect(await large.unitLimit(payer.publicKey, instructions, blockhash)).toBe(MAX_COMPUTE_UNITS);
  });

  it('of one shape is simulated once a minute, again once forgotten, never reusing a failure', async () => {
    let consumed = 20_000;
    let fail = false;
    const { rpc, batches } = fakeRpc(() => ({
      result: {
        context: { slot: 1 },
        value: fail ? { err: 'x' } : { err: null, unitsConsumed: consumed },
      },
    }));
    let now = 1_000;
    const budget = new ComputeBudget(rpc, {
      maxMicroLamports: 1e6,
      commitment: 'confirmed',
      now: () => now,
    });
    const limit = (shape?: string) =>
      budget.unitLimit(payer.publicKey, instructions, blockhash, shape);
    expect(await limit('plan-a')).toBe(22_000);
    consumed = 30_000;
    expect(await limit('plan-a')).toBe(22_000); // reused: no simulation
    expect(batches).toHaveLength(1);
    expect(await limit('plan-b')).toBe(33_000); // another shape: its own
    expect(await limit()).toBe(33_000); // no shape: simulated each time
    expect(batches).toHaveLength(3);
    now += UNITS_CACHE_MS;
    expect(await limit('plan-a')).toBe(33_000); // a minute on: simulated again
    consumed = 40_000;
    budget.forgetUnits();
    expect(await limit('plan-a')).toBe(44_000);
    expect(batches).toHaveLength(5);
    fail = true;
    budget.forgetUnits();
    expect(await limit('plan-a')).toBe(200_000); // a failed simulation: the default, not kept
    fail = false;
    expect(await limit('plan-a')).toBe(44_000);
    expect(batches).toHaveLength(7);
  });

  it('a transaction that ran out of units is told apart by its status or its log', () => {
    // What a status says (the instruction error) and what the runtime logs.
    expect(computeExhausted('{"InstructionError":[2,"ComputationalBudgetExceeded"]}')).toBe(true);
    expect(
      computeExhausted(
        'Program TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA consumed 9990 of 10000 compute units; exceeded CUs meter at BPF instruction',
      ),
    ).toBe(true);
    expect(computeExhausted('{"InstructionError":[2,{"Custom":1}]}')).toBe(false);
    expect(computeExhausted('Blockhash not found')).toBe(false);
  });

  it("is the runtime's default for the instructions when the simulation fails", async () => {
    const refused = new ComputeBudget(
      simulating({ err: { InstructionError: [2, { Custom: 1 }] }, unitsConsumed: 4_000 }).rpc,
      { maxMicroLamports: 1e6, commitment: 'confirmed' },
    );
    const two = [...instructions, memo('second')];
    expect(await refused.unitLimit(payer.publicKey, two, blockhash)).toBe(400_000);
    const down = new ComputeBudget(
      { batch: () => Promise.reject(new Error('Solana RPC unavailable')) },
      { maxMicroLamports: 1e6, commitment: 'confirmed' },
    );
    expect(await down.unitLimit(payer.publicKey, instructions, blockhash)).toBe(200_000);
  });
});

describe('networkFee', () => {
  const signer = new ServiceSigner(payer);
  const transfer = SystemProgram.transfer({
    fromPubkey: payer.publicKey,
    toPubkey: PublicKey.default,
    lamports: 1,
  });
  const fee = (instructions: TransactionInstruction[]) =>
    networkFee(signer.sign(instructions, { blockhash, lastValidBlockHeight: 1 }).transaction);

  it('is 5,000 lamports a signature plus the price times the limit, rounded up to a lamport', () => {
    expect(fee([transfer])).toBe(5_000n);
    expect(fee([ComputeBudgetProgram.setComputeUnitLimit({ units: 30_000 }), transfer])).toBe(
      5_000n,
    );
    expect(
      fee([
        ComputeBudgetProgram.setComputeUnitLimit({ units: 30_000 }),
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000_000 }),
        transfer,
      ]),
    ).toBe(35_000n);
    expect(
      fee([
        ComputeBudgetProgram.setComputeUnitLimit({ units: 33_333 }),
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 3 }),
        transfer,
      ]),
    ).toBe(5_001n); // 99,999 micro-lamports: one lamport
  });

  it("without a limit, prices the runtime's default of 200,000 units per other instruction", () => {
    expect(
      fee([ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 10 }), transfer, transfer]),
    ).toBe(5_000n + 4n);
  });

  it('counts every signature', () => {
    const other = Keypair.generate();
    const ix = SystemProgram.transfer({
      fromPubkey: other.publicKey,
      toPubkey: payer.publicKey,
      lamports: 1,
    });
    // Two signers (empty signature slots): the fee payer and the transfer's sender.
    const tx = new VersionedTransaction(compileLegacyMessage(payer.publicKey, [ix], blockhash));
    expect(networkFee(Buffer.from(tx.serialize()).toString('base64'))).toBe(10_000n);
  });

  it('reads the wire form as web3.js decodes it: legacy and v0, with and without a budget', () => {
    // The fee as the earlier code computed it, from web3.js's decoded message.
    const decoded = (transaction: string) => {
      const { message } = VersionedTransaction.deserialize(Buffer.from(transaction, 'base64'));
      let price = 0n;
      let limit: bigint | undefined;
      let others = 0n;
      for (const ix of message.compiledInstructions) {
        if (!message.staticAccountKeys[ix.programIdIndex].equals(ComputeBudgetProgram.programId)) {
          others++;
          continue;
        }
        const data = Buffer.from(ix.data);
        if (data[0] === 2) limit = BigInt(data.readUInt32LE(1));
        if (data[0] === 3) price = data.readBigUInt64LE(1);
      }
      const units = limit ?? 200_000n * others;
      const capped = units > BigInt(MAX_COMPUTE_UNITS) ? BigInt(MAX_COMPUTE_UNITS) : units;
      return (
        5_000n * BigInt(message.header.numRequiredSignatures) +
        (price * capped + 999_999n) / 1_000_000n
      );
    };
    const others = Array.from({ length: 3 }, () => Keypair.generate());
    for (let i = 0; i < 40; i++) {
      const instructions: TransactionInstruction[] = [];
      if (i % 3 !== 0)
        instructions.push(
          ComputeBudgetProgram.setComputeUnitLimit({ units: 1_000 * (i + 1) * 37 }),
        );
      if (i % 2 === 0)
        instructions.push(ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 17 * i * i }));
      for (let n = 0; n <= i % 4; n++) {
        const from = n === 3 ? others[i % 3].publicKey : payer.publicKey;
        instructions.push(
          SystemProgram.transfer({
            fromPubkey: from,
            toPubkey: others[n % 3].publicKey,
            lamports: n + 1,
          }),
        );
        instructions.push(memo('x'.repeat(i * 2)));
      }
      const message =
        i % 2 === 0
          ? compileLegacyMessage(payer.publicKey, instructions, blockhash)
          : MessageV0.compile({
              payerKey: payer.publicKey,
              instructions,
              recentBlockhash: blockhash,
            });
      const transaction = Buffer.from(new VersionedTransaction(message).serialize()).toString(
        'base64',
      );
      expect(networkFee(transaction)).toBe(decoded(transaction));
    }
    expect(() => networkFee(Buffer.from([1, 2, 3]).toString('base64'))).toThrow(RangeError);
  });
});
