import {
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import {
  Connection,
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import type { FaultState } from '@stablecoin-billing/localnet';
import { mintTable } from '../src/solana/mints';
import type { RpcBody } from './helpers/localnet-rpc';
import { startTestChain, TEST_DEV_AUTH, TestChain } from './helpers/test-chain';
import { waitFor } from './helpers/webhook-receiver';

const USDC = new PublicKey(mintTable('localnet')[0].address);
const FEE = 5000;
const ALL_OFF = {
  dropSends: 0,
  delaySlots: 0,
  hideStatusesMs: 0,
  refuseBatches: false,
  maxBatch: 0,
  throttleNext: 0,
  retryAfterSeconds: 1,
  rateLimitPerSecond: 0,
  prioritizationFeeFloor: 0,
  signaturePageCap: 0,
  unservedTransactions: [] as string[],
};

interface Status {
  slot: number;
  err: unknown;
  confirmationStatus: string;
}

interface SignedTx {
  wire: string;
  signature: string;
}

function usdcAccount(owner: PublicKey): PublicKey {
  return getAssociatedTokenAddressSync(USDC, owner, true, TOKEN_PROGRAM_ID);
}

/** `instructions` signed by `payer` over `blockhash`, base64 wire bytes and signature. */
function signed(
  payer: Keypair,
  blockhash: string,
  ...instructions: TransactionInstruction[]
): SignedTx {
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
    ...instructions,
  );
  tx.sign(payer);
  return { wire: tx.serialize().toString('base64'), signature: bs58.encode(tx.signature!) };
}

function lamportsTo(from: Keypair, to: PublicKey, lamports: number): TransactionInstruction {
  return SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports });
}

function usdcTo(from: Keypair, to: PublicKey, amount: bigint): TransactionInstruction {
  return createTransferCheckedInstruction(
    usdcAccount(from.publicKey),
    USDC,
    usdcAccount(to),
    from.publicKey,
    amount,
    6,
  );
}

/** Raw JSON-RPC against one test chain. */
function rpcOf(tc: TestChain) {
  let id = 0;
  const post = async (body: unknown): Promise<unknown> => {
    const res = await fetch(tc.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...TEST_DEV_AUTH },
      body: JSON.stringify(body),
    });
    return res.json();
  };
  /** The HTTP answer itself: status, `Retry-After` and the parsed body. */
  const raw = async (body: unknown) => {
    const res = await fetch(tc.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      body: await res.json(),
    };
  };
  const call = async (method: string, params: unknown[] = []) =>
    (await post({ jsonrpc: '2.0', id: ++id, method, params })) as RpcBody;
  const result = async <T>(method: string, params: unknown[] = []): Promise<T> => {
    const body = await call(method, params);
    if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
    return body.result as T;
  };
  return {
    post,
    raw,
    call,
    result,
    send: (tx: SignedTx, config: Record<string, unknown> = {}) =>
      call('sendTransaction', [tx.wire, { encoding: 'base64', ...config }]),
    status: async (signature: string) =>
      (await result<{ value: Array<Status | null> }>('getSignatureStatuses', [[signature]]))
        .value[0],
    faults: () => result<FaultState>('localnet_getFaults'),
    setFaults: (switches: Record<string, unknown>) =>
      result<FaultState>('localnet_setFaults', [switches]),
    blockhash: async () =>
      (await result<{ value: { blockhash: string } }>('getLatestBlockhash')).value.blockhash,
  };
}

// web3.js keeps a block-height poll (a 1 s sleep) running a moment after a confirmation.
afterAll(() => new Promise((resolve) => setTimeout(resolve, 1100)));

describe('Localnet fault injection (localnet_setFaults)', () => {
  let tc: TestChain;
  let connection: Connection;
  let rpc: ReturnType<typeof rpcOf>;
  const merchant = Keypair.generate();

  /** A wallet with 2 SOL and `usdc` base units of USDC, funded in process. */
  function wallet(usdc = 100_000_000n): Keypair {
    const keypair = Keypair.generate();
    tc.chain.faucet({
      wallet: keypair.publicKey.toBase58(),
      lamports: 2_000_000_000n,
      mint: 'USDC',
      amount: usdc,
    });
    return keypair;
  }

  const usdcBalance = async (owner: PublicKey) =>
    BigInt((await connection.getTokenAccountBalance(usdcAccount(owner))).value.amount);

  const landed = (signature: string) =>
    waitFor(
      async () => (await rpc.status(signature)) !== null,
      15_000,
      () => `${signature} to land`,
    );

  beforeAll(async () => {
    tc = await startTestChain();
    connection = new Connection(tc.url, 'confirmed');
    rpc = rpcOf(tc);
    // Rent-exempt, with a USDC account: small transfers to it need nothing created.
    tc.chain.faucet({
      wallet: merchant.publicKey.toBase58(),
      lamports: 1_000_000_000n,
      mint: 'USDC',
      amount: 1n,
    });
  });
  afterEach(async () => {
    await rpc.setFaults(ALL_OFF);
  });
  afterAll(async () => {
    await tc.close();
  });

  it('reports every switch off and nothing held on a new server', async () => {
    expect(await rpc.faults()).toEqual({ ...ALL_OFF, held: 0 });
  });

  it('drops the next N sends: each answers its signature, never lands, and lands when sent again', async () => {
    const payer = wallet();
    const blockhash = await rpc.blockhash();
    const first = signed(payer, blockhash, lamportsTo(payer, merchant.publicKey, 1_000));
    const second = signed(payer, blockhash, lamportsTo(payer, merchant.publicKey, 2_000));
    const control = signed(payer, blockhash, lamportsTo(payer, merchant.publicKey, 3_000));
    const before = await connection.getBalance(merchant.publicKey);

    expect(await rpc.setFaults({ dropSends: 2 })).toEqual({ ...ALL_OFF, dropSends: 2, held: 0 });
    expect(await rpc.send(first)).toMatchObject({ result: first.signature });
    expect((await rpc.faults()).dropSends).toBe(1);
    // Refused at receipt (an unknown blockhash): not lost on the way, so it does not count.
    const stale = signed(
      payer,
      bs58.encode(Buffer.alloc(32, 7)),
      lamportsTo(payer, payer.publicKey, 1),
    );
    expect((await rpc.send(stale)).error).toMatchObject({ code: -32002 });
    expect((await rpc.faults()).dropSends).toBe(1);
    // The in-process faucet is not a JSON-RPC send: it lands and leaves the counter alone.
    const [faucet] = tc.chain.faucet({ wallet: payer.publicKey.toBase58(), lamports: 1n });
    expect(await rpc.status(faucet)).toMatchObject({ err: null, confirmationStatus: 'confirmed' });
    expect((await rpc.faults()).dropSends).toBe(1);
    expect(await rpc.send(second)).toMatchObject({ result: second.signature });
    expect(await rpc.faults()).toEqual({ ...ALL_OFF, held: 0 });

    // The counter has run out: the next send lands, and the two lost ones are still unknown.
    expect(await rpc.send(control)).toMatchObject({ result: control.signature });
    await landed(control.signature);
    expect(await rpc.status(first.signature)).toBeNull();
    expect(await rpc.status(second.signature)).toBeNull();
    expect(await connection.getBalance(merchant.publicKey)).toBe(before + 3_000);

    // The very same bytes sent again land: the chain never saw them.
    expect(await rpc.send(first)).toMatchObject({ result: first.signature });
    expect(await rpc.status(first.signature)).toMatchObject({ err: null });
    expect(await connection.getBalance(merchant.publicKey)).toBe(before + 4_000);
  });

  it('lands a delayed transaction at its slot, not before: tokens and lamports move only then', async () => {
    const payer = wallet(5_000_000n);
    const [lamportsBefore, usdcBefore] = [
      await connection.getBalance(payer.publicKey),
      await usdcBalance(merchant.publicKey),
    ];
    const tx = signed(
      payer,
      await rpc.blockhash(),
      usdcTo(payer, merchant.publicKey, 2_000_000n),
      lamportsTo(payer, merchant.publicKey, 10_000),
    );
    expect((await rpc.setFaults({ delaySlots: 10 })).delaySlots).toBe(10);
    const { slot: sentAt } = await rpc.result<{ slot: number }>('localnet_getClock');
    expect(await rpc.send(tx)).toMatchObject({ result: tx.signature });

    expect(await rpc.faults()).toMatchObject({ delaySlots: 10, held: 1 });
    expect(await rpc.status(tx.signature)).toBeNull();
    expect(await connection.getBalance(payer.publicKey)).toBe(lamportsBefore);
    expect(await usdcBalance(merchant.publicKey)).toBe(usdcBefore);

    await landed(tx.signature);
    const status = await rpc.status(tx.signature);
    expect(status).toMatchObject({ err: null, confirmationStatus: 'confirmed' });
    expect(status!.slot).toBeGreaterThanOrEqual(sentAt + 10);
    expect((await rpc.faults()).held).toBe(0);
    expect(await connection.getBalance(payer.publicKey)).toBe(lamportsBefore - 10_000 - FEE);
    expect(await usdcBalance(merchant.publicKey)).toBe(usdcBefore + 2_000_000n);
  });

  it('holds a duplicate once, lands it once, and refuses it once processed', async () => {
    const payer = wallet();
    const tx = signed(payer, await rpc.blockhash(), lamportsTo(payer, merchant.publicKey, 7_000));
    const before = await connection.getBalance(merchant.publicKey);
    await rpc.setFaults({ delaySlots: 3 });
    expect(await rpc.send(tx)).toMatchObject({ result: tx.signature });
    expect(await rpc.send(tx, { skipPreflight: true })).toMatchObject({ result: tx.signature });
    expect((await rpc.faults()).held).toBe(1);

    await landed(tx.signature);
    await waitFor(async () => (await rpc.faults()).held === 0);
    expect(await connection.getBalance(merchant.publicKey)).toBe(before + 7_000);
    expect((await rpc.send(tx)).error).toMatchObject({
      code: -32002,
      message: expect.stringContaining('already been processed') as unknown,
    });
    expect((await rpc.faults()).held).toBe(0);
  });

  it('records a delayed transaction that fails at its slot as a cluster does: error and fee', async () => {
    const payer = wallet(3_000_000n);
    const lamportsBefore = await connection.getBalance(payer.publicKey);
    const blockhash = await rpc.blockhash();
    const late = signed(payer, blockhash, usdcTo(payer, merchant.publicKey, 2_000_000n));
    await rpc.setFaults({ delaySlots: 5 });
    // Passes preflight at receipt (3 USDC cover 2)...
    expect(await rpc.send(late)).toMatchObject({ result: late.signature });
    // ...but 2 USDC leave in the meantime, through the chain itself (no fault applies there).
    const spend = signed(payer, blockhash, usdcTo(payer, merchant.publicKey, 2_000_001n));
    const spent = tc.chain.sendTransaction(Buffer.from(spend.wire, 'base64'));
    expect(await rpc.status(spent)).toMatchObject({ err: null });

    await landed(late.signature);
    expect(await rpc.status(late.signature)).toMatchObject({
      err: { InstructionError: [0, { Custom: 1 }] },
    });
    const recorded = await connection.getTransaction(late.signature, { commitment: 'confirmed' });
    expect(recorded?.meta?.fee).toBe(FEE);
    expect(await connection.getBalance(payer.publicKey)).toBe(lamportsBefore - 2 * FEE);
    expect(await usdcBalance(payer.publicKey)).toBe(999_999n);
  });

  it('keeps what is held when the delay is switched off, and sends after that land at once', async () => {
    const payer = wallet();
    const blockhash = await rpc.blockhash();
    const held = [1, 2, 3].map((n) =>
      signed(payer, blockhash, lamportsTo(payer, merchant.publicKey, 100 + n)),
    );
    await rpc.setFaults({ delaySlots: 8 });
    for (const tx of held) expect(await rpc.send(tx)).toMatchObject({ result: tx.signature });
    expect(await rpc.faults()).toMatchObject({ held: 3 });

    expect(await rpc.setFaults({ delaySlots: 0 })).toMatchObject({ delaySlots: 0, held: 3 });
    const now = signed(payer, blockhash, lamportsTo(payer, merchant.publicKey, 200));
    expect(await rpc.send(now)).toMatchObject({ result: now.signature });
    expect(await rpc.status(now.signature)).toMatchObject({ err: null });
    expect(await rpc.status(held[0].signature)).toBeNull();

    await waitFor(
      async () => (await rpc.faults()).held === 0,
      15_000,
      () => 'held to land',
    );
    for (const tx of held) {
      expect(await rpc.status(tx.signature)).toMatchObject({ err: null });
    }
  });

  it('hides every status for hideStatusesMs, then shows the real one; 0 turns it off at once', async () => {
    const payer = wallet();
    const tx = signed(payer, await rpc.blockhash(), lamportsTo(payer, merchant.publicKey, 5));
    expect(await rpc.send(tx)).toMatchObject({ result: tx.signature });
    const real = await rpc.status(tx.signature);
    expect(real).toMatchObject({ err: null });

    const state = await rpc.setFaults({ hideStatusesMs: 600_000 });
    expect(state.hideStatusesMs).toBeGreaterThan(590_000);
    expect(state.hideStatusesMs).toBeLessThanOrEqual(600_000);
    expect(await rpc.status(tx.signature)).toBeNull();
    // The transaction itself is there: only the status view lags.
    expect(
      await connection.getTransaction(tx.signature, { commitment: 'confirmed' }),
    ).not.toBeNull();
    expect((await rpc.setFaults({ hideStatusesMs: 0 })).hideStatusesMs).toBe(0);
    expect(await rpc.status(tx.signature)).toMatchObject({ slot: real!.slot, err: null });

    await rpc.setFaults({ hideStatusesMs: 3_000 });
    expect(await rpc.status(tx.signature)).toBeNull();
    await waitFor(async () => (await rpc.status(tx.signature)) !== null, 10_000);
    expect(await rpc.status(tx.signature)).toMatchObject({ slot: real!.slot, err: null });
    expect((await rpc.faults()).hideStatusesMs).toBe(0);
  });

  it('refuses batch requests whole with refuseBatches, and still serves single requests', async () => {
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'getHealth' },
      { jsonrpc: '2.0', id: 2, method: 'localnet_getFaults' },
    ];
    expect(await rpc.setFaults({ refuseBatches: true })).toMatchObject({ refuseBatches: true });
    expect(await rpc.post(batch)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Batch requests are not supported' },
    });
    expect(await rpc.post([])).toMatchObject({ error: { code: -32600 } });
    expect(await rpc.result('getHealth')).toBe('ok');

    await rpc.setFaults({ refuseBatches: false });
    expect(await rpc.post(batch)).toEqual([
      { jsonrpc: '2.0', id: 1, result: 'ok' },
      { jsonrpc: '2.0', id: 2, result: { ...ALL_OFF, held: 0 } },
    ]);
  });

  it('refuses batches past maxBatch with HTTP 413, and serves those within it', async () => {
    const batch = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'getHealth' }));
    expect(await rpc.setFaults({ maxBatch: 2 })).toMatchObject({ maxBatch: 2 });
    expect(await rpc.raw(batch(3))).toEqual({
      status: 413,
      retryAfter: null,
      body: {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'Batch of 3 requests exceeds the limit of 2' },
      },
    });
    expect(await rpc.raw(batch(2))).toMatchObject({
      status: 200,
      body: [
        { id: 1, result: 'ok' },
        { id: 2, result: 'ok' },
      ],
    });
    await rpc.setFaults({ maxBatch: 0 });
    expect(await rpc.raw(batch(3))).toMatchObject({ status: 200 });
  });

  it('answers the next throttleNext HTTP requests 429 with retryAfterSeconds, never the localnet_* methods', async () => {
    const health = { jsonrpc: '2.0', id: 1, method: 'getHealth' };
    const throttled = {
      status: 429,
      body: {
        jsonrpc: '2.0',
        id: null,
        error: { code: 429, message: 'Too many requests for a specific RPC call' },
      },
    };
    expect(await rpc.setFaults({ throttleNext: 2, retryAfterSeconds: 7 })).toMatchObject({
      throttleNext: 2,
      retryAfterSeconds: 7,
    });
    expect(await rpc.raw(health)).toEqual({ ...throttled, retryAfter: '7' });
    // A batch is one HTTP request.
    expect(await rpc.raw([health, { ...health, id: 2 }])).toEqual({
      ...throttled,
      retryAfter: '7',
    });
    // The switches themselves are always served (and do not count).
    expect(await rpc.faults()).toMatchObject({ throttleNext: 0 });
    expect(await rpc.raw(health)).toMatchObject({ status: 200, body: { result: 'ok' } });

    // Without Retry-After, as some providers answer.
    await rpc.setFaults({ throttleNext: 1, retryAfterSeconds: 0 });
    expect(await rpc.raw(health)).toEqual({ ...throttled, retryAfter: null });
    expect(await rpc.raw(health)).toMatchObject({ status: 200 });
  });

  it('rate-limits to rateLimitPerSecond requests a second, a batch counting as its requests', async () => {
    const health = (id: number) => ({ jsonrpc: '2.0', id, method: 'getHealth' });
    // The four requests must share one wall-clock second: each round starts at the beginning
    // of one, and a round that a busy machine stretched past it is run again.
    let answers: { status: number; retryAfter: string | null }[] = [];
    for (let round = 0; round < 3; round++) {
      await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000)));
      await rpc.setFaults({ rateLimitPerSecond: 3 });
      const second = Math.floor(Date.now() / 1000);
      answers = [
        await rpc.raw([health(1), health(2)]), // 2 of 3
        await rpc.raw([health(3), health(4)]), // 4: refused, not counted
        await rpc.raw(health(5)), // 3 of 3
        await rpc.raw(health(6)), // refused
      ];
      if (Math.floor(Date.now() / 1000) === second) break;
    }
    expect(answers.map((a) => [a.status, a.retryAfter])).toEqual([
      [200, null],
      [429, '1'],
      [200, null],
      [429, '1'],
    ]);
    // The next second has its own budget.
    await waitFor(async () => (await rpc.raw(health(7))).status === 200, 3_000);
    await rpc.setFaults({ rateLimitPerSecond: 0 });
    for (let i = 0; i < 5; i++) expect((await rpc.raw(health(8 + i))).status).toBe(200);
  });

  it('reports recent prioritization fees of at least prioritizationFeeFloor', async () => {
    const fees = () =>
      rpc.result<{ slot: number; prioritizationFee: number }[]>('getRecentPrioritizationFees', [
        [USDC.toBase58()],
      ]);
    expect((await fees()).every((f) => f.prioritizationFee === 0)).toBe(true);
    await rpc.setFaults({ prioritizationFeeFloor: 25_000 });
    const floored = await fees();
    expect(floored.length).toBeGreaterThan(0);
    expect(floored.every((f) => f.prioritizationFee === 25_000)).toBe(true);
    // In-process reads are not the RPC's.
    expect(tc.chain.recentPrioritizationFees([]).every((f) => f.prioritizationFee === 0)).toBe(
      true,
    );
  });

  it('shares one set of switches between JSON-RPC and TestChain.faults, changing only what is given', async () => {
    expect(tc.faults.set({ dropSends: 4, refuseBatches: true })).toEqual({
      ...ALL_OFF,
      dropSends: 4,
      refuseBatches: true,
      held: 0,
    });
    expect(await rpc.setFaults({ delaySlots: 2 })).toEqual({
      ...ALL_OFF,
      dropSends: 4,
      delaySlots: 2,
      refuseBatches: true,
      held: 0,
    });
    expect(tc.faults.state()).toMatchObject({ dropSends: 4, delaySlots: 2, refuseBatches: true });
    expect(() => tc.faults.set({ dropSends: -1 })).toThrow(/dropSends must be a whole number/);
  });

  it('caps getSignaturesForAddress pages at signaturePageCap: short pages, the rest behind `before`', async () => {
    const payer = wallet();
    const target = Keypair.generate().publicKey;
    const sent: string[] = [];
    for (let n = 1; n <= 5; n++) {
      const tx = signed(payer, await rpc.blockhash(), lamportsTo(payer, target, 1_000_000 + n));
      expect(await rpc.send(tx)).toMatchObject({ result: tx.signature });
      sent.push(tx.signature);
    }
    const page = async (config: Record<string, unknown>) =>
      (
        await rpc.result<{ signature: string }[]>('getSignaturesForAddress', [
          target.toBase58(),
          { commitment: 'confirmed', ...config },
        ])
      ).map((info) => info.signature);
    const newestFirst = [...sent].reverse();
    expect(await page({})).toEqual(newestFirst);

    expect(await rpc.setFaults({ signaturePageCap: 2 })).toMatchObject({ signaturePageCap: 2 });
    // Asked for 1,000 (or the default), answered 2: a short page that is not the end.
    expect(await page({ limit: 1000 })).toEqual(newestFirst.slice(0, 2));
    expect(await page({})).toEqual(newestFirst.slice(0, 2));
    expect(await page({ limit: 1 })).toEqual(newestFirst.slice(0, 1));
    expect(await page({ before: newestFirst[1] })).toEqual(newestFirst.slice(2, 4));
    expect(await page({ before: newestFirst[3] })).toEqual(newestFirst.slice(4));
    expect(await page({ until: newestFirst[4] })).toEqual(newestFirst.slice(0, 2));
    // In-process reads are not the RPC's: never capped.
    expect(tc.chain.getSignaturesForAddress(target.toBase58(), { limit: 1000 })).toHaveLength(5);

    expect((await rpc.setFaults({ signaturePageCap: 0 })).signaturePageCap).toBe(0);
    expect(await page({ limit: 1000 })).toEqual(newestFirst);
  });

  it('answers getTransaction null for unservedTransactions, still listing them and serving their statuses', async () => {
    const payer = wallet();
    const target = Keypair.generate().publicKey;
    const hidden = signed(payer, await rpc.blockhash(), lamportsTo(payer, target, 1_000_001));
    const shown = signed(payer, await rpc.blockhash(), lamportsTo(payer, target, 1_000_002));
    for (const tx of [hidden, shown]) {
      expect(await rpc.send(tx)).toMatchObject({ result: tx.signature });
    }
    const read = async (signature: string) =>
      rpc.result<{ slot: number } | null>('getTransaction', [
        signature,
        { commitment: 'confirmed', encoding: 'json' },
      ]);
    expect(await read(hidden.signature)).not.toBeNull();

    expect(await rpc.setFaults({ unservedTransactions: [hidden.signature] })).toMatchObject({
      unservedTransactions: [hidden.signature],
    });
    expect(await read(hidden.signature)).toBeNull();
    expect(await read(shown.signature)).not.toBeNull();
    // Batched too (web3.js getTransactions), answer by answer.
    const config = { commitment: 'confirmed', encoding: 'json' };
    expect(
      await rpc.post([
        { jsonrpc: '2.0', id: 1, method: 'getTransaction', params: [hidden.signature, config] },
        { jsonrpc: '2.0', id: 2, method: 'getTransaction', params: [shown.signature, config] },
      ]),
    ).toEqual([
      { jsonrpc: '2.0', id: 1, result: null },
      { jsonrpc: '2.0', id: 2, result: expect.objectContaining({ slot: expect.any(Number) }) },
    ]);
    // Listed, and its status served: only the transaction itself is missing.
    const listed = await rpc.result<{ signature: string }[]>('getSignaturesForAddress', [
      target.toBase58(),
      { commitment: 'confirmed' },
    ]);
    expect(listed.map((info) => info.signature)).toContain(hidden.signature);
    expect(await rpc.status(hidden.signature)).toMatchObject({ err: null });
    expect(tc.chain.getTransaction(hidden.signature)).toBeDefined();

    expect((await rpc.setFaults({ unservedTransactions: [] })).unservedTransactions).toEqual([]);
    expect(await read(hidden.signature)).not.toBeNull();
  });

  it('refuses bad switches with -32602 and a clear message, changing nothing', async () => {
    const cases: Array<[unknown[], RegExp]> = [
      [[], /expected an object of switches/],
      [[null], /expected an object of switches/],
      [[[1]], /expected an object of switches/],
      [['dropSends'], /expected an object of switches/],
      [[{ dropSends: -1 }], /dropSends must be a whole number from 0 to 1000000/],
      [[{ dropSends: 1.5 }], /dropSends must be a whole number/],
      [[{ dropSends: '1' }], /dropSends must be a whole number/],
      [[{ dropSends: 1_000_001 }], /dropSends must be a whole number from 0 to 1000000/],
      [[{ delaySlots: 10_001 }], /delaySlots must be a whole number from 0 to 10000/],
      [[{ delaySlots: null }], /delaySlots must be a whole number/],
      [[{ hideStatusesMs: 600_001 }], /hideStatusesMs must be a whole number from 0 to 600000/],
      [[{ hideStatusesMs: Number.MAX_SAFE_INTEGER + 2 }], /hideStatusesMs must be a whole/],
      [[{ refuseBatches: 'yes' }], /refuseBatches must be a boolean/],
      [[{ refuseBatches: 1 }], /refuseBatches must be a boolean/],
      [[{ signaturePageCap: 1_001 }], /signaturePageCap must be a whole number from 0 to 1000/],
      [[{ maxBatch: 10_001 }], /maxBatch must be a whole number from 0 to 10000/],
      [[{ throttleNext: -1 }], /throttleNext must be a whole number from 0 to 1000000/],
      [[{ retryAfterSeconds: 3_601 }], /retryAfterSeconds must be a whole number from 0 to 3600/],
      [[{ rateLimitPerSecond: 0.5 }], /rateLimitPerSecond must be a whole number/],
      [
        [{ prioritizationFeeFloor: 1_000_000_001 }],
        /prioritizationFeeFloor must be a whole number from 0 to 1000000000/,
      ],
      [[{ unservedTransactions: 'x' }], /unservedTransactions must be an array of at most/],
      [[{ unservedTransactions: [1] }], /unservedTransactions must be an array of .* signatures/],
      [[{ unservedTransactions: ['0OIl'] }], /unservedTransactions must be an array/],
      [[{ dropSend: 1 }], /unknown switch "dropSend"/],
      // One bad field refuses the whole request: the good one is not applied either.
      [[{ dropSends: 3, delaySlots: -1 }], /delaySlots must be a whole number/],
    ];
    for (const [params, message] of cases) {
      const body = await rpc.call('localnet_setFaults', params);
      expect(body.result).toBeUndefined();
      expect(body.error?.code).toBe(-32602);
      expect(body.error?.message).toMatch(/^Invalid params: /);
      expect(body.error?.message).toMatch(message);
    }
    expect(await rpc.faults()).toEqual({ ...ALL_OFF, held: 0 });
  });
});

describe('Localnet fault injection: a transaction delayed past its blockhash', () => {
  let tc: TestChain;
  let rpc: ReturnType<typeof rpcOf>;
  let restoreClock: (() => void) | undefined;

  beforeAll(async () => {
    tc = await startTestChain();
    rpc = rpcOf(tc);
  });
  afterAll(async () => {
    await tc.close();
    // Only once the chain is closed: it must not see wall time go back.
    restoreClock?.();
  });

  it('never lands when its slot comes after its blockhash expired, while a fresh one lands', async () => {
    const payer = Keypair.generate();
    const payee = Keypair.generate().publicKey;
    tc.chain.faucet({ wallet: payer.publicKey.toBase58(), lamports: 1_000_000_000n });
    const { value } = await rpc.result<{
      value: { blockhash: string; lastValidBlockHeight: number };
    }>('getLatestBlockhash');
    const doomed = signed(payer, value.blockhash, lamportsTo(payer, payee, 1_000_000));

    // A minute of wall time passes at once: the blockhash has 3 slots left, instead of waiting
    // 57 s for it. Chain slots follow Date.now, and keep advancing from there.
    const realNow = Date.now.bind(Date);
    const skipMs = (value.lastValidBlockHeight - 3 - tc.chain.slot()) * 400;
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + skipMs);
    restoreClock = () => clock.mockRestore();
    expect(tc.chain.slot()).toBeGreaterThanOrEqual(value.lastValidBlockHeight - 3);
    expect(
      (await rpc.result<{ value: boolean }>('isBlockhashValid', [value.blockhash])).value,
    ).toBe(true);
    const fresh = signed(payer, await rpc.blockhash(), lamportsTo(payer, payee, 2_000_000));

    await rpc.setFaults({ delaySlots: 10 });
    expect(await rpc.send(doomed)).toMatchObject({ result: doomed.signature });
    expect(await rpc.send(fresh)).toMatchObject({ result: fresh.signature });
    expect((await rpc.faults()).held).toBe(2);

    await waitFor(
      async () => (await rpc.faults()).held === 0,
      15_000,
      () => 'held to clear',
    );
    expect(await rpc.status(fresh.signature)).toMatchObject({ err: null });
    expect(await rpc.status(doomed.signature)).toBeNull();
    expect(tc.chain.getTransaction(doomed.signature)).toBeUndefined();
    expect(tc.chain.getBalance(payee.toBase58())).toBe(2_000_000n);
    // Sent again, it is refused: its blockhash is gone.
    await rpc.setFaults({ delaySlots: 0 });
    expect((await rpc.send(doomed)).error).toMatchObject({
      code: -32002,
      message: expect.stringContaining('Blockhash not found') as unknown,
    });
  });
});
