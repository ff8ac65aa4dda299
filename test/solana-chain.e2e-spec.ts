import { findReference, validateTransfer } from '@solana/pay';
import {
  createRevokeInstruction,
  getAssociatedTokenAddressSync,
  MINT_SIZE,
  MintLayout,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import { Connection, Keypair, PublicKey, Transaction } from '@solana/web3.js';
import BigNumber from 'bignumber.js';
import bs58 from 'bs58';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { ChargeFailedError, ChargeInput, UnsignedTx } from '../src/solana/chain.port';
import { mintTable, MintSymbol } from '../src/solana/mints';
import { NO_EXTENSIONS } from '../src/solana/mint-extensions';
import { RpcChainAdapter } from '../src/solana/rpc-chain.adapter';
import { startTestChain, TEST_DEV_AUTH, TestChain } from './helpers/test-chain';

describe('Chain port on localnet (RpcChainAdapter over JSON-RPC)', () => {
  let tc: TestChain;
  let connection: Connection;
  let adapter: RpcChainAdapter;
  const serviceKey = Keypair.generate();

  const adapterWith = (approvalPeriods = 12) =>
    new RpcChainAdapter(connection, {
      cluster: 'localnet',
      scheme: 'token-delegate',
      commitment: 'confirmed',
      mints: mintTable('localnet'),
      serviceKey,
      approvalPeriods,
    });

  beforeAll(async () => {
    tc = await startTestChain();
    connection = new Connection(tc.url, 'confirmed');
    adapter = adapterWith();
    await fund(serviceKey.publicKey);
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

  /** 1 SOL, and `tokens` base units of `mint` when given. */
  async function fund(wallet: PublicKey, mint?: MintSymbol, tokens?: bigint): Promise<void> {
    const address = mint ? (await adapter.mint(mint)).address : undefined;
    await rpc('localnet_faucet', [
      {
        walletAddress: wallet.toBase58(),
        lamports: '1000000000',
        ...(address ? { mint: address, amount: String(tokens) } : {}),
      },
    ]);
  }

  async function balance(owner: PublicKey, mint: MintSymbol): Promise<bigint> {
    const m = await adapter.mint(mint);
    const ata = getAssociatedTokenAddressSync(
      new PublicKey(m.address),
      owner,
      true,
      new PublicKey(m.tokenProgram),
    );
    const info = await connection.getAccountInfo(ata);
    if (!info) return 0n;
    return BigInt((await connection.getTokenAccountBalance(ata)).value.amount);
  }

  /** Signs an unsigned transaction as its wallet would, sends it and waits for the outcome. */
  async function signAndSend(unsigned: UnsignedTx, ...signers: Keypair[]) {
    const tx = Transaction.from(Buffer.from(unsigned.transaction, 'base64'));
    tx.partialSign(...signers);
    const bytes = tx.serialize();
    return adapter.sendAndConfirm({
      signature: bs58.encode(tx.signature!),
      transaction: bytes.toString('base64'),
      lastValidBlockHeight: unsigned.lastValidBlockHeight,
    });
  }

  const newWallet = () => Keypair.generate();
  const newReference = () => Keypair.generate().publicKey.toBase58();

  it('resolves the three mints with their token program and Token-2022 extensions read from the chain', async () => {
    expect(await adapter.mint('USDC')).toEqual({
      symbol: 'USDC',
      address: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
      tokenProgram: TOKEN_PROGRAM_ID.toBase58(),
      decimals: 6,
      extensions: NO_EXTENSIONS,
    });
    const issuer = tc.chain.mintAuthority.toBase58();
    for (const symbol of ['PYUSD', 'USDG'] as const) {
      const mint = await adapter.mint(symbol);
      expect(mint).toMatchObject({ tokenProgram: TOKEN_2022_PROGRAM_ID.toBase58(), decimals: 6 });
      // As Paxos issued them (docs/solana.md, "Token-2022 extensions", per mint).
      expect(mint.extensions).toEqual({
        types: [
          'MintCloseAuthority',
          'ConfidentialTransferMint',
          'ConfidentialTransferFeeConfig',
          'TransferFeeConfig',
          'TransferHook',
          'PermanentDelegate',
          'MetadataPointer',
          'TokenMetadata',
        ],
        transferFee: expect.objectContaining({
          newerTransferFee: { epoch: 0n, maximumFee: 0n, transferFeeBasisPoints: 0 },
        }),
        transferHook: { authority: issuer, programId: null },
        pausable: null,
        permanentDelegate: issuer,
        defaultAccountState: null,
        confidentialTransfer: { authority: issuer, autoApproveNewAccounts: false },
      });
    }
  });

  it.each(['PYUSD', 'USDG'] as const)(
    "%s on localnet is a Token-2022 mint with its issuer's extensions, served as jsonParsed",
    async (mint) => {
      const { address } = await adapter.mint(mint);
      const account = await connection.getParsedAccountInfo(new PublicKey(address));
      const data = account.value?.data as {
        program: string;
        parsed: { info: Record<string, unknown> };
      };
      expect(data.program).toBe('spl-token-2022');
      const extensions = data.parsed.info.extensions as { extension: string; state?: unknown }[];
      expect(extensions.map((e) => e.extension)).toEqual([
        'mintCloseAuthority',
        'confidentialTransferMint',
        'confidentialTransferFeeConfig',
        'transferFeeConfig',
        'transferHook',
        'permanentDelegate',
        'metadataPointer',
        'tokenMetadata',
      ]);
      expect(extensions).toContainEqual({
        extension: 'transferHook',
        state: expect.objectContaining({ programId: null }),
      });
      expect(extensions).toContainEqual({
        extension: 'transferFeeConfig',
        state: expect.objectContaining({
          newerTransferFee: { epoch: 0, maximumFee: 0, transferFeeBasisPoints: 0 },
        }),
      });
    },
  );

  it('registers an invoice: a merchant-signed memo with the commitment, findable by reference; the merchant creates (and pays for) its receiving account', async () => {
    const merchant = newWallet();
    await fund(merchant.publicKey);
    const reference = newReference();
    const commitment = randomBytes(32);
    const unsigned = await adapter.buildInvoiceRegistration({
      merchantWallet: merchant.publicKey.toBase58(),
      mint: 'PYUSD',
      reference,
      commitment,
    });
    const account = new PublicKey(
      await adapter.tokenAccount(merchant.publicKey.toBase58(), 'PYUSD'),
    );
    expect(await connection.getAccountInfo(account)).toBeNull();
    const lamportsBefore = await connection.getBalance(merchant.publicKey);
    const tx = Transaction.from(Buffer.from(unsigned.transaction, 'base64'));
    expect(tx.feePayer?.toBase58()).toBe(merchant.publicKey.toBase58());
    expect(tx.signatures.every((s) => s.signature === null)).toBe(true);
    expect(await signAndSend(unsigned, merchant)).toMatchObject({ state: 'succeeded' });
    const [found] = await connection.getSignaturesForAddress(new PublicKey(reference));
    const text = `invoice:v1:${reference}:${commitment.toString('hex')}`;
    expect(found).toMatchObject({ err: null, memo: `[${text.length}] ${text}` });
    // Registered, not paid: the registration moves no tokens, so it holds no payment.
    expect(await adapter.scanReference(reference, null)).toEqual({
      receipts: [],
      cursor: found.signature,
      signaturesScanned: 1,
      complete: true,
    });
    // Its receiving account of the invoice's mint now exists, its rent paid by the merchant.
    const created = await connection.getAccountInfo(account);
    expect(created?.owner.toBase58()).toBe((await adapter.mint('PYUSD')).tokenProgram);
    expect(lamportsBefore - (await connection.getBalance(merchant.publicKey))).toBe(
      created!.lamports + 5_000,
    );
  });

  describe.each(['USDC', 'PYUSD', 'USDG'] as const)('invoice payment in %s', (mint) => {
    it("moves exactly the amount, never pays the merchant account's rent, and validates as Solana Pay", async () => {
      const payer = newWallet();
      const merchant = newWallet();
      await fund(payer.publicKey, mint, 100_000_000n);
      const reference = newReference();
      const payment = {
        payer: payer.publicKey.toBase58(),
        merchantWallet: merchant.publicKey.toBase58(),
        mint,
        amount: 12_500_000n,
        reference,
        memo: 'INV-1',
      };
      // The merchant has no receiving account yet: paying would make the payer pay its rent.
      await expect(adapter.buildInvoicePayment(payment)).rejects.toMatchObject({
        code: 'CONFLICT',
        message: expect.stringMatching(
          /cannot receive .* its receiving token account does not exist/,
        ),
      });
      await fund(merchant.publicKey, mint, 1n); // the merchant's registration created it
      const unsigned = await adapter.buildInvoicePayment(payment);
      // Memo, transfer last: nothing else.
      expect(
        Transaction.from(Buffer.from(unsigned.transaction, 'base64')).instructions,
      ).toHaveLength(2);
      const outcome = await signAndSend(unsigned, payer);
      expect(outcome).toMatchObject({ state: 'succeeded' });
      expect(await balance(payer.publicKey, mint)).toBe(87_500_000n);
      expect(await balance(merchant.publicKey, mint)).toBe(12_500_001n);

      const m0 = await adapter.mint(mint);
      const destination = await adapter.tokenAccount(merchant.publicKey.toBase58(), mint);
      const { receipts } = await adapter.scanReference(reference, null);
      expect(receipts).toEqual([
        expect.objectContaining({
          received: 12_500_000n,
          transfers: [
            {
              instruction: 1,
              gross: 12_500_000n,
              fee: 0n,
              amount: 12_500_000n,
              references: [reference],
              authority: payer.publicKey.toBase58(),
            },
          ],
          unexplained: 0n,
          payer: payer.publicKey.toBase58(),
          destination,
          destinationOwner: merchant.publicKey.toBase58(),
          mint: m0.address,
          references: [reference],
          memo: 'INV-1',
        }),
      ]);
      // The merchant-account scan sees the same payment (and the faucet's mint before it).
      const byAccount = await adapter.scanTokenAccount(destination, null);
      expect(byAccount.receipts.map((r) => r.signature)).toContain(receipts[0].signature);

      // Solana Pay's own helpers agree. (`validateTransfer` of @solana/pay 0.2 derives the
      // recipient's token account with the classic token program only, so it cannot check a
      // Token-2022 payment; `findReference` can.)
      const m = await adapter.mint(mint);
      const found = await findReference(connection, new PublicKey(reference), {
        finality: 'confirmed',
      });
      expect(found.signature).toBe(receipts[0].signature);
      if (mint === 'USDC') {
        await expect(
          validateTransfer(
            connection,
            found.signature,
            {
              recipient: merchant.publicKey,
              amount: new BigNumber('12.5'),
              splToken: new PublicKey(m.address),
              reference: new PublicKey(reference),
              memo: 'INV-1',
            },
            { commitment: 'confirmed' },
          ),
        ).resolves.toBeTruthy();
        await expect(
          validateTransfer(
            connection,
            found.signature,
            {
              recipient: merchant.publicKey,
              amount: new BigNumber('13'),
              splToken: new PublicKey(m.address),
            },
            { commitment: 'confirmed' },
          ),
        ).rejects.toThrow();
      }
    });
  });

  it('with the RPC silent, sendAndConfirm answers unknown at its deadline, never hangs', async () => {
    // An RPC that accepts connections and never answers.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    const dead = new RpcChainAdapter(new Connection(`http://127.0.0.1:${port}`, 'confirmed'), {
      cluster: 'localnet',
      scheme: 'token-delegate',
      commitment: 'confirmed',
      mints: mintTable('localnet'),
      serviceKey,
      approvalPeriods: 12,
      confirmDeadlineMs: 300,
    });
    try {
      // Resolving at all proves it does not hang: the test's own timeout bounds the wait.
      expect(
        await dead.sendAndConfirm({
          signature: bs58.encode(randomBytes(64)),
          transaction: Buffer.alloc(200).toString('base64'),
          lastValidBlockHeight: 1_000,
        }),
      ).toEqual({ state: 'unknown' });
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it('refuses a mint that does not have 6 decimals', async () => {
    const odd = Keypair.generate().publicKey.toBase58();
    const data = Buffer.alloc(MINT_SIZE);
    MintLayout.encode(
      {
        mintAuthorityOption: 0,
        mintAuthority: PublicKey.default,
        supply: 0n,
        decimals: 9,
        isInitialized: true,
        freezeAuthorityOption: 0,
        freezeAuthority: PublicKey.default,
      },
      data,
    );
    tc.chain.setAccount(odd, { lamports: 10_000_000n, owner: TOKEN_PROGRAM_ID.toBase58(), data });
    const overridden = new RpcChainAdapter(connection, {
      cluster: 'localnet',
      scheme: 'token-delegate',
      commitment: 'confirmed',
      mints: mintTable('localnet', { USDC: odd }),
      serviceKey,
      approvalPeriods: 12,
    });
    await expect(overridden.mint('USDC')).rejects.toThrow(/has 9 decimals/);
  });

  describe('subscriptions (token-delegate scheme)', () => {
    const merchant = newWallet();
    const planId = randomUUID();
    // The merchant's receiving accounts exist (its plan registration created them).
    beforeAll(async () => {
      for (const mint of ['USDC', 'PYUSD', 'USDG'] as const)
        await fund(merchant.publicKey, mint, 1n);
    });

    async function subscriber(mint: MintSymbol, tokens: bigint, periods?: number) {
      const wallet = newWallet();
      await fund(wallet.publicKey, mint, tokens);
      const own = periods ? adapterWith(periods) : adapter;
      const unsigned = await own.buildSubscribe({
        subscriber: wallet.publicKey.toBase58(),
        merchantWallet: merchant.publicKey.toBase58(),
        planId,
        mint,
        amount: 5_000_000n,
        periodHours: 720,
        reference: newReference(),
      });
      expect(await signAndSend(unsigned, wallet)).toMatchObject({ state: 'succeeded' });
      return wallet;
    }

    const charge = (wallet: Keypair, mint: MintSymbol = 'USDC'): ChargeInput => ({
      chargeId: randomUUID(),
      subscriber: wallet.publicKey.toBase58(),
      merchantWallet: merchant.publicKey.toBase58(),
      planId,
      mint,
      amount: 5_000_000n,
    });

    it.each(['USDC', 'PYUSD', 'USDG'] as const)(
      '%s: approve, then the service pulls one period',
      async (mint) => {
        const wallet = await subscriber(mint, 20_000_000n);
        expect(await adapter.readAuthorization(wallet.publicKey.toBase58(), mint)).toMatchObject({
          exists: true,
          balance: 20_000_000n,
          delegatedToService: true,
          delegatedAmount: 60_000_000n,
        });
        const before = await balance(merchant.publicKey, mint);
        const signed = await adapter.signCharge(charge(wallet, mint));
        expect(await adapter.sendAndConfirm(signed)).toMatchObject({ state: 'succeeded' });
        expect(await balance(wallet.publicKey, mint)).toBe(15_000_000n);
        expect(await balance(merchant.publicKey, mint)).toBe(before + 5_000_000n);
        expect(await adapter.readAuthorization(wallet.publicKey.toBase58(), mint)).toMatchObject({
          delegatedAmount: 55_000_000n,
        });
      },
    );

    it('a merchant without a receiving account: refused before anything is signed, the service key pays no rent', async () => {
      const wallet = await subscriber('USDC', 20_000_000n);
      const stranger = newWallet(); // a merchant that never registered anything
      const service = serviceKey.publicKey;
      const lamports = await connection.getBalance(service);
      await expect(
        adapter.signCharge({ ...charge(wallet), merchantWallet: stranger.publicKey.toBase58() }),
      ).rejects.toMatchObject({
        reason: 'merchant_account_missing',
        message: "the merchant's receiving token account does not exist",
      });
      expect(await connection.getBalance(service)).toBe(lamports);
      expect(await balance(wallet.publicKey, 'USDC')).toBe(20_000_000n);
    });

    it('two equal charges within one blockhash are two transfers, not one', async () => {
      const wallet = await subscriber('USDC', 20_000_000n);
      const first = await adapter.signCharge(charge(wallet));
      const second = await adapter.signCharge(charge(wallet));
      expect(second.signature).not.toBe(first.signature);
      expect(await adapter.sendAndConfirm(first)).toMatchObject({ state: 'succeeded' });
      expect(await adapter.sendAndConfirm(second)).toMatchObject({ state: 'succeeded' });
      expect(await balance(wallet.publicKey, 'USDC')).toBe(10_000_000n);
    });

    it('classifies insufficient funds before sending anything', async () => {
      const wallet = await subscriber('USDC', 4_000_000n);
      const attempt = adapter.signCharge(charge(wallet));
      await expect(attempt).rejects.toBeInstanceOf(ChargeFailedError);
      await expect(attempt).rejects.toMatchObject({ reason: 'insufficient_funds' });
    });

    it('classifies a revoked approval as authorization gone', async () => {
      const wallet = await subscriber('USDC', 20_000_000n);
      const m = await adapter.mint('USDC');
      const ata = getAssociatedTokenAddressSync(new PublicKey(m.address), wallet.publicKey);
      const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash();
      const revoke = new Transaction({
        feePayer: wallet.publicKey,
        blockhash,
        lastValidBlockHeight,
      })
        .add(createRevokeInstruction(ata, wallet.publicKey))
        .serialize({ requireAllSignatures: false });
      await signAndSend(
        { transaction: revoke.toString('base64'), blockhash, lastValidBlockHeight, slot: 0 },
        wallet,
      );
      await expect(adapter.signCharge(charge(wallet))).rejects.toMatchObject({
        reason: 'authorization_gone',
      });
    });

    it('classifies a used-up allowance as authorization gone', async () => {
      const wallet = await subscriber('USDC', 20_000_000n, 1); // approval for one period
      const first = await adapter.signCharge(charge(wallet));
      expect(await adapter.sendAndConfirm(first)).toMatchObject({ state: 'succeeded' });
      await expect(adapter.signCharge(charge(wallet))).rejects.toMatchObject({
        reason: 'authorization_gone',
      });
    });

    it('a charge that became doomed after signing is refused at preflight and classified', async () => {
      const wallet = await subscriber('USDC', 5_000_000n);
      const signed = await adapter.signCharge(charge(wallet)); // funds were there
      // The subscriber spends them before the charge is sent.
      const elsewhere = await adapter.buildInvoicePayment({
        payer: wallet.publicKey.toBase58(),
        merchantWallet: merchant.publicKey.toBase58(),
        mint: 'USDC',
        amount: 5_000_000n,
        reference: newReference(),
      });
      await signAndSend(elsewhere, wallet);
      const outcome = await adapter.sendAndConfirm(signed);
      // Known at once, but not replaceable: a copy sent before a crash could still land.
      expect(outcome).toMatchObject({ state: 'rejected', replaceable: false });
      const error = outcome.state === 'rejected' ? outcome.error : '';
      expect(await adapter.classifyChargeFailure(charge(wallet), error)).toBe('insufficient_funds');
    });

    it('a blockhash this node does not know is not a refusal: it waits, and ends expired', async () => {
      const wallet = await subscriber('USDC', 20_000_000n);
      const signed = await adapter.signCharge(charge(wallet));
      const tx = Transaction.from(Buffer.from(signed.transaction, 'base64'));
      tx.recentBlockhash = bs58.encode(randomBytes(32)); // a blockhash this node never issued
      tx.signatures = [];
      tx.sign(serviceKey);
      // Another node may know that blockhash (this one may lag), so the bytes may still land:
      // the answer is the outcome, `expired` once the last valid height is finalized past.
      const lastValidBlockHeight = (await connection.getBlockHeight('finalized')) - 1;
      const outcome = await adapter.sendAndConfirm({
        signature: bs58.encode(tx.signature!),
        transaction: tx.serialize().toString('base64'),
        lastValidBlockHeight,
      });
      expect(outcome).toEqual({ state: 'expired' });
      expect(await adapter.classifyChargeFailure(charge(wallet), 'BlockhashNotFound')).toBe(
        'transient',
      );
      expect(await balance(wallet.publicKey, 'USDC')).toBe(20_000_000n);
    });

    it('a crash between signed and confirmed is settled by the signature, never a second charge', async () => {
      const wallet = await subscriber('USDC', 20_000_000n);
      const signed = await adapter.signCharge(charge(wallet));
      // The signature is recorded, the bytes go out, and the process dies before confirming.
      await connection.sendRawTransaction(Buffer.from(signed.transaction, 'base64'));
      // After a restart, a fresh adapter settles it by signature alone.
      const restarted = adapterWith();
      expect(await restarted.outcome(signed.signature, signed.lastValidBlockHeight)).toMatchObject({
        state: 'succeeded',
      });
      // Sending the same bytes again moves nothing: the chain has already processed them.
      expect(await restarted.sendAndConfirm(signed)).toMatchObject({ state: 'succeeded' });
      expect(await balance(wallet.publicKey, 'USDC')).toBe(15_000_000n);

      // Signed but never sent: pending while it could land; expired once the finalized height
      // is past its last valid block height (localnet's slots follow wall time, so a height
      // already passed stands in for the minute it would take).
      const unsent = await adapter.signCharge(charge(wallet));
      expect(await adapter.outcome(unsent.signature, unsent.lastValidBlockHeight)).toEqual({
        state: 'pending',
      });
      // The adapter's own finalized height is read at most once a second: on a busy machine the
      // one it holds can be older than this one, so wait for it to catch up (never 'succeeded').
      const height = await connection.getBlockHeight('finalized');
      let fate = await adapter.outcome(unsent.signature, height - 1);
      for (let i = 0; fate.state === 'pending' && i < 100; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        fate = await adapter.outcome(unsent.signature, height - 1);
      }
      expect(fate).toEqual({ state: 'expired' });
      expect(await balance(wallet.publicKey, 'USDC')).toBe(15_000_000n);
    });
  });
});
