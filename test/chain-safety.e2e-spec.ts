import {
  createAssociatedTokenAccountIdempotentInstruction,
  createFreezeAccountInstruction,
  createInitializeMint2Instruction,
  createInitializeTransferFeeConfigInstruction,
  createTransferCheckedWithFeeInstruction,
  createMintToCheckedInstruction,
  createTransferCheckedInstruction,
  ExtensionType,
  getAssociatedTokenAddressSync,
  getMintLen,
  MINT_SIZE,
  TOKEN_2022_PROGRAM_ID,
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
import { randomUUID } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import WebSocket from 'ws';
import { ChainPort, ChargeInput, SignedTx } from '../src/solana/chain.port';
import { mintTable, MintSymbol } from '../src/solana/mints';
import { RpcChainAdapter, RpcChainOptions } from '../src/solana/rpc-chain.adapter';
import { startTestChain, TEST_DEV_AUTH, TestChain } from './helpers/test-chain';

/**
 * The chain layer's money-safety properties on localnet: payments cannot be hidden by spam,
 * amounts come from balances, a landed transaction is never reported `rejected`, frozen accounts
 * are a final failure, and the service key's secret never leaves the adapter.
 */
describe('Chain layer safety on localnet', () => {
  let tc: TestChain;
  let connection: Connection;
  let adapter: RpcChainAdapter;
  const serviceKey = Keypair.generate();
  const authority = Keypair.generate(); // mint and freeze authority of the test's own mints

  const adapterWith = (overrides: Partial<RpcChainOptions> = {}, url?: string) =>
    new RpcChainAdapter(url ? new Connection(url, 'confirmed') : connection, {
      cluster: 'localnet',
      scheme: 'token-delegate',
      commitment: 'confirmed',
      mints: mintTable('localnet'),
      serviceKey,
      approvalPeriods: 12,
      ...overrides,
    });

  beforeAll(async () => {
    tc = await startTestChain();
    connection = new Connection(tc.url, 'confirmed');
    adapter = adapterWith();
    for (const key of [serviceKey.publicKey, authority.publicKey]) await fundSol(key);
  });
  afterAll(async () => {
    await tc.close();
  });

  async function rpc<T>(method: string, params: unknown[]): Promise<T> {
    const res = await fetch(tc.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...TEST_DEV_AUTH },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const body = (await res.json()) as { result: T; error?: unknown };
    if (body.error) throw new Error(JSON.stringify(body.error));
    return body.result;
  }

  async function fundSol(wallet: PublicKey): Promise<void> {
    await rpc('localnet_faucet', [{ walletAddress: wallet.toBase58(), lamports: '1000000000' }]);
  }

  async function fund(wallet: PublicKey, mint: MintSymbol, tokens: bigint): Promise<void> {
    await rpc('localnet_faucet', [
      {
        walletAddress: wallet.toBase58(),
        lamports: '1000000000',
        mint: (await adapter.mint(mint)).address,
        amount: String(tokens),
      },
    ]);
  }

  /** Signs with `signers` (the first pays), sends, and expects it to land. */
  async function send(instructions: TransactionInstruction[], ...signers: Keypair[]) {
    const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash();
    const tx = new Transaction({ feePayer: signers[0].publicKey, blockhash, lastValidBlockHeight });
    tx.add(...instructions).sign(...signers);
    const outcome = await adapter.sendAndConfirm({
      signature: bs58.encode(tx.signature!),
      transaction: tx.serialize().toString('base64'),
      lastValidBlockHeight,
    });
    expect(outcome).toMatchObject({ state: 'succeeded' });
    return bs58.encode(tx.signature!);
  }

  async function signAndSend(
    unsigned: { transaction: string; lastValidBlockHeight: number },
    signer: Keypair,
  ) {
    const tx = Transaction.from(Buffer.from(unsigned.transaction, 'base64'));
    tx.partialSign(signer);
    return adapter.sendAndConfirm({
      signature: bs58.encode(tx.signature!),
      transaction: tx.serialize().toString('base64'),
      lastValidBlockHeight: unsigned.lastValidBlockHeight,
    });
  }

  /** A 6-decimal mint of the test's own, with a freeze authority (and optionally a fee). */
  async function createMint(program: PublicKey, feeBps?: number): Promise<PublicKey> {
    const mint = Keypair.generate();
    const space = feeBps === undefined ? MINT_SIZE : getMintLen([ExtensionType.TransferFeeConfig]);
    const lamports = await connection.getMinimumBalanceForRentExemption(space);
    const instructions = [
      SystemProgram.createAccount({
        fromPubkey: authority.publicKey,
        newAccountPubkey: mint.publicKey,
        space,
        lamports,
        programId: program,
      }),
    ];
    if (feeBps !== undefined) {
      instructions.push(
        createInitializeTransferFeeConfigInstruction(
          mint.publicKey,
          authority.publicKey,
          authority.publicKey,
          feeBps,
          1_000_000_000n,
          program,
        ),
      );
    }
    instructions.push(
      createInitializeMint2Instruction(
        mint.publicKey,
        6,
        authority.publicKey,
        authority.publicKey,
        program,
      ),
    );
    await send(instructions, authority, mint);
    return mint.publicKey;
  }

  /** Creates `owner`'s associated token account of a configured mint, paid by `payer`. */
  async function openAccount(owner: string, mint: 'USDC' | 'PYUSD' | 'USDG', payer: Keypair) {
    const m = await adapter.mint(mint);
    await send(
      [
        createAssociatedTokenAccountIdempotentInstruction(
          payer.publicKey,
          new PublicKey(await adapter.tokenAccount(owner, mint)),
          new PublicKey(owner),
          new PublicKey(m.address),
          new PublicKey(m.tokenProgram),
        ),
      ],
      payer,
    );
  }

  /** Creates `owner`'s token account of a test mint and mints `amount` into it. */
  async function mintTo(mint: PublicKey, program: PublicKey, owner: PublicKey, amount: bigint) {
    const ata = getAssociatedTokenAddressSync(mint, owner, true, program);
    await send(
      [
        createAssociatedTokenAccountIdempotentInstruction(
          authority.publicKey,
          ata,
          owner,
          mint,
          program,
        ),
        ...(amount > 0n
          ? [createMintToCheckedInstruction(mint, ata, authority.publicKey, amount, 6, [], program)]
          : []),
      ],
      authority,
    );
    return ata;
  }

  describe('payment scans cannot be starved by spam', () => {
    it('a payment followed by 6,000 spam transfers carrying its reference is found by both scans', async () => {
      const payer = Keypair.generate();
      const spammer = Keypair.generate();
      const merchant = Keypair.generate().publicKey.toBase58();
      await fund(payer.publicKey, 'USDC', 50_000_000n);
      await fund(spammer.publicKey, 'USDC', 100_000_000n);
      const reference = Keypair.generate().publicKey.toBase58();
      const merchantAccount = await adapter.tokenAccount(merchant, 'USDC');
      await openAccount(merchant, 'USDC', payer); // what the merchant's registration does
      const unsigned = await adapter.buildInvoicePayment({
        payer: payer.publicKey.toBase58(),
        merchantWallet: merchant,
        mint: 'USDC',
        amount: 10_000_000n,
        reference,
      });
      expect(await signAndSend(unsigned, payer)).toMatchObject({ state: 'succeeded' });

      // 6,000 cheap transfers into the merchant's account, each carrying the same public
      // reference (amounts differ so no two are the same bytes), written straight to the chain.
      const usdc = new PublicKey((await adapter.mint('USDC')).address);
      const source = getAssociatedTokenAddressSync(usdc, spammer.publicKey);
      // One blockhash lives 150 slots (60 s): on a busy machine 6,000 signatures take longer, so
      // take a fresh one from the chain every 500.
      let blockhash = tc.chain.latestBlockhash().blockhash;
      for (let i = 1; i <= 6_000; i++) {
        if (i % 500 === 0) blockhash = tc.chain.latestBlockhash().blockhash;
        const transfer = createTransferCheckedInstruction(
          source,
          usdc,
          new PublicKey(merchantAccount),
          spammer.publicKey,
          BigInt(i),
          6,
        );
        transfer.keys.push({
          pubkey: new PublicKey(reference),
          isSigner: false,
          isWritable: false,
        });
        const tx = new Transaction({ feePayer: spammer.publicKey, recentBlockhash: blockhash }).add(
          transfer,
        );
        tx.sign(spammer);
        tc.chain.sendTransaction(tx.serialize({ verifySignatures: false }), {
          skipPreflight: true,
        });
      }
      const newest = await connection.getSignaturesForAddress(new PublicKey(reference), {
        limit: 1,
      });

      const byAccount = await adapter.scanTokenAccount(merchantAccount, null);
      const byReference = await adapter.scanReference(reference, null);
      // The account's history also holds its creation (no tokens moved: no receipt).
      expect(byAccount.signaturesScanned).toBe(6_002);
      expect(byReference.signaturesScanned).toBe(6_001);
      for (const scan of [byAccount, byReference]) {
        expect(scan.receipts).toHaveLength(6_001);
        expect(scan.receipts[0]).toMatchObject({
          received: 10_000_000n,
          transfers: [expect.objectContaining({ amount: 10_000_000n, references: [reference] })],
          payer: payer.publicKey.toBase58(),
          destination: merchantAccount,
          references: [reference],
        });
        expect(scan.receipts[6_000]).toMatchObject({
          received: 6_000n,
          payer: spammer.publicKey.toBase58(),
        });
        expect(scan.cursor).toBe(newest[0].signature);
      }

      // From the stored cursor, nothing is read twice, and the next payment is all there is.
      expect(await adapter.scanTokenAccount(merchantAccount, byAccount.cursor)).toEqual({
        receipts: [],
        cursor: byAccount.cursor,
        signaturesScanned: 0,
        complete: true,
      });
      const next = await adapter.buildInvoicePayment({
        payer: payer.publicKey.toBase58(),
        merchantWallet: merchant,
        mint: 'USDC',
        amount: 2_500_000n,
        reference,
      });
      expect(await signAndSend(next, payer)).toMatchObject({ state: 'succeeded' });
      const after = await adapter.scanReference(reference, byReference.cursor);
      expect(after.signaturesScanned).toBe(1);
      expect(after.receipts).toMatchObject([{ received: 2_500_000n }]);
    }, 180_000);
  });

  describe('payments are read per transfer instruction, checked against token balances', () => {
    it('two transfers into the merchant in one transaction: each instruction with what it brought', async () => {
      const payer = Keypair.generate();
      const merchant = Keypair.generate().publicKey.toBase58();
      await fund(payer.publicKey, 'USDC', 10_000_000n);
      await fund(new PublicKey(merchant), 'USDC', 1n); // the merchant's account exists
      const reference = Keypair.generate().publicKey.toBase58();
      const usdc = new PublicKey((await adapter.mint('USDC')).address);
      const destination = new PublicKey(await adapter.tokenAccount(merchant, 'USDC'));
      const transfer = (amount: bigint) => {
        const ix = createTransferCheckedInstruction(
          getAssociatedTokenAddressSync(usdc, payer.publicKey),
          usdc,
          destination,
          payer.publicKey,
          amount,
          6,
        );
        ix.keys.push({ pubkey: new PublicKey(reference), isSigner: false, isWritable: false });
        return ix;
      };
      const signature = await send([transfer(1_000_000n), transfer(2_500_000n)], payer);
      const { receipts } = await adapter.scanReference(reference, null);
      // The balance rose by 3.5: one receipt, each instruction with its own amount.
      expect(receipts).toEqual([
        expect.objectContaining({
          signature,
          received: 3_500_000n,
          unexplained: 0n,
          references: [reference],
          transfers: [
            expect.objectContaining({ instruction: 0, gross: 1_000_000n, amount: 1_000_000n }),
            expect.objectContaining({ instruction: 1, gross: 2_500_000n, amount: 2_500_000n }),
          ],
        }),
      ]);
    });

    it('under a Token-2022 transfer fee, the amount is what arrived, not what was sent', async () => {
      const mint = await createMint(TOKEN_2022_PROGRAM_ID, 100); // 1%
      const feeAdapter = adapterWith({ mints: mintTable('localnet', { PYUSD: mint.toBase58() }) });
      const payer = Keypair.generate();
      const merchant = Keypair.generate().publicKey.toBase58();
      await fundSol(payer.publicKey);
      await mintTo(mint, TOKEN_2022_PROGRAM_ID, payer.publicKey, 50_000_000n);
      const reference = Keypair.generate().publicKey.toBase58();
      await mintTo(mint, TOKEN_2022_PROGRAM_ID, new PublicKey(merchant), 0n);
      const unsigned = await feeAdapter.buildInvoicePayment({
        payer: payer.publicKey.toBase58(),
        merchantWallet: merchant,
        mint: 'PYUSD',
        amount: 10_000_000n,
        reference,
      });
      expect(await signAndSend(unsigned, payer)).toMatchObject({ state: 'succeeded' });
      const account = await feeAdapter.tokenAccount(merchant, 'PYUSD');
      const { receipts } = await feeAdapter.scanTokenAccount(account, null);
      expect(receipts).toMatchObject([
        {
          received: 9_900_000n,
          mint: mint.toBase58(),
          references: [reference],
          transfers: [{ gross: 10_000_000n, fee: 100_000n, amount: 9_900_000n }],
          unexplained: 0n,
        },
      ]);
      const onChain = await connection.getTokenAccountBalance(new PublicKey(account));
      expect(onChain.value.amount).toBe('9900000');
    });

    it('a TransferCheckedWithFee carrying the reference is found by both scans, net of its fee', async () => {
      const mint = await createMint(TOKEN_2022_PROGRAM_ID, 100); // 1%
      const feeAdapter = adapterWith({ mints: mintTable('localnet', { PYUSD: mint.toBase58() }) });
      const payer = Keypair.generate();
      const merchant = Keypair.generate().publicKey;
      await fundSol(payer.publicKey);
      const source = await mintTo(mint, TOKEN_2022_PROGRAM_ID, payer.publicKey, 50_000_000n);
      const destination = await mintTo(mint, TOKEN_2022_PROGRAM_ID, merchant, 0n);
      const reference = Keypair.generate().publicKey;
      const transfer = createTransferCheckedWithFeeInstruction(
        source,
        mint,
        destination,
        payer.publicKey,
        10_000_000n,
        6,
        100_000n,
        [],
        TOKEN_2022_PROGRAM_ID,
      );
      transfer.keys.push({ pubkey: reference, isSigner: false, isWritable: false });
      const signature = await send([transfer], payer);
      const expected = {
        signature,
        received: 9_900_000n,
        references: [reference.toBase58()],
        transfers: [
          expect.objectContaining({ gross: 10_000_000n, fee: 100_000n, amount: 9_900_000n }),
        ],
      };
      const byReference = await feeAdapter.scanReference(reference.toBase58(), null);
      expect(byReference.receipts).toEqual([expect.objectContaining(expected)]);
      const byAccount = await feeAdapter.scanTokenAccount(destination.toBase58(), null);
      expect(byAccount.receipts).toEqual([expect.objectContaining(expected)]);
    });

    it('a failed transaction carrying the reference, or a reference elsewhere, is no payment', async () => {
      const payer = Keypair.generate();
      const merchant = Keypair.generate().publicKey.toBase58();
      await fund(payer.publicKey, 'USDC', 1_000_000n);
      const reference = Keypair.generate().publicKey.toBase58();
      await openAccount(merchant, 'USDC', payer);
      const unsigned = await adapter.buildInvoicePayment({
        payer: payer.publicKey.toBase58(),
        merchantWallet: merchant,
        mint: 'USDC',
        amount: 5_000_000n, // more than it holds
        reference,
      });
      const tx = Transaction.from(Buffer.from(unsigned.transaction, 'base64'));
      tx.partialSign(payer);
      await connection.sendRawTransaction(tx.serialize(), { skipPreflight: true });
      // And the reference on a zero-lamport self-transfer: named, but no tokens moved with it.
      const anchor = SystemProgram.transfer({
        fromPubkey: payer.publicKey,
        toPubkey: payer.publicKey,
        lamports: 0,
      });
      anchor.keys.push({ pubkey: new PublicKey(reference), isSigner: false, isWritable: false });
      await send([anchor], payer);
      const scan = await adapter.scanReference(reference, null);
      expect(scan).toMatchObject({ receipts: [], signaturesScanned: 2 });
    });
  });

  describe('a landed transaction is never reported rejected', () => {
    let proxy: Server;
    let proxyUrl: string;
    /** What the proxy answers to `sendTransaction` instead of forwarding it. */
    let refusal: { code: number; message: string } | null = null;

    beforeAll(async () => {
      // An RPC node as mainnet's behave for bytes re-sent after their blockhash expired: it
      // refuses them at preflight, though the chain has them.
      proxy = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          const request = JSON.parse(body) as { id: unknown; method?: string };
          if (refusal && request.method === 'sendTransaction') {
            res.setHeader('content-type', 'application/json');
            res.end(JSON.stringify({ jsonrpc: '2.0', id: request.id, error: refusal }));
            return;
          }
          void fetch(tc.url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
            },
            body,
          })
            .then(async (upstream) => {
              res.setHeader('content-type', 'application/json');
              res.end(await upstream.text());
            })
            .catch(() => res.destroy());
        });
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    });

    async function landedCharge(): Promise<{ signed: SignedTx; wallet: Keypair }> {
      const wallet = Keypair.generate();
      await fund(wallet.publicKey, 'USDC', 20_000_000n);
      const merchant = Keypair.generate().publicKey.toBase58();
      await openAccount(merchant, 'USDC', wallet);
      const subscribe = await adapter.buildSubscribe({
        subscriber: wallet.publicKey.toBase58(),
        merchantWallet: Keypair.generate().publicKey.toBase58(),
        planId: randomUUID(),
        mint: 'USDC',
        amount: 5_000_000n,
        periodHours: 720,
      });
      expect(await signAndSend(subscribe, wallet)).toMatchObject({ state: 'succeeded' });
      const signed = await adapter.signCharge({
        chargeId: randomUUID(),
        subscriber: wallet.publicKey.toBase58(),
        merchantWallet: merchant,
        planId: randomUUID(),
        mint: 'USDC',
        amount: 5_000_000n,
      });
      expect(await adapter.sendAndConfirm(signed)).toMatchObject({ state: 'succeeded' });
      return { signed, wallet };
    }

    it.each([
      ['blockhash not found', 'Transaction simulation failed: Blockhash not found'],
      [
        'a program error in simulation',
        'Transaction simulation failed: Error processing Instruction 2: custom program error: 0x1',
      ],
    ])('a re-send refused at preflight (%s) settles by its signature', async (_name, message) => {
      const { signed, wallet } = await landedCharge();
      refusal = { code: -32002, message };
      try {
        const resend = adapterWith({}, proxyUrl);
        expect(await resend.sendAndConfirm(signed)).toMatchObject({ state: 'succeeded' });
      } finally {
        refusal = null;
      }
      expect((await adapter.readAuthorization(wallet.publicKey.toBase58(), 'USDC')).balance).toBe(
        15_000_000n,
      );
    });

    it('signatures that do not verify (-32003) are rejected at once, without waiting for expiry', async () => {
      const wallet = Keypair.generate();
      await fund(wallet.publicKey, 'USDC', 1_000_000n);
      const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash();
      const tx = new Transaction({ feePayer: wallet.publicKey, blockhash, lastValidBlockHeight });
      tx.add(
        SystemProgram.transfer({
          fromPubkey: wallet.publicKey,
          toPubkey: wallet.publicKey,
          lamports: 1,
        }),
      );
      tx.sign(wallet);
      const bytes = tx.serialize();
      bytes[1] ^= 0xff; // corrupt the signature
      // A deadline far beyond the test's timeout: only an immediate answer passes.
      const patient = adapterWith({ confirmDeadlineMs: 600_000 });
      const outcome = await patient.sendAndConfirm({
        signature: bs58.encode(bytes.subarray(1, 65)),
        transaction: bytes.toString('base64'),
        lastValidBlockHeight,
      });
      expect(outcome).toEqual({
        state: 'rejected',
        error: expect.stringMatching(/signature verification/i),
        replaceable: true,
      });
    });

    it('outcomes settles many signatures at once, 256 per call', async () => {
      const { signed } = await landedCharge();
      const unknown = Array.from({ length: 300 }, () => ({
        signature: bs58.encode(Keypair.generate().secretKey),
        lastValidBlockHeight: 1,
      }));
      const outcomes = await adapter.outcomes([signed, ...unknown]);
      expect(outcomes.size).toBe(301);
      expect(outcomes.get(signed.signature)).toMatchObject({ state: 'succeeded' });
      expect(outcomes.get(unknown[299].signature)).toEqual({ state: 'expired' });
    });
  });

  describe('a frozen token account is a final failure of its own', () => {
    let mint: PublicKey;
    let frozenAdapter: RpcChainAdapter;
    const merchant = Keypair.generate();
    const charge = (subscriber: Keypair): ChargeInput => ({
      chargeId: randomUUID(),
      subscriber: subscriber.publicKey.toBase58(),
      merchantWallet: merchant.publicKey.toBase58(),
      planId: randomUUID(),
      mint: 'USDC',
      amount: 5_000_000n,
    });

    beforeAll(async () => {
      mint = await createMint(TOKEN_PROGRAM_ID);
      frozenAdapter = adapterWith({ mints: mintTable('localnet', { USDC: mint.toBase58() }) });
      await mintTo(mint, TOKEN_PROGRAM_ID, merchant.publicKey, 0n); // its receiving account
    });

    async function subscriber(): Promise<Keypair> {
      const wallet = Keypair.generate();
      await fundSol(wallet.publicKey);
      await mintTo(mint, TOKEN_PROGRAM_ID, wallet.publicKey, 20_000_000n);
      const unsigned = await frozenAdapter.buildSubscribe({
        subscriber: wallet.publicKey.toBase58(),
        merchantWallet: merchant.publicKey.toBase58(),
        planId: randomUUID(),
        mint: 'USDC',
        amount: 5_000_000n,
        periodHours: 720,
      });
      expect(await signAndSend(unsigned, wallet)).toMatchObject({ state: 'succeeded' });
      return wallet;
    }

    const freeze = (owner: PublicKey) =>
      send(
        [
          createFreezeAccountInstruction(
            getAssociatedTokenAddressSync(mint, owner),
            mint,
            authority.publicKey,
          ),
        ],
        authority,
      );

    it("the subscriber's account frozen: refused before sending, and classified after", async () => {
      const wallet = await subscriber();
      const signed = await frozenAdapter.signCharge(charge(wallet)); // not frozen yet
      await freeze(wallet.publicKey);
      await expect(frozenAdapter.signCharge(charge(wallet))).rejects.toMatchObject({
        reason: 'account_frozen',
        message: expect.stringMatching(/subscriber/),
      });
      const outcome = await frozenAdapter.sendAndConfirm(signed);
      expect(outcome).toMatchObject({ state: 'rejected', replaceable: false });
      const error = outcome.state === 'rejected' ? outcome.error : '';
      expect(await frozenAdapter.classifyChargeFailure(charge(wallet), error)).toBe(
        'account_frozen',
      );
    });

    it("the merchant's account frozen: refused before sending", async () => {
      const wallet = await subscriber();
      await mintTo(mint, TOKEN_PROGRAM_ID, merchant.publicKey, 0n);
      await freeze(merchant.publicKey);
      await expect(frozenAdapter.signCharge(charge(wallet))).rejects.toMatchObject({
        reason: 'merchant_account_frozen',
        message: expect.stringMatching(/merchant/),
      });
      expect(
        await frozenAdapter.readAuthorization(wallet.publicKey.toBase58(), 'USDC'),
      ).toMatchObject({ frozen: false, balance: 20_000_000n });
    });
  });

  describe('token-delegate: one approval covers every subscription of the wallet in the mint', () => {
    const merchant = Keypair.generate().publicKey.toBase58();

    it('subscribe approves this share plus the others; revoke leaves the others their share', async () => {
      const wallet = Keypair.generate();
      await fund(wallet.publicKey, 'USDC', 100_000_000n);
      const planA = randomUUID();
      const planB = randomUUID();
      const first = await adapter.buildSubscribe({
        subscriber: wallet.publicKey.toBase58(),
        merchantWallet: merchant,
        planId: planA,
        mint: 'USDC',
        amount: 1_000_000n,
        periodHours: 720,
      });
      expect(await signAndSend(first, wallet)).toMatchObject({ state: 'succeeded' });
      expect(adapter.approval?.share(1_000_000n)).toBe(12_000_000n);
      const second = await adapter.buildSubscribe({
        subscriber: wallet.publicKey.toBase58(),
        merchantWallet: merchant,
        planId: planB,
        mint: 'USDC',
        amount: 2_000_000n,
        periodHours: 720,
        otherSubscriptionsAllowance: 12_000_000n,
      });
      expect(await signAndSend(second, wallet)).toMatchObject({ state: 'succeeded' });
      expect(await adapter.readAuthorization(wallet.publicKey.toBase58(), 'USDC')).toMatchObject({
        delegatedToService: true,
        delegatedAmount: 36_000_000n, // 12 periods of 1 + 12 periods of 2
      });
      expect(
        await adapter.subscriptionAddress({
          merchantWallet: merchant,
          planId: planA,
          subscriber: wallet.publicKey.toBase58(),
          mint: 'USDC',
        }),
      ).toBe(await adapter.tokenAccount(wallet.publicKey.toBase58(), 'USDC'));

      // The customer cancels B: the approval drops to what A still needs.
      const revokeB = await adapter.buildRevoke({
        subscriber: wallet.publicKey.toBase58(),
        merchantWallet: merchant,
        planId: planB,
        mint: 'USDC',
        remainingAllowance: 12_000_000n,
      });
      expect(await signAndSend(revokeB, wallet)).toMatchObject({ state: 'succeeded' });
      expect(await adapter.readAuthorization(wallet.publicKey.toBase58(), 'USDC')).toMatchObject({
        delegatedAmount: 12_000_000n,
      });
      // Then A: nothing remains, the delegate is revoked.
      const revokeA = await adapter.buildRevoke({
        subscriber: wallet.publicKey.toBase58(),
        merchantWallet: merchant,
        planId: planA,
        mint: 'USDC',
      });
      expect(await signAndSend(revokeA, wallet)).toMatchObject({ state: 'succeeded' });
      expect(await adapter.readAuthorization(wallet.publicKey.toBase58(), 'USDC')).toMatchObject({
        delegatedToService: false,
        delegatedAmount: 0n,
      });
    });
  });

  it('the port exposes the service public key, never the secret', () => {
    const port: ChainPort = adapter;
    expect(port.servicePublicKey).toBe(serviceKey.publicKey.toBase58());
    expect(port).not.toHaveProperty('serviceKey');
    const secretHex = Buffer.from(serviceKey.secretKey).toString('hex');
    const secretArray = JSON.stringify([...serviceKey.secretKey]);
    const dumped = inspect(adapter, { depth: 8, showHidden: true }).replace(/\s/g, '');
    // (Booleans, not `toContain`: a failure must not print the secret into the test log.)
    expect(dumped.includes(secretHex)).toBe(false);
    expect(dumped.includes(secretArray.slice(1, 60))).toBe(false);
  });
});

describe('localnet finality: confirmed before finalized', () => {
  it('a transaction is confirmed at once and finalized only after the lag, in every RPC view', async () => {
    const tc = await startTestChain(undefined, { finalitySlots: 5 });
    const connection = new Connection(tc.url, 'confirmed');
    const adapter = new RpcChainAdapter(connection, {
      cluster: 'localnet',
      scheme: 'token-delegate',
      commitment: 'confirmed',
      mints: mintTable('localnet'),
      serviceKey: Keypair.generate(),
      approvalPeriods: 12,
    });
    try {
      const payer = Keypair.generate();
      await fetch(tc.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...TEST_DEV_AUTH },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'localnet_faucet',
          params: [{ walletAddress: payer.publicKey.toBase58(), lamports: '1000000000' }],
        }),
      });
      const reference = Keypair.generate().publicKey;
      const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash();
      const ix = SystemProgram.transfer({
        fromPubkey: payer.publicKey,
        toPubkey: payer.publicKey,
        lamports: 0,
      });
      ix.keys.push({ pubkey: reference, isSigner: false, isWritable: false });
      const tx = new Transaction({ feePayer: payer.publicKey, blockhash, lastValidBlockHeight });
      tx.add(ix).sign(payer);
      const signed = {
        signature: bs58.encode(tx.signature!),
        transaction: tx.serialize().toString('base64'),
        lastValidBlockHeight,
      };
      expect(await adapter.sendAndConfirm(signed)).toMatchObject({
        state: 'succeeded',
        finalized: false,
      });
      const status = (await connection.getSignatureStatus(signed.signature)).value;
      expect(status?.confirmationStatus).toBe('confirmed');
      expect(
        await connection.getTransaction(signed.signature, { commitment: 'finalized' }),
      ).toBeNull();
      expect(await connection.getSignaturesForAddress(reference, {}, 'finalized')).toEqual([]);
      expect(await connection.getSignaturesForAddress(reference, {}, 'confirmed')).toHaveLength(1);

      // Wait for the lag to pass (bounded by the test's timeout), then every view agrees.
      let outcome = await adapter.outcome(signed.signature, lastValidBlockHeight);
      while (outcome.state === 'succeeded' && !outcome.finalized) {
        await new Promise((r) => setTimeout(r, 200));
        outcome = await adapter.outcome(signed.signature, lastValidBlockHeight);
      }
      expect(outcome).toMatchObject({ state: 'succeeded', finalized: true });
      // The finalized height trails the confirmed one by the lag (read in that order).
      const finalizedHeight = await connection.getBlockHeight('finalized');
      const confirmedHeight = await connection.getBlockHeight('confirmed');
      expect(confirmedHeight - finalizedHeight).toBeGreaterThanOrEqual(5);
      expect(
        (await connection.getSignatureStatus(signed.signature)).value?.confirmationStatus,
      ).toBe('finalized');
      expect(
        await connection.getTransaction(signed.signature, { commitment: 'finalized' }),
      ).not.toBeNull();
      expect(await connection.getSignaturesForAddress(reference, {}, 'finalized')).toHaveLength(1);
      // A `finalized` subscription on a fresh transaction fires only once it is final.
      const second = new Transaction({
        feePayer: payer.publicKey,
        blockhash,
        lastValidBlockHeight,
      });
      second.add(
        SystemProgram.transfer({
          fromPubkey: payer.publicKey,
          toPubkey: payer.publicKey,
          lamports: 1,
        }),
      );
      second.sign(payer);
      const socket = new WebSocket(
        tc.url.replace(/^http/, 'ws').replace(/:(\d+)/, (_m, p: string) => `:${Number(p) + 1}`),
      );
      await new Promise((resolve) => socket.once('open', resolve));
      const events: string[] = [];
      const notified = new Promise<void>((resolve) =>
        socket.on('message', (data: Buffer) => {
          const message = JSON.parse(data.toString()) as { method?: string };
          if (message.method === 'signatureNotification') {
            events.push('notified');
            resolve();
          }
        }),
      );
      const secondSignature = await connection.sendRawTransaction(second.serialize());
      socket.send(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'signatureSubscribe',
          params: [secondSignature, { commitment: 'finalized' }],
        }),
      );
      // Confirmed already, but no notification before it is final.
      expect((await connection.getSignatureStatus(secondSignature)).value?.confirmationStatus).toBe(
        'confirmed',
      );
      expect(events).toEqual([]);
      await notified;
      expect((await connection.getSignatureStatus(secondSignature)).value?.confirmationStatus).toBe(
        'finalized',
      );
      socket.close();
    } finally {
      await tc.close();
    }
  });
});
