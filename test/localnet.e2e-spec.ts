import { findReference, validateTransfer, ValidateTransferError } from '@solana/pay';
import {
  AccountLayout,
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAccount,
  getAssociatedTokenAddressSync,
  getMint,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import {
  Connection,
  Keypair,
  ParsedAccountData,
  PublicKey,
  sendAndConfirmTransaction,
  SendTransactionError,
  SYSVAR_CLOCK_PUBKEY,
  TokenBalance,
  Transaction,
  TransactionInstruction,
} from '@solana/web3.js';
import BigNumber from 'bignumber.js';
import bs58 from 'bs58';
import { existsSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import {
  ChainDirectoryInUseError,
  ChainDirectoryLock,
  LocalnetChain,
} from '@stablecoin-billing/localnet';
import { mintTable } from '../src/solana/mints';
import { LocalnetUnderTest, startLocalnet } from './helpers/localnet-rpc';

const [USDC, PYUSD, USDG] = mintTable('localnet').map((m) => new PublicKey(m.address));
const MEMO_PROGRAM_ID = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
const FEE = 5000;

function ata(mint: PublicKey, owner: PublicKey, program = TOKEN_PROGRAM_ID): PublicKey {
  return getAssociatedTokenAddressSync(mint, owner, true, program);
}

async function tokenBalance(
  connection: Connection,
  account: PublicKey,
  program = TOKEN_PROGRAM_ID,
) {
  return (await getAccount(connection, account, 'confirmed', program)).amount;
}

/** A signed transfer of `amount` base units from `from`'s token account to `to`'s. */
async function signedTransfer(
  connection: Connection,
  from: Keypair,
  to: PublicKey,
  amount: bigint,
  options: { mint?: PublicKey; program?: PublicKey; blockhash?: string } = {},
): Promise<Transaction> {
  const mint = options.mint ?? USDC;
  const program = options.program ?? TOKEN_PROGRAM_ID;
  const blockhash = options.blockhash ?? (await connection.getLatestBlockhash()).blockhash;
  const tx = new Transaction({ feePayer: from.publicKey, recentBlockhash: blockhash }).add(
    createTransferCheckedInstruction(
      ata(mint, from.publicKey, program),
      mint,
      ata(mint, to, program),
      from.publicKey,
      amount,
      6,
      [],
      program,
    ),
  );
  tx.sign(from);
  return tx;
}

// A fixed wait, kept on purpose: sendAndConfirmTransaction confirms with web3.js's block-height
// strategy, whose poll loop (`await sleep(1000); if (done) return;`) leaves a 1 s timer behind
// each confirmation. It sends nothing more (every socket is closed by now), but web3.js neither
// cancels nor exposes it, so there is no condition to wait on; a jest worker whose last file
// this is would outlive jest-worker's 500 ms exit grace and be force-exited with a warning.
afterAll(() => new Promise((resolve) => setTimeout(resolve, 1100)));

describe('Localnet chain over JSON-RPC (web3.js, spl-token, Solana Pay)', () => {
  let localnet: LocalnetUnderTest;
  let connection: Connection;
  const alice = Keypair.generate();
  const bob = Keypair.generate();

  async function fund(wallet: PublicKey, mint: string, amount: string, lamports = '2000000000') {
    return localnet.result<{ signatures: string[] }>('localnet_faucet', [
      { walletAddress: wallet.toBase58(), lamports, mint, amount },
    ]);
  }

  beforeAll(async () => {
    localnet = await startLocalnet();
    connection = new Connection(localnet.rpc.url, 'confirmed');
  });

  afterAll(async () => {
    await localnet.close();
  });

  it('creates the three mints with 6 decimals under their mainnet token programs, as issued', async () => {
    const authority = localnet.chain.mintAuthority.toBase58();
    const expected = [
      [USDC, TOKEN_PROGRAM_ID, 'spl-token'],
      [PYUSD, TOKEN_2022_PROGRAM_ID, 'spl-token-2022'],
      [USDG, TOKEN_2022_PROGRAM_ID, 'spl-token-2022'],
    ] as const;
    for (const [mint, program, programName] of expected) {
      const { value } = await connection.getParsedAccountInfo(mint);
      expect(value?.owner.toBase58()).toBe(program.toBase58());
      const data = value?.data as ParsedAccountData;
      expect(data.program).toBe(programName);
      expect(data.parsed).toMatchObject({
        type: 'mint',
        info: {
          decimals: 6,
          freezeAuthority: authority,
          isInitialized: true,
          mintAuthority: authority,
          supply: '0',
        },
      });
      // USDC is a plain mint; the Token-2022 ones carry their issuer's extensions (the full list
      // is checked in src/localnet/parsed-token-data.spec.ts and test/solana-chain.e2e-spec.ts).
      const extensions = (data.parsed as { info: { extensions?: unknown[] } }).info.extensions;
      expect(extensions?.length ?? 0).toBe(program.equals(TOKEN_PROGRAM_ID) ? 0 : 8);
      const decoded = await getMint(connection, mint, 'confirmed', program);
      expect(decoded.decimals).toBe(6);
      expect(decoded.tlvData.length > 0).toBe(program.equals(TOKEN_2022_PROGRAM_ID));
    }
  });

  it('funds SOL and tokens from the faucet, as indexed transactions', async () => {
    const usdc = await fund(alice.publicKey, 'USDC', '50000000');
    const pyusd = await fund(alice.publicKey, PYUSD.toBase58(), '20000000', '0');
    expect(usdc.signatures).toHaveLength(1);
    expect(await connection.getBalance(alice.publicKey)).toBe(2_000_000_000);
    expect(await tokenBalance(connection, ata(USDC, alice.publicKey))).toBe(50_000_000n);
    const pyusdAccount = ata(PYUSD, alice.publicKey, TOKEN_2022_PROGRAM_ID);
    expect(await tokenBalance(connection, pyusdAccount, TOKEN_2022_PROGRAM_ID)).toBe(20_000_000n);
    expect((await connection.getTokenAccountBalance(pyusdAccount)).value).toEqual({
      amount: '20000000',
      decimals: 6,
      uiAmount: 20,
      uiAmountString: '20',
    });

    const { value: statuses } = await connection.getSignatureStatuses([
      ...usdc.signatures,
      ...pyusd.signatures,
    ]);
    // Confirmed at once; finalized only after the chain's finality lag.
    for (const status of statuses) {
      expect(status).toMatchObject({
        err: null,
        confirmations: expect.any(Number),
        confirmationStatus: 'confirmed',
      });
    }
    const { value: parsed } = await connection.getParsedAccountInfo(pyusdAccount);
    expect((parsed?.data as ParsedAccountData).parsed).toEqual({
      type: 'account',
      info: {
        // What a PYUSD account needs: its mint has a transfer fee and a transfer hook.
        extensions: [
          { extension: 'immutableOwner' },
          { extension: 'transferFeeAmount', state: { withheldAmount: 0 } },
          { extension: 'transferHookAccount', state: { transferring: false } },
        ],
        isNative: false,
        mint: PYUSD.toBase58(),
        owner: alice.publicKey.toBase58(),
        state: 'initialized',
        tokenAmount: { amount: '20000000', decimals: 6, uiAmount: 20, uiAmountString: '20' },
      },
    });
    const owned = await connection.getTokenAccountsByOwner(alice.publicKey, {
      programId: TOKEN_2022_PROGRAM_ID,
    });
    expect(owned.value.map((a) => a.pubkey.toBase58())).toEqual([pyusdAccount.toBase58()]);
    const byMint = await connection.getParsedTokenAccountsByOwner(alice.publicKey, { mint: USDC });
    expect(byMint.value.map((a) => a.account.data.parsed.info.tokenAmount.amount)).toEqual([
      '50000000',
    ]);
  });

  it.each([
    ['USDC', USDC, TOKEN_PROGRAM_ID, 165],
    // 165 + account type + immutableOwner, transferFeeAmount and transferHookAccount entries
    ['PYUSD', PYUSD, TOKEN_2022_PROGRAM_ID, 187],
  ])(
    'moves %s with transferChecked: both balances change exactly',
    async (_symbol, mint, program, accountSize) => {
      const from = ata(mint, alice.publicKey, program);
      const to = ata(mint, bob.publicKey, program);
      const before = await tokenBalance(connection, from, program);
      const lamportsBefore = await connection.getBalance(alice.publicKey);
      const tx = new Transaction().add(
        createAssociatedTokenAccountIdempotentInstruction(
          alice.publicKey,
          to,
          bob.publicKey,
          mint,
          program,
        ),
        createTransferCheckedInstruction(
          from,
          mint,
          to,
          alice.publicKey,
          1_250_000n,
          6,
          [],
          program,
        ),
      );
      // Through the WebSocket: web3.js confirms with signatureSubscribe.
      await sendAndConfirmTransaction(connection, tx, [alice]);

      expect(await tokenBalance(connection, from, program)).toBe(before - 1_250_000n);
      expect(await tokenBalance(connection, to, program)).toBe(1_250_000n);
      const rent = await connection.getMinimumBalanceForRentExemption(accountSize);
      expect(await connection.getBalance(alice.publicKey)).toBe(lamportsBefore - FEE - rent);
    },
  );

  it('refuses an overdraft at preflight (-32002 with logs) and changes nothing', async () => {
    const from = ata(USDC, alice.publicKey);
    const to = ata(USDC, bob.publicKey);
    const [tokensBefore, lamportsBefore] = [
      await tokenBalance(connection, from),
      await connection.getBalance(alice.publicKey),
    ];
    const tx = await signedTransfer(connection, alice, bob.publicKey, tokensBefore + 1n);

    const error: unknown = await connection.sendRawTransaction(tx.serialize()).catch((e) => e);
    expect(error).toBeInstanceOf(SendTransactionError);
    const sendError = error as SendTransactionError;
    expect(sendError.transactionError.message).toBe(
      'Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1',
    );
    expect(sendError.logs).toContain(
      'Program TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA failed: custom program error: 0x1',
    );

    const raw = await localnet.call('sendTransaction', [
      tx.serialize().toString('base64'),
      { encoding: 'base64' },
    ]);
    expect(raw.error?.code).toBe(-32002);
    expect(raw.error?.data?.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
    expect(raw.error?.data?.accounts).toBeNull();
    expect(raw.error?.data?.logs).toEqual(sendError.logs);

    expect(await tokenBalance(connection, from)).toBe(tokensBefore);
    expect(await tokenBalance(connection, to)).toBe(1_250_000n);
    expect(await connection.getBalance(alice.publicKey)).toBe(lamportsBefore); // no fee
    const signature = tx.signatures[0].signature!;
    expect((await connection.getSignatureStatus(bs58.encode(signature))).value).toBeNull();
  });

  it('records a failing transaction sent without preflight, with its error and fee', async () => {
    const from = ata(USDC, alice.publicKey);
    const tokensBefore = await tokenBalance(connection, from);
    const lamportsBefore = await connection.getBalance(alice.publicKey);
    const tx = await signedTransfer(connection, alice, bob.publicKey, tokensBefore + 1n);

    const signature = await connection.sendRawTransaction(tx.serialize(), { skipPreflight: true });
    const { value } = await connection.getSignatureStatus(signature);
    expect(value).toMatchObject({
      err: { InstructionError: [0, { Custom: 1 }] },
      confirmationStatus: 'confirmed',
    });
    expect(await connection.getBalance(alice.publicKey)).toBe(lamportsBefore - FEE);
    expect(await tokenBalance(connection, from)).toBe(tokensBefore);
    const recorded = await connection.getTransaction(signature, {
      maxSupportedTransactionVersion: 0,
    });
    expect(recorded?.meta?.fee).toBe(FEE);
    expect(recorded?.meta?.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
  });

  it('rejects a transaction with an unknown blockhash', async () => {
    const stale = Keypair.generate().publicKey.toBase58(); // a hash this chain never produced
    const tx = await signedTransfer(connection, alice, bob.publicKey, 1n, { blockhash: stale });
    const bytes = tx.serialize().toString('base64');
    for (const skipPreflight of [false, true]) {
      const raw = await localnet.call('sendTransaction', [
        bytes,
        { encoding: 'base64', skipPreflight },
      ]);
      expect(raw.error).toMatchObject({
        code: -32002,
        message: 'Transaction simulation failed: Blockhash not found',
        data: { err: 'BlockhashNotFound', logs: [] },
      });
    }
    await expect(connection.sendRawTransaction(tx.serialize())).rejects.toThrow(
      'Blockhash not found',
    );
    expect(await connection.isBlockhashValid(stale)).toMatchObject({ value: false });
    const { blockhash } = await connection.getLatestBlockhash();
    expect(await connection.isBlockhashValid(blockhash)).toMatchObject({ value: true });
  });

  it('refuses a second send of the same signed bytes (AlreadyProcessed), moving funds once', async () => {
    const from = ata(USDC, alice.publicKey);
    const to = ata(USDC, bob.publicKey);
    const [fromBefore, toBefore] = [
      await tokenBalance(connection, from),
      await tokenBalance(connection, to),
    ];
    const bytes = (await signedTransfer(connection, alice, bob.publicKey, 10_000n)).serialize();
    const signature = await connection.sendRawTransaction(bytes);
    for (const skipPreflight of [false, true]) {
      const raw = await localnet.call('sendTransaction', [
        bytes.toString('base64'),
        { encoding: 'base64', skipPreflight },
      ]);
      expect(raw.error).toMatchObject({
        code: -32002,
        message: 'Transaction simulation failed: This transaction has already been processed',
        data: { err: 'AlreadyProcessed' },
      });
    }
    expect((await connection.getSignatureStatus(signature)).value?.err).toBeNull();
    expect(await tokenBalance(connection, from)).toBe(fromBefore - 10_000n);
    expect(await tokenBalance(connection, to)).toBe(toBefore + 10_000n);
  });

  describe('a Solana Pay transfer with a reference key', () => {
    const merchant = Keypair.generate().publicKey;
    const reference = Keypair.generate().publicKey;
    let signature: string;

    beforeAll(async () => {
      await fund(merchant, 'USDC', '1', '10000000'); // creates the merchant's token account
      const transfer = createTransferCheckedInstruction(
        ata(USDC, alice.publicKey),
        USDC,
        ata(USDC, merchant),
        alice.publicKey,
        1_500_000n,
        6,
      );
      transfer.keys.push({ pubkey: reference, isSigner: false, isWritable: false });
      const tx = new Transaction().add(
        new TransactionInstruction({
          programId: MEMO_PROGRAM_ID,
          keys: [],
          data: Buffer.from('invoice #42'),
        }),
        transfer,
      );
      signature = await sendAndConfirmTransaction(connection, tx, [alice]);
    });

    it('is found by getSignaturesForAddress on the reference, memo formatted as the RPC does', async () => {
      const found = await connection.getSignaturesForAddress(reference);
      expect(found).toHaveLength(1);
      const { slot, blockTime, ...rest } = found[0];
      expect(rest).toEqual({
        signature,
        err: null,
        memo: '[11] invoice #42',
        confirmationStatus: expect.stringMatching(/^(confirmed|finalized)$/),
      });
      expect(typeof slot).toBe('number');
      expect(typeof blockTime).toBe('number');
      expect(await connection.getSignaturesForAddress(reference, { before: signature })).toEqual(
        [],
      );
    });

    it('passes @solana/pay findReference and validateTransfer, and fails a wrong amount', async () => {
      const found = await findReference(connection, reference, { finality: 'confirmed' });
      expect(found.signature).toBe(signature);
      const fields = { recipient: merchant, splToken: USDC, reference, memo: 'invoice #42' };
      const valid = await validateTransfer(connection, signature, {
        ...fields,
        amount: new BigNumber('1.5'),
      });
      expect(valid.transaction.signatures[0]).toBe(signature);
      await expect(
        validateTransfer(connection, signature, { ...fields, amount: new BigNumber('1.500001') }),
      ).rejects.toEqual(new ValidateTransferError('amount not transferred'));
    });

    it('getTransaction returns pre and post token balances that match the move', async () => {
      const tx = await connection.getTransaction(signature, {
        commitment: 'confirmed',
        maxSupportedTransactionVersion: 0,
      });
      expect(tx?.version).toBe('legacy');
      const keys = tx!.transaction.message.staticAccountKeys.map((k) => k.toBase58());
      const aliceIndex = keys.indexOf(ata(USDC, alice.publicKey).toBase58());
      const merchantIndex = keys.indexOf(ata(USDC, merchant).toBase58());
      const balance = (list: TokenBalance[] | null | undefined, index: number) =>
        list?.find((b) => b.accountIndex === index);
      const alicePre = BigInt(
        balance(tx!.meta!.preTokenBalances, aliceIndex)!.uiTokenAmount.amount,
      );
      expect(balance(tx!.meta!.postTokenBalances, aliceIndex)?.uiTokenAmount.amount).toBe(
        (alicePre - 1_500_000n).toString(),
      );
      expect(balance(tx!.meta!.preTokenBalances, merchantIndex)).toEqual({
        accountIndex: merchantIndex,
        mint: USDC.toBase58(),
        owner: merchant.toBase58(),
        programId: TOKEN_PROGRAM_ID.toBase58(),
        uiTokenAmount: { amount: '1', decimals: 6, uiAmount: 0.000001, uiAmountString: '0.000001' },
      });
      expect(balance(tx!.meta!.postTokenBalances, merchantIndex)?.uiTokenAmount).toEqual({
        amount: '1500001',
        decimals: 6,
        uiAmount: 1.500001,
        uiAmountString: '1.500001',
      });
      expect(tx!.meta!.fee).toBe(FEE);
      expect(tx!.meta!.err).toBeNull();
      expect(tx!.meta!.preBalances[0] - tx!.meta!.postBalances[0]).toBe(FEE);
    });
  });

  it('moves the chain clock with localnet_advanceClock (Clock sysvar included)', async () => {
    const frozen = Date.now();
    const spy = jest.spyOn(Date, 'now').mockReturnValue(frozen);
    try {
      const before = await localnet.result<{ unixTimestamp: number; slot: number }>(
        'localnet_getClock',
      );
      const moved = await localnet.result<{ unixTimestamp: number }>('localnet_advanceClock', [
        { seconds: 86_400 },
      ]);
      expect(moved.unixTimestamp).toBe(before.unixTimestamp + 86_400);
      const clock = await connection.getAccountInfo(SYSVAR_CLOCK_PUBKEY);
      expect(clock?.data.readBigUInt64LE(0)).toBe(BigInt(before.slot)); // slot
      expect(clock?.data.readBigInt64LE(32)).toBe(BigInt(before.unixTimestamp + 86_400));
      const after = await localnet.result<{ unixTimestamp: number }>('localnet_getClock');
      expect(after.unixTimestamp).toBe(before.unixTimestamp + 86_400);
    } finally {
      spy.mockRestore();
    }
  });

  describe('who may drive the chain: the dev key for localnet_*, never a web page', () => {
    const post = (body: unknown, headers: Record<string, string>) =>
      fetch(localnet.rpc.url, { method: 'POST', headers, body: JSON.stringify(body) });
    const advance = (seconds: number) => ({
      jsonrpc: '2.0',
      id: 7,
      method: 'localnet_advanceClock',
      params: [{ seconds }],
    });
    const json = { 'content-type': 'application/json' };

    it('refuses every localnet_* method without the dev key (401, -32050), batches included; nothing moves', async () => {
      const before = await localnet.result<{ unixTimestamp: number }>('localnet_getClock');
      for (const headers of [json, { ...json, authorization: 'Bearer dk_not_the_key' }]) {
        for (const method of [
          'localnet_advanceClock',
          'localnet_faucet',
          'localnet_setFaults',
          'localnet_getClock',
        ]) {
          const res = await post(
            { jsonrpc: '2.0', id: 1, method, params: [{ seconds: 60 }] },
            headers,
          );
          expect(res.status).toBe(401);
          expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32050);
        }
      }
      const batch = await post([advance(3600), { jsonrpc: '2.0', id: 8, method: 'getSlot' }], json);
      const answers = (await batch.json()) as {
        id: number;
        error?: { code: number };
        result?: number;
      }[];
      expect(answers.find((a) => a.id === 7)?.error?.code).toBe(-32050);
      expect(answers.find((a) => a.id === 8)?.result).toEqual(expect.any(Number));
      // A notification (no id) is refused too: it would otherwise run without an answer.
      await post(
        { jsonrpc: '2.0', method: 'localnet_advanceClock', params: [{ seconds: 3600 }] },
        json,
      );
      const after = await localnet.result<{ unixTimestamp: number }>('localnet_getClock');
      expect(after.unixTimestamp - before.unixTimestamp).toBeLessThan(60);
    });

    it("keeps Solana's own methods open, as a validator does", async () => {
      const res = await post({ jsonrpc: '2.0', id: 1, method: 'getSlot' }, json);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { result: number }).result).toEqual(expect.any(Number));
    });

    it('answers only application/json (a form or text/plain body needs no preflight) and no browser Origin', async () => {
      const key = { authorization: localnet.devAuth.Authorization };
      for (const type of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=utf-16',
      ]) {
        const res = await post(advance(3600), { ...key, 'content-type': type });
        expect(res.status).toBe(415);
      }
      const res = await post(advance(3600), { ...key, ...json, origin: 'https://evil.example' });
      expect(res.status).toBe(403);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(
        (
          await post(
            { jsonrpc: '2.0', id: 1, method: 'getSlot' },
            { ...json, 'content-type': 'application/json; charset=utf-8' },
          )
        ).status,
      ).toBe(200);
    });

    it('never moves the clock past 2200-01-01, nor by a huge or fractional amount', async () => {
      const before = await localnet.result<{ unixTimestamp: number }>('localnet_getClock');
      const ceiling = Date.UTC(2200, 0, 1) / 1000;
      for (const seconds of [9007199254740991, ceiling - before.unixTimestamp + 10, 1.5, -1]) {
        const body = await localnet.call('localnet_advanceClock', [{ seconds }]);
        expect(body.error?.code).toBe(-32602);
      }
      const after = await localnet.result<{ unixTimestamp: number }>('localnet_getClock');
      expect(after.unixTimestamp - before.unixTimestamp).toBeLessThan(60);
    });
  });

  it('notifies signatureSubscribe once, when processed or at once if already, then unsubscribes', async () => {
    const socket = new WebSocket(localnet.rpc.wsUrl);
    const messages: Array<Record<string, unknown>> = [];
    const waiters: Array<() => void> = [];
    socket.on('message', (data: Buffer) => {
      messages.push(JSON.parse(data.toString()) as Record<string, unknown>);
      waiters.splice(0).forEach((wake) => wake());
    });
    const next = async (count: number) => {
      while (messages.length < count) await new Promise<void>((wake) => waiters.push(wake));
      return messages[count - 1];
    };
    await new Promise((resolve) => socket.once('open', resolve));
    try {
      const tx = await signedTransfer(connection, alice, bob.publicKey, 7n);
      const signature = bs58.encode(tx.signatures[0].signature!);
      socket.send(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'signatureSubscribe',
          params: [signature],
        }),
      );
      const subscription = (await next(1)).result as number;
      expect(typeof subscription).toBe('number');

      await connection.sendRawTransaction(tx.serialize());
      const { slot } = (await connection.getSignatureStatus(signature)).value!;
      expect(await next(2)).toEqual({
        jsonrpc: '2.0',
        method: 'signatureNotification',
        params: { result: { context: { slot }, value: { err: null } }, subscription },
      });
      socket.send(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'signatureUnsubscribe',
          params: [subscription],
        }),
      );
      expect((await next(3)).error).toEqual({ code: -32602, message: 'Invalid subscription id.' });

      socket.send(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 3,
          method: 'signatureSubscribe',
          params: [signature],
        }),
      );
      const again = (await next(4)).result as number;
      expect(await next(5)).toEqual({
        jsonrpc: '2.0',
        method: 'signatureNotification',
        params: { result: { context: { slot }, value: { err: null } }, subscription: again },
      });
    } finally {
      socket.close();
    }
  });

  it('refuses malformed transactions with -32602 (LiteSVM never sees them) and stays up', async () => {
    for (const bytes of [Buffer.from([1, 2, 3]), Buffer.alloc(200, 0xff)]) {
      const raw = await localnet.call('sendTransaction', [
        bytes.toString('base64'),
        { encoding: 'base64' },
      ]);
      expect(raw.error?.code).toBe(-32602);
      expect(raw.error?.message).toMatch(/^invalid transaction: /);
    }
    const tx = await signedTransfer(connection, alice, bob.publicKey, 1n);
    tx.signatures[0].signature![0] ^= 1;
    const forged = await localnet.call('sendTransaction', [
      bs58.encode(tx.serialize({ verifySignatures: false })),
    ]);
    expect(forged.error).toEqual({
      code: -32003,
      message: 'Transaction signature verification failure',
    });
    expect(await localnet.result('getHealth')).toBe('ok');
  });

  it('refuses, even without preflight, what fails before execution (no fee, no record)', async () => {
    const broke = Keypair.generate(); // never funded: cannot pay the fee
    const { blockhash } = await connection.getLatestBlockhash();
    const tx = new Transaction({ feePayer: broke.publicKey, recentBlockhash: blockhash }).add(
      new TransactionInstruction({ programId: MEMO_PROGRAM_ID, keys: [], data: Buffer.from('x') }),
    );
    tx.sign(broke);
    const raw = await localnet.call('sendTransaction', [
      tx.serialize().toString('base64'),
      { encoding: 'base64', skipPreflight: true },
    ]);
    expect(raw.error).toMatchObject({
      code: -32002,
      message:
        'Transaction simulation failed: Attempt to debit an account but found no record of a prior credit.',
      data: { err: 'AccountNotFound' },
    });
    expect((await connection.getSignatureStatus(bs58.encode(tx.signature!))).value).toBeNull();
  });

  it('refuses bad faucet and clock requests with -32602', async () => {
    const wallet = Keypair.generate().publicKey.toBase58();
    const refused = [
      [{ walletAddress: wallet, mint: 'DOGE', amount: '1' }, 'Invalid params: unknown mint: DOGE'],
      [
        { walletAddress: wallet },
        'Invalid params: nothing to fund: give lamports, or a mint and an amount',
      ],
      [
        { walletAddress: 'not-a-key', lamports: 1 },
        'Invalid param: walletAddress is not a valid public key',
      ],
      [
        { walletAddress: wallet, mint: 'USDC', amount: '-5' },
        'Invalid params: amount must be a non-negative integer (u64)',
      ],
    ] as const;
    for (const [request, message] of refused) {
      expect((await localnet.call('localnet_faucet', [request])).error).toEqual({
        code: -32602,
        message,
      });
    }
    expect((await localnet.call('localnet_advanceClock', [{ seconds: -1 }])).error?.code).toBe(
      -32602,
    );
  });

  it('simulates without recording, prices messages, airdrops, and describes the cluster', async () => {
    const before = await tokenBalance(connection, ata(USDC, alice.publicKey));
    const transfer = (amount: bigint) =>
      new Transaction({ feePayer: alice.publicKey }).add(
        createTransferCheckedInstruction(
          ata(USDC, alice.publicKey),
          USDC,
          ata(USDC, bob.publicKey),
          alice.publicKey,
          amount,
          6,
        ),
      );
    // Unsigned (web3.js asks for no signature check), with the accounts after the fact.
    const ok = await connection.simulateTransaction(transfer(3n), undefined, [
      ata(USDC, bob.publicKey),
    ]);
    expect(ok.value.err).toBeNull();
    expect(ok.value.logs?.length).toBeGreaterThan(0);
    const bobAfter = AccountLayout.decode(Buffer.from(ok.value.accounts![0]!.data[0], 'base64'));
    expect(bobAfter.amount).toBe((await tokenBalance(connection, ata(USDC, bob.publicKey))) + 3n);
    const overdraft = await connection.simulateTransaction(transfer(before + 1n));
    expect(overdraft.value.err).toEqual({ InstructionError: [0, { Custom: 1 }] });
    expect(await tokenBalance(connection, ata(USDC, alice.publicKey))).toBe(before);

    const message = transfer(1n);
    message.recentBlockhash = (await connection.getLatestBlockhash()).blockhash;
    expect((await connection.getFeeForMessage(message.compileMessage())).value).toBe(FEE);

    const dropped = Keypair.generate().publicKey;
    const airdrop = await connection.requestAirdrop(dropped, 1_000_000_000);
    expect((await connection.getSignatureStatus(airdrop)).value?.err).toBeNull();
    expect(await connection.getBalance(dropped)).toBe(1_000_000_000);

    const slot = await connection.getSlot();
    const epoch = await connection.getEpochInfo();
    expect(epoch).toMatchObject({ epoch: 0, slotsInEpoch: 432_000 });
    expect(epoch.absoluteSlot).toBeGreaterThanOrEqual(slot);
    expect(epoch.blockHeight).toBe(epoch.absoluteSlot);
    expect(await connection.getGenesisHash()).toBe(localnet.chain.genesisHash);
    expect((await connection.getVersion())['solana-core']).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('answers batches, and unknown methods with -32601', async () => {
    const res = await fetch(localnet.rpc.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'getHealth' },
        { jsonrpc: '2.0', id: 2, method: 'getNoSuchThing', params: [] },
      ]),
    });
    expect(await res.json()).toEqual([
      { jsonrpc: '2.0', id: 1, result: 'ok' },
      { jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'Method not found' } },
    ]);
  });
});

describe('Localnet persistence', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'localnet-test-'));
  });

  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps balances, the signature index, the clock and the mint authority across a restart', async () => {
    const wallet = Keypair.generate();
    const payee = Keypair.generate().publicKey;
    let first: LocalnetUnderTest | undefined = await startLocalnet(dataDir);
    let signatures: string[];
    let blockhash: string;
    try {
      const connection = new Connection(first.rpc.url, 'confirmed');
      await first.result('localnet_faucet', [
        {
          walletAddress: wallet.publicKey.toBase58(),
          lamports: 1_000_000_000,
          mint: 'USDC',
          amount: '3000000',
        },
      ]);
      const tx = new Transaction().add(
        createAssociatedTokenAccountIdempotentInstruction(
          wallet.publicKey,
          ata(USDC, payee),
          payee,
          USDC,
        ),
        createTransferCheckedInstruction(
          ata(USDC, wallet.publicKey),
          USDC,
          ata(USDC, payee),
          wallet.publicKey,
          1_000_000n,
          6,
        ),
      );
      await sendAndConfirmTransaction(connection, tx, [wallet]);
      await first.result('localnet_advanceClock', [{ seconds: 3600 }]);
      signatures = (await connection.getSignaturesForAddress(wallet.publicKey)).map(
        (s) => s.signature,
      );
      expect(signatures).toHaveLength(2);
      blockhash = (await connection.getLatestBlockhash()).blockhash;
    } finally {
      await first.close();
      first = undefined;
    }

    const keypairFile: unknown = JSON.parse(
      await readFile(join(dataDir, 'localnet', 'mint-authority.json'), 'utf8'),
    );
    expect(Array.isArray(keypairFile) && keypairFile.length).toBe(64);

    const second = await startLocalnet(dataDir);
    try {
      const connection = new Connection(second.rpc.url, 'confirmed');
      expect(await tokenBalance(connection, ata(USDC, wallet.publicKey))).toBe(2_000_000n);
      expect(await tokenBalance(connection, ata(USDC, payee))).toBe(1_000_000n);
      const found = await connection.getSignaturesForAddress(wallet.publicKey);
      expect(found.map((s) => s.signature)).toEqual(signatures);
      const transfer = await connection.getTransaction(signatures[0], {
        maxSupportedTransactionVersion: 0,
      });
      const after = transfer?.meta?.postTokenBalances?.map((b) => [
        b.owner,
        b.uiTokenAmount.amount,
      ]);
      expect(new Map(after as Array<[string, string]>)).toEqual(
        new Map([
          [wallet.publicKey.toBase58(), '2000000'],
          [payee.toBase58(), '1000000'],
        ]),
      );
      // A blockhash handed out before the restart is still good.
      expect((await connection.isBlockhashValid(blockhash)).value).toBe(true);

      const frozen = Date.now();
      const spy = jest.spyOn(Date, 'now').mockReturnValue(frozen);
      try {
        const clock = await second.result<{ unixTimestamp: number }>('localnet_getClock');
        expect(clock.unixTimestamp).toBe(Math.floor(frozen / 1000) + 3600);
      } finally {
        spy.mockRestore();
      }

      // The persisted mint authority still mints.
      await second.result('localnet_faucet', [
        { walletAddress: wallet.publicKey.toBase58(), mint: 'USDC', amount: '5' },
      ]);
      expect(await tokenBalance(connection, ata(USDC, wallet.publicKey))).toBe(2_000_005n);
    } finally {
      await second.close();
    }
  });
});

describe('One chain per data directory', () => {
  it('a second chain on the same data directory is refused while the first runs, and a stale lock is taken over', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'localnet-lock-'));
    try {
      const first = await LocalnetChain.open({ dataDir, mints: mintTable('localnet') });
      first.announce('http://127.0.0.1:18999');
      await expect(LocalnetChain.open({ dataDir, mints: mintTable('localnet') })).rejects.toThrow(
        ChainDirectoryInUseError,
      );
      // Another process holding it (alive: this test's parent) is refused with its URL.
      await first.close();
      writeFileSync(
        join(dataDir, 'localnet', 'localnet.pid'),
        JSON.stringify({ pid: process.ppid, url: 'http://127.0.0.1:18999' }),
      );
      await expect(LocalnetChain.open({ dataDir, mints: mintTable('localnet') })).rejects.toThrow(
        /already runs on .*SOLANA_RPC_URL=http:\/\/127\.0\.0\.1:18999/,
      );
      // A lock left by a process that is gone (kill -9) is stale: the next open takes it over.
      writeFileSync(
        join(dataDir, 'localnet', 'localnet.pid'),
        JSON.stringify({ pid: 2 ** 22 + 12345, url: 'http://127.0.0.1:18999' }),
      );
      const again = await LocalnetChain.open({ dataDir, mints: mintTable('localnet') });
      expect(ChainDirectoryLock.owner(join(dataDir, 'localnet'))).toEqual({ pid: process.pid });
      await again.close();
      expect(existsSync(join(dataDir, 'localnet', 'localnet.pid'))).toBe(false);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
