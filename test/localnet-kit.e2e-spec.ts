import { getAssociatedTokenAddressSync, TOKEN_2022_PROGRAM_ID } from '@solana/spl-token';
import {
  AccountRole,
  address,
  type Address,
  appendTransactionMessageInstructions,
  type Base58EncodedBytes,
  type Base64EncodedBytes,
  type Blockhash,
  compileTransactionMessage,
  compressTransactionMessageUsingAddressLookupTables,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressEncoder,
  getBase64EncodedWireTransaction,
  getCompiledTransactionMessageEncoder,
  type Instruction,
  isSolanaError,
  type KeyPairSigner,
  lamports,
  type Rpc,
  type Signature,
  type SolanaRpcApi,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type TransactionMessageBytesBase64,
} from '@solana/kit';
import bs58 from 'bs58';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  PublicKey,
  SystemProgram,
  TransactionMessage as Web3TransactionMessage,
} from '@solana/web3.js';
import { mintTable } from '../src/solana/mints';
import { LocalnetUnderTest, startLocalnet } from './helpers/localnet-rpc';

/**
 * Localnet served to `@solana/kit`'s RPC client, as a browser wallet or a kit app calls it:
 * every method they use, with real data from a real chain (faucet funding, kit-signed legacy and
 * v0 transfers, an address lookup table), exact values and shapes, and the validator's error codes.
 */
const [USDC, PYUSD] = mintTable('localnet').map((m) => address(m.address));
const SYSTEM_PROGRAM: Address = address('11111111111111111111111111111111');
const TOKEN_PROGRAM: Address = address('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
const TOKEN_2022_PROGRAM: Address = address('TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb');
const COMPUTE_BUDGET_PROGRAM: Address = address('ComputeBudget111111111111111111111111111111');
const LOOKUP_TABLE_PROGRAM: Address = address('AddressLookupTab1e1111111111111111111111111');
const FEE = 5000n;
/** Rent-exempt minimum of a 165-byte SPL token account. */
const TOKEN_ACCOUNT_RENT = 2_039_280n;

type TokenAccountInfo = { owner: string; tokenAmount: { amount: string } };

function ata(mint: Address, owner: Address, program = TOKEN_PROGRAM): Address {
  const programId = program === TOKEN_PROGRAM ? undefined : TOKEN_2022_PROGRAM_ID;
  return address(
    getAssociatedTokenAddressSync(
      new PublicKey(mint),
      new PublicKey(owner),
      true,
      programId,
    ).toBase58(),
  );
}

function u64(value: bigint): Uint8Array {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, value, true);
  return bytes;
}

/** System Program transfer, written by hand (tag 2, lamports). */
function transferSol(from: KeyPairSigner, to: Address, amount: bigint): Instruction {
  return {
    programAddress: SYSTEM_PROGRAM,
    accounts: [
      { address: from.address, role: AccountRole.WRITABLE_SIGNER, signer: from },
      { address: to, role: AccountRole.WRITABLE },
    ],
    data: new Uint8Array([2, 0, 0, 0, ...u64(amount)]),
  } as Instruction;
}

/** SPL Token transferChecked (tag 12, amount, decimals). */
function transferChecked(
  owner: KeyPairSigner,
  mint: Address,
  to: Address,
  amount: bigint,
): Instruction {
  return {
    programAddress: TOKEN_PROGRAM,
    accounts: [
      { address: ata(mint, owner.address), role: AccountRole.WRITABLE },
      { address: mint, role: AccountRole.READONLY },
      { address: ata(mint, to), role: AccountRole.WRITABLE },
      { address: owner.address, role: AccountRole.READONLY_SIGNER, signer: owner },
    ],
    data: new Uint8Array([12, ...u64(amount), 6]),
  } as Instruction;
}

/** ComputeBudget setComputeUnitPrice (tag 3, micro-lamports per unit). */
function computeUnitPrice(microLamports: bigint): Instruction {
  return {
    programAddress: COMPUTE_BUDGET_PROGRAM,
    data: new Uint8Array([3, ...u64(microLamports)]),
  };
}

/** The JSON-RPC error a kit request fails with: code and the server's message. */
async function rpcError(request: {
  send(): Promise<unknown>;
}): Promise<{ code: number; message: string }> {
  try {
    await request.send();
  } catch (error) {
    if (!isSolanaError(error)) throw error;
    const context = error.context as { __code: number; __serverMessage?: string };
    return { code: context.__code, message: String(context.__serverMessage) };
  }
  throw new Error('expected the request to fail');
}

describe('Localnet through @solana/kit', () => {
  let localnet: LocalnetUnderTest;
  let rpc: Rpc<SolanaRpcApi>;
  let alice: KeyPairSigner;
  let bob: KeyPairSigner;
  let carol: KeyPairSigner;
  /** USDC minted so far by the faucet: the mint's supply. */
  let usdcMinted = 0n;

  async function fund(wallet: Address, mint: string, amount: bigint, lamports = 2_000_000_000n) {
    const { signatures } = await localnet.result<{ signatures: string[] }>('localnet_faucet', [
      { walletAddress: wallet, lamports: lamports.toString(), mint, amount: amount.toString() },
    ]);
    if (mint === 'USDC') usdcMinted += amount;
    return signatures[0];
  }

  async function latestBlockhash() {
    return (await rpc.getLatestBlockhash().send()).value;
  }

  async function v0Message(
    payer: KeyPairSigner,
    instructions: Instruction[],
    lifetime?: { blockhash: Blockhash; lastValidBlockHeight: bigint },
  ) {
    const blockhash = lifetime ?? (await latestBlockhash());
    return appendTransactionMessageInstructions(
      instructions,
      setTransactionMessageLifetimeUsingBlockhash(
        blockhash,
        setTransactionMessageFeePayerSigner(payer, createTransactionMessage({ version: 0 })),
      ),
    );
  }

  async function legacyMessage(payer: KeyPairSigner, instructions: Instruction[]) {
    return appendTransactionMessageInstructions(
      instructions,
      setTransactionMessageLifetimeUsingBlockhash(
        await latestBlockhash(),
        setTransactionMessageFeePayerSigner(payer, createTransactionMessage({ version: 'legacy' })),
      ),
    );
  }

  type Signable = Parameters<typeof signTransactionMessageWithSigners>[0];

  async function wire(msg: Signable): Promise<string> {
    return getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(msg));
  }

  async function send(msg: Signable): Promise<Signature> {
    const transaction = await wire(msg);
    return rpc.sendTransaction(transaction as never, { encoding: 'base64' }).send();
  }

  async function slotOf(signature: Signature): Promise<bigint> {
    const { value } = await rpc.getSignatureStatuses([signature]).send();
    return value[0]!.slot;
  }

  function compiled(msg: Parameters<typeof compileTransactionMessage>[0]) {
    const bytes = getCompiledTransactionMessageEncoder().encode(compileTransactionMessage(msg));
    return Buffer.from(bytes).toString('base64') as TransactionMessageBytesBase64;
  }

  /** Resolves once the chain's slot is past `slot`. */
  async function slotPassed(slot: number): Promise<void> {
    while (localnet.chain.slot() <= slot) await new Promise((r) => setTimeout(r, 50));
  }

  beforeAll(async () => {
    localnet = await startLocalnet();
    // Every method, requestAirdrop included: localnet is a test cluster.
    const url: string = localnet.rpc.url;
    rpc = createSolanaRpc(url);
    [alice, bob, carol] = await Promise.all([
      generateKeyPairSigner(),
      generateKeyPairSigner(),
      generateKeyPairSigner(),
    ]);
    await fund(alice.address, 'USDC', 50_000_000n);
    await fund(alice.address, 'PYUSD', 20_000_000n, 0n);
    await fund(bob.address, 'USDC', 10_000_000n);
    await fund(carol.address, 'USDC', 1_000_000n, 1_000_000_000n);
  });

  afterAll(async () => {
    await localnet.close();
  });

  it('describes the cluster: health, version, genesis, slot, height, epoch, rent', async () => {
    expect(await rpc.getHealth().send()).toBe('ok');
    expect(await rpc.getVersion().send()).toEqual({ 'solana-core': '2.2.0', 'feature-set': 0 });
    expect(await rpc.getGenesisHash().send()).toBe(localnet.chain.genesisHash);
    const slot = await rpc.getSlot().send();
    expect(typeof slot).toBe('bigint');
    expect(Number(slot)).toBeLessThanOrEqual(localnet.chain.slot());
    // Every slot has a block: height is the slot.
    const height = await rpc.getBlockHeight().send();
    expect(height).toBeGreaterThanOrEqual(slot);
    const epoch = await rpc.getEpochInfo().send();
    expect(epoch).toEqual({
      absoluteSlot: epoch.absoluteSlot,
      blockHeight: epoch.absoluteSlot,
      epoch: 0n,
      slotIndex: epoch.absoluteSlot,
      slotsInEpoch: 432_000n,
      transactionCount: BigInt(localnet.chain.transactionCount),
    });
    expect(await rpc.getMinimumBalanceForRentExemption(165n).send()).toBe(TOKEN_ACCOUNT_RENT);
    expect(await rpc.getFirstAvailableBlock().send()).toBe(0n);
    expect(await rpc.getEpochSchedule().send()).toEqual({
      slotsPerEpoch: 432_000n,
      leaderScheduleSlotOffset: 432_000n,
      warmup: false,
      firstNormalEpoch: 0n,
      firstNormalSlot: 0n,
    });
    expect(await rpc.getTransactionCount().send()).toBe(BigInt(localnet.chain.transactionCount));
    const { value: latest } = await rpc.getLatestBlockhash().send();
    expect((await rpc.isBlockhashValid(latest.blockhash).send()).value).toBe(true);
    expect(latest.lastValidBlockHeight).toBeGreaterThanOrEqual(slot + 150n);
  });

  it('airdrops, and reads several accounts at once', async () => {
    const dave = (await generateKeyPairSigner()).address;
    const signature = await rpc.requestAirdrop(dave, lamports(3_000_000n)).send();
    expect((await rpc.getSignatureStatuses([signature]).send()).value[0]?.err).toBeNull();
    const { value } = await rpc
      .getMultipleAccounts([dave, ata(USDC, bob.address)], { encoding: 'base64' })
      .send();
    expect(value.map((account) => [account?.owner, account?.lamports])).toEqual([
      [SYSTEM_PROGRAM, 3_000_000n],
      [TOKEN_PROGRAM, TOKEN_ACCOUNT_RENT],
    ]);
  });

  it('reads balances and accounts: base64, jsonParsed, the legacy base58 default and its limit', async () => {
    expect((await rpc.getBalance(alice.address).send()).value).toBe(2_000_000_000n);
    const aliceUsdc = ata(USDC, alice.address);
    const { value: raw } = await rpc.getAccountInfo(aliceUsdc, { encoding: 'base64' }).send();
    expect(raw).toMatchObject({ owner: TOKEN_PROGRAM, lamports: TOKEN_ACCOUNT_RENT, space: 165n });
    const data = Buffer.from(raw!.data[0], 'base64');
    expect(data.readBigUInt64LE(64)).toBe(50_000_000n);
    const { value: parsed } = await rpc
      .getAccountInfo(aliceUsdc, { encoding: 'jsonParsed' })
      .send();
    expect(parsed!.data).toEqual({
      program: 'spl-token',
      space: 165n,
      parsed: {
        type: 'account',
        info: {
          isNative: false,
          mint: USDC,
          owner: alice.address,
          state: 'initialized',
          tokenAmount: {
            amount: '50000000',
            decimals: 6,
            uiAmount: 50,
            uiAmountString: '50',
          },
        },
      },
    });
    // Without an encoding the validator answers the legacy form: a bare base58 string...
    const { value: wallet } = await rpc.getAccountInfo(alice.address).send();
    expect(wallet).toEqual({
      data: '',
      executable: false,
      lamports: 2_000_000_000n,
      owner: SYSTEM_PROGRAM,
      // u64::MAX, exact: rent-exempt accounts owe no rent epoch.
      rentEpoch: 2n ** 64n - 1n,
      space: 0n,
    });
    // ... which it refuses for more than 128 bytes (-32600), unless sliced.
    expect(await rpcError(rpc.getAccountInfo(aliceUsdc))).toEqual({
      code: -32600,
      message:
        'Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.',
    });
    // (kit's types do not offer a slice of the default encoding: raw JSON-RPC.)
    const sliced = await localnet.result<{ value: { data: string } }>('getAccountInfo', [
      aliceUsdc,
      { dataSlice: { offset: 0, length: 32 } },
    ]);
    expect(sliced.value.data).toBe(USDC); // the token account's mint field
    expect((await rpc.getAccountInfo(carol.address, { encoding: 'base64' }).send()).value).toEqual(
      expect.objectContaining({ data: ['', 'base64'], lamports: 1_000_000_000n }),
    );
    const nobody = (await generateKeyPairSigner()).address;
    expect((await rpc.getAccountInfo(nobody, { encoding: 'base64' }).send()).value).toBeNull();
    expect((await rpc.getBalance(nobody).send()).value).toBe(0n);
  });

  it('answers token queries: accounts by owner, account balance, and the supply of each mint', async () => {
    const { value: accounts } = await rpc
      .getTokenAccountsByOwner(
        alice.address,
        { programId: TOKEN_PROGRAM },
        { encoding: 'jsonParsed' },
      )
      .send();
    expect(accounts.map((a) => a.pubkey)).toEqual([ata(USDC, alice.address)]);
    expect(accounts[0].account.data.parsed.info.tokenAmount.amount).toBe('50000000');
    const { value: pyusd } = await rpc
      .getTokenAccountsByOwner(alice.address, { mint: PYUSD }, { encoding: 'base64' })
      .send();
    expect(pyusd.map((a) => a.pubkey)).toEqual([ata(PYUSD, alice.address, TOKEN_2022_PROGRAM)]);
    expect((await rpc.getTokenAccountBalance(ata(USDC, bob.address)).send()).value).toEqual({
      amount: '10000000',
      decimals: 6,
      uiAmount: 10,
      uiAmountString: '10',
    });

    const supply = await rpc.getTokenSupply(USDC).send();
    expect(typeof supply.context.slot).toBe('bigint');
    expect(supply.value).toEqual({
      amount: usdcMinted.toString(),
      decimals: 6,
      uiAmount: Number(usdcMinted) / 1e6,
      uiAmountString: (Number(usdcMinted) / 1e6).toString(),
    });
    expect(usdcMinted).toBe(61_000_000n);
    expect((await rpc.getTokenSupply(PYUSD).send()).value).toEqual({
      amount: '20000000',
      decimals: 6,
      uiAmount: 20,
      uiAmountString: '20',
    });
    // The validator's refusals, in its words.
    expect(await rpcError(rpc.getTokenSupply(alice.address))).toEqual({
      code: -32602,
      message: 'Invalid param: not a Token mint',
    });
    expect(await rpcError(rpc.getTokenSupply(ata(USDC, alice.address)))).toEqual({
      code: -32602,
      message: 'Invalid param: mint could not be unpacked',
    });
    const nobody = (await generateKeyPairSigner()).address;
    expect(await rpcError(rpc.getTokenSupply(nobody))).toEqual({
      code: -32602,
      message: 'Invalid param: could not find account',
    });
    expect((await rpcError(rpc.getTokenSupply('not-a-key' as Address))).code).toBe(-32602);
  });

  describe('a kit-signed v0 transfer', () => {
    let signature: Signature;
    let slot: bigint;
    let transaction: string;

    beforeAll(async () => {
      // A fresh slot: a block with a parent, and this transfer alone in it (on a busy machine a
      // slot lasts longer, and an earlier test's transaction could share it).
      await slotPassed(localnet.chain.slot());
      const msg = await v0Message(alice, [transferSol(alice, bob.address, 1_000_000n)]);
      transaction = await wire(msg);
      // Simulated first, as wallets do: nothing moves.
      const simulated = await rpc
        .simulateTransaction(transaction as never, { encoding: 'base64', sigVerify: true })
        .send();
      expect(simulated.value.err).toBeNull();
      expect(simulated.value.unitsConsumed).toBeGreaterThan(0n);
      // Accounts as they would be after it, in base64 (base58 is refused, as by a validator).
      const withAccounts = await rpc
        .simulateTransaction(transaction as never, {
          encoding: 'base64',
          accounts: { addresses: [bob.address], encoding: 'base64' },
        })
        .send();
      expect(withAccounts.value.accounts[0]?.lamports).toBe(2_001_000_000n);
      expect(
        await rpcError(
          rpc.simulateTransaction(transaction as never, {
            encoding: 'base64',
            accounts: { addresses: [bob.address], encoding: 'base58' as never },
          }),
        ),
      ).toEqual({ code: -32602, message: 'base58 encoding not supported' });
      expect((await rpc.getBalance(bob.address).send()).value).toBe(2_000_000_000n);
      signature = await rpc.sendTransaction(transaction as never, { encoding: 'base64' }).send();
      slot = await slotOf(signature);
    });

    it('moves the lamports and is confirmed, then finalized', async () => {
      expect((await rpc.getBalance(alice.address).send()).value).toBe(
        2_000_000_000n - 1_000_000n - FEE,
      );
      expect((await rpc.getBalance(bob.address).send()).value).toBe(2_001_000_000n);
      const { value } = await rpc.getSignatureStatuses([signature]).send();
      expect(value[0]).toEqual({
        slot,
        confirmations: expect.any(BigInt) as bigint,
        err: null,
        status: { Ok: null },
        confirmationStatus: 'confirmed',
      });
    });

    it('is in its block: signatures, json, base64, jsonParsed, accounts, none', async () => {
      const common = { maxSupportedTransactionVersion: 0, rewards: false } as const;
      const withSignatures = await rpc
        .getBlock(slot, { ...common, transactionDetails: 'signatures' })
        .send();
      expect(withSignatures).toEqual({
        blockHeight: slot,
        blockTime: await rpc.getBlockTime(slot).send(),
        blockhash: expect.any(String) as string,
        parentSlot: slot - 1n,
        previousBlockhash: (await rpc
          .getBlock(slot - 1n, { ...common, transactionDetails: 'none' })
          .send())!.blockhash,
        signatures: [signature],
      });

      const full = await rpc.getBlock(slot, { maxSupportedTransactionVersion: 0 }).send();
      expect(full!.rewards).toEqual([]);
      expect(full!.transactions).toHaveLength(1);
      const [tx] = full!.transactions;
      expect(tx.version).toBe(0n); // kit reads every number as a bigint here
      expect(tx.transaction.signatures).toEqual([signature]);
      expect(tx.transaction.message).toMatchObject({
        accountKeys: [alice.address, bob.address, SYSTEM_PROGRAM],
        header: {
          numRequiredSignatures: 1,
          numReadonlySignedAccounts: 0,
          numReadonlyUnsignedAccounts: 1,
        },
        addressTableLookups: [],
        instructions: [{ programIdIndex: 2, accounts: [0, 1] }],
      });
      expect(tx.meta).toMatchObject({
        err: null,
        status: { Ok: null },
        fee: FEE,
        preBalances: [2_000_000_000n, 2_000_000_000n, 1n],
        postBalances: [2_000_000_000n - 1_000_000n - FEE, 2_001_000_000n, 1n],
        preTokenBalances: [],
        postTokenBalances: [],
        loadedAddresses: { writable: [], readonly: [] },
        rewards: [],
      });

      const base64 = await rpc
        .getBlock(slot, { ...common, encoding: 'base64', transactionDetails: 'full' })
        .send();
      expect(base64!.transactions[0].transaction).toEqual([transaction, 'base64']);

      const parsed = await rpc
        .getBlock(slot, { ...common, encoding: 'jsonParsed', transactionDetails: 'full' })
        .send();
      expect(parsed!.transactions[0].transaction.message).toEqual({
        accountKeys: [
          { pubkey: alice.address, signer: true, writable: true, source: 'transaction' },
          { pubkey: bob.address, signer: false, writable: true, source: 'transaction' },
          { pubkey: SYSTEM_PROGRAM, signer: false, writable: false, source: 'transaction' },
        ],
        recentBlockhash: expect.any(String) as string,
        instructions: [
          {
            program: 'system',
            programId: SYSTEM_PROGRAM,
            parsed: {
              type: 'transfer',
              info: { source: alice.address, destination: bob.address, lamports: 1_000_000n },
            },
            stackHeight: null,
          },
        ],
        addressTableLookups: [],
      });

      const accounts = await rpc
        .getBlock(slot, { ...common, transactionDetails: 'accounts' })
        .send();
      expect(accounts!.transactions[0]).toEqual({
        transaction: {
          signatures: [signature],
          accountKeys: parsed!.transactions[0].transaction.message.accountKeys,
        },
        meta: {
          err: null,
          status: { Ok: null },
          fee: FEE,
          preBalances: [2_000_000_000n, 2_000_000_000n, 1n],
          postBalances: [2_000_000_000n - 1_000_000n - FEE, 2_001_000_000n, 1n],
          preTokenBalances: [],
          postTokenBalances: [],
        },
        version: 0n,
      });

      const none = await rpc.getBlock(slot, { transactionDetails: 'none', rewards: true }).send();
      expect(Object.keys(none!).sort()).toEqual([
        'blockHeight',
        'blockTime',
        'blockhash',
        'parentSlot',
        'previousBlockhash',
        'rewards',
      ]);
    });

    it('agrees with getTransaction (v0 needs maxSupportedTransactionVersion, as on a validator)', async () => {
      const tx = await rpc
        .getTransaction(signature, { maxSupportedTransactionVersion: 0, encoding: 'json' })
        .send();
      expect(tx).toMatchObject({
        slot,
        blockTime: await rpc.getBlockTime(slot).send(),
        version: 0n,
      });
      const refused = {
        code: -32015,
        message:
          'Transaction version (0) is not supported by the requesting client. Please try the ' +
          'request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
      };
      expect(await rpcError(rpc.getTransaction(signature, { encoding: 'json' }))).toEqual(refused);
      expect(await rpcError(rpc.getBlock(slot))).toEqual(refused);
    });

    it('refuses blocks it does not have: a future slot, an unfinalized one at finalized, processed', async () => {
      const future = BigInt(localnet.chain.slot() + 1000);
      expect(await rpcError(rpc.getBlock(future, { transactionDetails: 'none' }))).toEqual({
        code: -32004,
        message: `Block not available for slot ${future}`,
      });
      expect(await rpcError(rpc.getBlockTime(future))).toEqual({
        code: -32004,
        message: `Block not available for slot ${future}`,
      });
      // Confirmed at once, finalized 8 slots later.
      expect(
        await rpcError(rpc.getBlock(slot, { commitment: 'finalized', transactionDetails: 'none' })),
      ).toEqual({ code: -32004, message: `Block not available for slot ${slot}` });
      expect(
        await rpcError(rpc.getBlock(slot, { commitment: 'processed', transactionDetails: 'none' })),
      ).toEqual({ code: -32602, message: 'Method does not support commitment below `confirmed`' });
    });
  });

  it('reads the genesis block, and block times that advancing the clock does not rewrite', async () => {
    const genesis = await rpc.getBlock(0n, { transactionDetails: 'none', rewards: false }).send();
    expect(genesis).toMatchObject({
      blockHeight: 0n,
      parentSlot: 0n,
      previousBlockhash: '11111111111111111111111111111111',
    });
    expect(genesis!.blockTime).toBe(await rpc.getBlockTime(0n).send());

    const before = localnet.chain.slot();
    const timeBefore = await rpc.getBlockTime(BigInt(before)).send();
    await localnet.result('localnet_advanceClock', [{ seconds: 3600 }]);
    await slotPassed(before + 1);
    expect(await rpc.getBlockTime(BigInt(before)).send()).toBe(timeBefore);
    const after = await rpc.getBlockTime(BigInt(before + 2)).send();
    expect(after).toBeGreaterThanOrEqual(timeBefore + 3600n);
    expect(after).toBeLessThanOrEqual(BigInt(localnet.chain.now()));
  });

  it('moves USDC with a kit-signed legacy transferChecked, parsed in its block', async () => {
    const signature = await send(
      await legacyMessage(alice, [transferChecked(alice, USDC, bob.address, 2_500_000n)]),
    );
    const slot = await slotOf(signature);
    expect((await rpc.getTokenAccountBalance(ata(USDC, bob.address)).send()).value.amount).toBe(
      '12500000',
    );
    const block = await rpc
      .getBlock(slot, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0, rewards: false })
      .send();
    const tx = block!.transactions.find((t) => t.transaction.signatures[0] === signature)!;
    expect(tx.version).toBe('legacy');
    expect(tx.transaction.message.instructions).toEqual([
      {
        program: 'spl-token',
        programId: TOKEN_PROGRAM,
        parsed: {
          type: 'transferChecked',
          info: {
            source: ata(USDC, alice.address),
            mint: USDC,
            destination: ata(USDC, bob.address),
            authority: alice.address,
            tokenAmount: { amount: '2500000', decimals: 6n, uiAmount: 2.5, uiAmountString: '2.5' },
          },
        },
        stackHeight: null,
      },
    ]);
    // Token balances by account index, as the validator lists them.
    const keys = tx.transaction.message.accountKeys.map((key) => key.pubkey);
    const balance = (owner: Address, amount: string, ui: number) => ({
      accountIndex: keys.indexOf(ata(USDC, owner)),
      mint: USDC,
      owner,
      programId: TOKEN_PROGRAM,
      // kit reads a whole uiAmount as a bigint where it has no rule for the path (validator too).
      uiTokenAmount: {
        amount,
        decimals: 6,
        uiAmount: Number.isInteger(ui) ? BigInt(ui) : ui,
        uiAmountString: String(ui),
      },
    });
    const byIndex = (a: { accountIndex: number }, b: { accountIndex: number }) =>
      a.accountIndex - b.accountIndex;
    expect(tx.meta!.preTokenBalances).toEqual(
      [balance(alice.address, '50000000', 50), balance(bob.address, '10000000', 10)].sort(byIndex),
    );
    expect(tx.meta!.postTokenBalances).toEqual(
      [balance(alice.address, '47500000', 47.5), balance(bob.address, '12500000', 12.5)].sort(
        byIndex,
      ),
    );
    // Parsed metadata leaves loadedAddresses out; rewards: false leaves rewards out.
    expect(tx.meta).not.toHaveProperty('loadedAddresses');
    expect(tx.meta).not.toHaveProperty('rewards');
    // A block read without rewards has no rewards field at all.
    expect(block).not.toHaveProperty('rewards');
  });

  it('prices kit-compiled v0 and legacy messages at 5000 lamports a signature (null once expired)', async () => {
    const v0 = await v0Message(alice, [transferSol(alice, bob.address, 1n)]);
    expect((await rpc.getFeeForMessage(compiled(v0)).send()).value).toBe(FEE);
    // Two signers: alice pays, bob moves his own lamports.
    const legacy = await legacyMessage(alice, [transferSol(bob, carol.address, 1n)]);
    expect((await rpc.getFeeForMessage(compiled(legacy)).send()).value).toBe(2n * FEE);
    // A priority fee adds price x limit (200k units for each other instruction here).
    const priced = await v0Message(alice, [
      computeUnitPrice(1_000_000n),
      transferSol(alice, bob.address, 1n),
    ]);
    expect((await rpc.getFeeForMessage(compiled(priced)).send()).value).toBe(FEE + 200_000n);
    // web3.js compiles the same v0 message to the same price.
    const { blockhash } = await latestBlockhash();
    const web3 = new Web3TransactionMessage({
      payerKey: new PublicKey(alice.address),
      recentBlockhash: blockhash,
      instructions: [
        SystemProgram.transfer({
          fromPubkey: new PublicKey(alice.address),
          toPubkey: new PublicKey(bob.address),
          lamports: 1,
        }),
      ],
    }).compileToV0Message();
    const web3Bytes = Buffer.from(web3.serialize()).toString('base64');
    expect(
      (await rpc.getFeeForMessage(web3Bytes as TransactionMessageBytesBase64).send()).value,
    ).toBe(FEE);
    // A blockhash this chain never issued (or one expired): null, as the validator answers.
    const stale = await v0Message(alice, [transferSol(alice, bob.address, 1n)], {
      blockhash: address(new PublicKey(Buffer.alloc(32, 7)).toBase58()) as unknown as Blockhash,
      lastValidBlockHeight: 1n,
    });
    const staleFee = await rpc.getFeeForMessage(compiled(stale)).send();
    expect(staleFee.value).toBeNull();
    expect(typeof staleFee.context.slot).toBe('bigint');
    const malformed = await rpcError(
      rpc.getFeeForMessage(Buffer.from([1, 2, 3]).toString('base64') as never),
    );
    expect(malformed.code).toBe(-32602);
    expect(malformed.message).toMatch(/^invalid transaction message: /);
  });

  describe('an address lookup table', () => {
    let table: Address;

    beforeAll(async () => {
      table = (await generateKeyPairSigner()).address;
      // Written directly (LiteSVM's SlotHashes do not follow localnet's slots, which the
      // program's create instruction checks): an active table, extended at slot 0, no authority.
      const data = Buffer.alloc(56 + 32);
      data.writeUInt32LE(1, 0);
      data.writeBigUInt64LE(2n ** 64n - 1n, 4);
      data.set(getAddressEncoder().encode(carol.address), 56);
      localnet.chain.setAccount(table, {
        lamports: 10_000_000n,
        owner: LOOKUP_TABLE_PROGRAM,
        data,
      });
    });

    it('sends a v0 transfer whose recipient is loaded from the table, recorded as such', async () => {
      const msg = compressTransactionMessageUsingAddressLookupTables(
        await v0Message(alice, [transferSol(alice, carol.address, 7_000n)]),
        { [table]: [carol.address] },
      );
      expect((await rpc.getFeeForMessage(compiled(msg)).send()).value).toBe(FEE);
      const before = (await rpc.getBalance(carol.address).send()).value;
      const signature = await send(msg);
      expect((await rpc.getBalance(carol.address).send()).value).toBe(before + 7_000n);
      const tx = await rpc
        .getTransaction(signature, { maxSupportedTransactionVersion: 0, encoding: 'json' })
        .send();
      expect(tx!.transaction.message.accountKeys).toEqual([alice.address, SYSTEM_PROGRAM]);
      const { message: wireMessage } = tx!.transaction as {
        message: { addressTableLookups?: unknown };
      };
      expect(wireMessage.addressTableLookups).toEqual([
        { accountKey: table, writableIndexes: [0], readonlyIndexes: [] },
      ]);
      expect(tx!.meta!.loadedAddresses).toEqual({ writable: [carol.address], readonly: [] });
      expect(tx!.meta!.postBalances[2]).toBe(before + 7_000n);
      const parsed = await rpc
        .getTransaction(signature, { maxSupportedTransactionVersion: 0, encoding: 'jsonParsed' })
        .send();
      expect(parsed!.transaction.message.accountKeys[2]).toEqual({
        pubkey: carol.address,
        signer: false,
        writable: true,
        source: 'lookupTable',
      });
      // The loaded address is indexed like any other.
      const history = await rpc.getSignaturesForAddress(carol.address, { limit: 1 }).send();
      expect(history[0].signature).toBe(signature);
    });

    it('refuses a table that does not exist with the validator message (-32602)', async () => {
      const missing = (await generateKeyPairSigner()).address;
      const msg = compressTransactionMessageUsingAddressLookupTables(
        await v0Message(alice, [transferSol(alice, carol.address, 1n)]),
        { [missing]: [carol.address] },
      );
      expect(await rpcError(rpc.getFeeForMessage(compiled(msg)))).toEqual({
        code: -32602,
        message:
          "invalid transaction message: Transaction loads an address table account that doesn't exist",
      });
      expect(
        await rpcError(rpc.sendTransaction((await wire(msg)) as never, { encoding: 'base64' })),
      ).toEqual({
        code: -32602,
        message:
          "invalid transaction: Transaction loads an address table account that doesn't exist",
      });
    });
  });

  describe('getProgramAccounts', () => {
    const owner = (wallet: Address) => ({
      memcmp: {
        offset: 32n,
        bytes: wallet as string as Base58EncodedBytes,
        encoding: 'base58' as const,
      },
    });

    it('finds exactly a wallet’s token accounts by owner (offset 32) and size', async () => {
      const found = await rpc
        .getProgramAccounts(TOKEN_PROGRAM, {
          encoding: 'base64',
          filters: [{ dataSize: 165n }, owner(alice.address)],
        })
        .send();
      const byOwner = await rpc
        .getTokenAccountsByOwner(
          alice.address,
          { programId: TOKEN_PROGRAM },
          { encoding: 'base64' },
        )
        .send();
      expect(found.map((a) => a.pubkey)).toEqual([ata(USDC, alice.address)]);
      expect(found).toEqual(byOwner.value);
      // Token-2022 accounts carry extensions (more than 165 bytes): found by owner alone.
      const t22 = await rpc
        .getProgramAccounts(TOKEN_2022_PROGRAM, {
          encoding: 'base64',
          filters: [owner(alice.address)],
        })
        .send();
      expect(t22.map((a) => a.pubkey)).toEqual([ata(PYUSD, alice.address, TOKEN_2022_PROGRAM)]);
      // A wallet with no token accounts: none.
      const nobody = (await generateKeyPairSigner()).address;
      const none = await rpc
        .getProgramAccounts(TOKEN_PROGRAM, { encoding: 'base64', filters: [owner(nobody)] })
        .send();
      expect(none).toEqual([]);
    });

    it('finds every token account of a mint (offset 0, base64 bytes), sorted by address', async () => {
      const found = await rpc
        .getProgramAccounts(TOKEN_PROGRAM, {
          encoding: 'jsonParsed',
          withContext: true,
          filters: [
            {
              memcmp: {
                offset: 0n,
                bytes: Buffer.from(getAddressEncoder().encode(USDC)).toString(
                  'base64',
                ) as Base64EncodedBytes,
                encoding: 'base64',
              },
            },
          ],
        })
        .send();
      expect(typeof found.context.slot).toBe('bigint');
      const expected = [alice.address, bob.address, carol.address]
        .map((wallet) => ata(USDC, wallet))
        .sort((a, b) =>
          Buffer.compare(
            Buffer.from(getAddressEncoder().encode(a)),
            Buffer.from(getAddressEncoder().encode(b)),
          ),
        );
      expect(found.value.map((a) => a.pubkey)).toEqual(expected);
      const amounts = Object.fromEntries(
        found.value.map((a) => {
          const { info } = (a.account.data as { parsed: { info: TokenAccountInfo } }).parsed;
          return [info.owner, info.tokenAmount.amount];
        }),
      );
      expect(amounts).toEqual({
        [alice.address]: '47500000',
        [bob.address]: '12500000',
        [carol.address]: '1000000',
      });
    });

    it('filters mints by size, slices data, and keeps the validator’s base58 limit', async () => {
      const mints = await rpc
        .getProgramAccounts(TOKEN_PROGRAM, { encoding: 'base64', filters: [{ dataSize: 82n }] })
        .send();
      expect(mints.map((a) => a.pubkey)).toEqual([USDC]);
      // The amount field only (offset 64, 8 bytes): in base64, and in the legacy base58 default.
      const bobOnly = [{ dataSize: 165n }, owner(bob.address)];
      const [base64] = await rpc
        .getProgramAccounts(TOKEN_PROGRAM, {
          encoding: 'base64',
          dataSlice: { offset: 64, length: 8 },
          filters: bobOnly,
        })
        .send();
      expect(base64.account.data).toEqual([
        Buffer.from(u64(12_500_000n)).toString('base64'),
        'base64',
      ]);
      expect(base64.account.space).toBe(165n); // the whole account's size, slice or not
      const [base58] = await rpc
        .getProgramAccounts(TOKEN_PROGRAM, {
          dataSlice: { offset: 64, length: 8 },
          filters: bobOnly,
        })
        .send();
      expect(base58.account.data).toBe(bs58.encode(u64(12_500_000n)));
      expect(
        await rpcError(rpc.getProgramAccounts(TOKEN_PROGRAM, { filters: [{ dataSize: 165n }] })),
      ).toEqual({
        code: -32600,
        message:
          'Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.',
      });
    });

    it('takes the tokenAccountState filter and raw byte arrays (raw JSON-RPC)', async () => {
      const body = await localnet.result<Array<{ pubkey: string }>>('getProgramAccounts', [
        TOKEN_2022_PROGRAM,
        {
          encoding: 'base64',
          filters: [
            'tokenAccountState',
            { memcmp: { offset: 32, bytes: [...getAddressEncoder().encode(alice.address)] } },
          ],
        },
      ]);
      expect(body.map((a) => a.pubkey)).toEqual([ata(PYUSD, alice.address, TOKEN_2022_PROGRAM)]);
    });

    it('refuses bad filters with -32602, as the validator does', async () => {
      const filters = (list: unknown[]) =>
        rpcError(
          rpc.getProgramAccounts(TOKEN_PROGRAM, { encoding: 'base64', filters: list as never }),
        );
      expect(await filters(Array.from({ length: 5 }, () => ({ dataSize: 165n })))).toEqual({
        code: -32602,
        message: 'Too many filters provided; max 4',
      });
      expect(
        await filters([{ memcmp: { offset: 0n, bytes: 'I0Ol', encoding: 'base58' } }]),
      ).toEqual({
        code: -32602,
        message: "Invalid param: Base58DecodeError(InvalidCharacter { character: 'I', index: 0 })",
      });
      const big = Buffer.alloc(129, 1).toString('base64');
      expect(await filters([{ memcmp: { offset: 0n, bytes: big, encoding: 'base64' } }])).toEqual({
        code: -32602,
        message: 'Invalid param: DataTooLarge',
      });
      expect(
        (await filters([{ memcmp: { offset: 0n, bytes: '!!', encoding: 'base64' } }])).code,
      ).toBe(-32602);
      expect((await filters([{ owner: alice.address }])).message).toMatch(
        /^Invalid params: unknown variant `owner`/,
      );
      expect((await filters([{ dataSize: -1 }])).code).toBe(-32602);
      expect((await rpcError(rpc.getProgramAccounts('nope' as Address))).code).toBe(-32602);
    });
  });

  describe('getRecentPrioritizationFees', () => {
    it('lists the last 150 complete slots, oldest first, 0 where nothing bid', async () => {
      const before = BigInt(localnet.chain.slot());
      const fees = await rpc.getRecentPrioritizationFees().send();
      const after = BigInt(localnet.chain.slot());
      const last = fees[fees.length - 1].slot;
      // Complete slots only: the one under way is left out.
      expect(last >= before - 1n && last <= after - 1n).toBe(true);
      expect(fees.length).toBe(Math.min(150, Number(last) + 1));
      fees.forEach((fee, i) => {
        expect(fee.slot).toBe(fees[0].slot + BigInt(i));
        expect(fee.prioritizationFee).toBe(0n);
      });
    });

    it('reports what the slot’s transactions bid: the lowest, raised per account to its writers', async () => {
      // Two transactions in one slot: carol pays nothing extra, alice bids 5000 to write bob.
      let pair: { slot: bigint; other: bigint } | undefined;
      for (let attempt = 0; attempt < 5 && !pair; attempt++) {
        const [plain, priced] = await Promise.all([
          v0Message(carol, [transferSol(carol, alice.address, 1n)]),
          v0Message(alice, [computeUnitPrice(5000n), transferSol(alice, bob.address, 1n)]),
        ]);
        const [a, b] = await Promise.all([send(plain), send(priced)]);
        const [slotA, slotB] = [await slotOf(a), await slotOf(b)];
        if (slotA === slotB) pair = { slot: slotA, other: slotB };
      }
      expect(pair).toBeDefined();
      const slot = pair!.slot;
      await slotPassed(Number(slot));
      const at = (list: readonly { slot: bigint; prioritizationFee: bigint }[]) =>
        list.find((fee) => fee.slot === slot)?.prioritizationFee;
      expect(at(await rpc.getRecentPrioritizationFees().send())).toBe(0n);
      expect(at(await rpc.getRecentPrioritizationFees([bob.address]).send())).toBe(5000n);
      expect(at(await rpc.getRecentPrioritizationFees([carol.address]).send())).toBe(0n);
      // alice is written by both: the lowest of the two.
      expect(at(await rpc.getRecentPrioritizationFees([alice.address]).send())).toBe(0n);
    });

    it('refuses more than 128 accounts and bad addresses with -32602', async () => {
      const many = Array.from({ length: 129 }, () => alice.address);
      expect(await rpcError(rpc.getRecentPrioritizationFees(many))).toEqual({
        code: -32602,
        message: 'Too many inputs provided; max 128',
      });
      expect((await rpcError(rpc.getRecentPrioritizationFees(['bad' as Address]))).code).toBe(
        -32602,
      );
    });
  });

  it('serves the finalized view once the finality lag has passed', async () => {
    const { value } = await rpc.getLatestBlockhash().send();
    expect(value.lastValidBlockHeight).toBeGreaterThan(0n);
    await slotPassed(8);
    const block = await rpc
      .getBlock(0n, { commitment: 'finalized', transactionDetails: 'none', rewards: false })
      .send();
    expect(block!.blockHeight).toBe(0n);
    expect(await rpc.getSlot({ commitment: 'finalized' }).send()).toBe(
      BigInt(localnet.chain.finalizedSlot()),
    );
  });
});

describe('Localnet blocks and v0 transactions across a restart (kit)', () => {
  it('keeps a v0 transaction’s loaded addresses, its block and its block time', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'localnet-kit-'));
    const [payer, payee] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
    const table = (await generateKeyPairSigner()).address;
    let localnet: LocalnetUnderTest | undefined = await startLocalnet(dataDir);
    try {
      let rpc = createSolanaRpc(localnet.rpc.url);
      const funded = await localnet.result<{ signatures: Signature[] }>('localnet_faucet', [
        { walletAddress: payer.address, lamports: '1000000000' },
      ]);
      const { value: fundedStatus } = await rpc.getSignatureStatuses(funded.signatures).send();
      // The transfer's block must hold the transfer alone: the faucet's slot is past first.
      const fundedSlot = Math.max(...fundedStatus.map((s) => Number(s!.slot)));
      const data = Buffer.alloc(56 + 32);
      data.writeUInt32LE(1, 0);
      data.writeBigUInt64LE(2n ** 64n - 1n, 4);
      data.set(getAddressEncoder().encode(payee.address), 56);
      localnet.chain.setAccount(table, {
        lamports: 10_000_000n,
        owner: LOOKUP_TABLE_PROGRAM,
        data,
      });
      // A table extended in slot 0 resolves from slot 1 on, as on a validator.
      while (localnet.chain.slot() < Math.max(1, fundedSlot + 1)) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const { value: lifetime } = await rpc.getLatestBlockhash().send();
      const msg = compressTransactionMessageUsingAddressLookupTables(
        appendTransactionMessageInstructions(
          [transferSol(payer, payee.address, 5_000_000n)],
          setTransactionMessageLifetimeUsingBlockhash(
            lifetime,
            setTransactionMessageFeePayerSigner(payer, createTransactionMessage({ version: 0 })),
          ),
        ),
        { [table]: [payee.address] },
      );
      const signed = await signTransactionMessageWithSigners(msg);
      const signature = await rpc
        .sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64' })
        .send();
      const { value } = await rpc.getSignatureStatuses([signature]).send();
      const slot = value[0]!.slot;
      const blockTime = await rpc.getBlockTime(slot).send();
      await localnet.close();
      localnet = undefined;

      localnet = await startLocalnet(dataDir);
      rpc = createSolanaRpc(localnet.rpc.url);
      const tx = await rpc
        .getTransaction(signature, { maxSupportedTransactionVersion: 0, encoding: 'json' })
        .send();
      expect(tx!.meta!.loadedAddresses).toEqual({ writable: [payee.address], readonly: [] });
      expect(tx!.blockTime).toBe(blockTime);
      const history = await rpc.getSignaturesForAddress(payee.address).send();
      expect(history.map((h) => h.signature)).toEqual([signature]);
      const block = await rpc
        .getBlock(slot, { transactionDetails: 'signatures', rewards: false })
        .send();
      expect(block!.signatures).toEqual([signature]);
      expect(block!.blockTime).toBe(blockTime);
      expect(await rpc.getBlockTime(slot).send()).toBe(blockTime);
      expect((await rpc.getBalance(payee.address).send()).value).toBe(5_000_000n);
    } finally {
      await localnet?.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
