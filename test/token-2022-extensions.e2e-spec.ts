import {
  createTransferCheckedWithTransferHookInstruction,
  getAssociatedTokenAddressSync,
  getExtraAccountMetaAddress,
  TOKEN_2022_PROGRAM_ID,
} from '@solana/spl-token';
import { Keypair, PublicKey, Transaction } from '@solana/web3.js';
import {
  ABSENT_HOOK_PROGRAM,
  HOOK_EXTRA_ACCOUNT,
  HOOK_PDA_SEED,
  testMint,
} from '@stablecoin-billing/localnet';
import { ChainPort } from '../src/solana/chain.port';
import { TransferHooks } from '../src/solana/transfer-hook';
import { billingHelpers } from './helpers/billing';
import { fund } from './helpers/chain-tx';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';
import { waitFor } from './helpers/webhook-receiver';

const UNIT = 1_000_000n;
const DAY = 86_400;
const HOOKED = testMint('HOOKED')!.address;
const PAUSABLE = testMint('PAUSABLE')!.address;
const FROZEN = testMint('FROZEN')!.address;

/**
 * Token-2022 extensions read, not assumed (docs/solana.md, "Token-2022 extensions"): the service
 * bills in localnet's extension test mints (docs/localnet.md), configured in place of the
 * stablecoins: PYUSD is HOOKED (a transfer hook whose program is not deployed), USDG is
 * PAUSABLE (pausable, with a permanent delegate), USDC is FROZEN (new accounts start frozen).
 * What each does is seen through the HTTP API: a charge's class and the subscription's status,
 * the checkout's answer and page.
 */
describe('Token-2022 extensions: what the service does with each', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let billing: ReturnType<typeof billingHelpers>;
  let chain: ChainPort;

  const plan = async (mint: string) =>
    (
      await t.http
        .post('/api/plans')
        .set(acme.auth)
        .send({ label: `Pro ${mint}`, mint, amount: '10', intervalSeconds: 30 * DAY })
        .expect(201)
    ).body.plan.id as string;
  const invoice = async (mint: string) =>
    (
      await t.http
        .post('/api/invoices')
        .set(acme.auth)
        .send({
          walletAddress: Keypair.generate().publicKey.toBase58(),
          mint,
          lineItems: [{ description: 'Work', quantity: 1, unitAmount: '5' }],
        })
        .expect(201)
    ).body.invoice as { id: string };
  const customer = (mintAddress: string) => {
    const k = Keypair.generate();
    fund(t, k.publicKey.toBase58(), { symbol: mintAddress, amount: 100n * UNIT });
    return k;
  };
  const balanceOf = async (wallet: string, symbol: 'USDC' | 'PYUSD' | 'USDG') => {
    const account = new PublicKey(await chain.tokenAccount(wallet, symbol));
    if (!(await billing.connection.getAccountInfo(account))) return 0n;
    return BigInt((await billing.connection.getTokenAccountBalance(account)).value.amount);
  };

  const logs: string[] = [];

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        ROLE: 'api',
        LOCALNET_FINALITY_SLOTS: '0',
        LOG_LEVEL: 'info',
        MINT_PYUSD: HOOKED,
        MINT_USDG: PAUSABLE,
        MINT_USDC: FROZEN,
      },
      logDestination: { write: (line: string) => void logs.push(line) },
    });
    billing = billingHelpers(t);
    chain = billing.chain;
    acme = await t.createMerchant('Acme');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('each mint is read with its extensions at resolution: hook program, pause, permanent delegate, default state', async () => {
    expect((await chain.mint('PYUSD')).extensions).toMatchObject({
      types: ['TransferHook'],
      transferHook: { programId: ABSENT_HOOK_PROGRAM.toBase58() },
      pausable: null,
      permanentDelegate: null,
    });
    expect((await chain.mint('USDG')).extensions).toMatchObject({
      types: ['PausableConfig', 'PermanentDelegate'],
      pausable: { paused: false, authority: t.chain!.chain.mintAuthority.toBase58() },
      permanentDelegate: t.chain!.chain.mintAuthority.toBase58(),
    });
    expect((await chain.mint('USDC')).extensions).toMatchObject({
      types: ['DefaultAccountState'],
      defaultAccountState: 'frozen',
    });
  });

  it('each mint is logged once at start with what its extensions are', async () => {
    const issuer = t.chain!.chain.mintAuthority.toBase58();
    const said = () =>
      logs
        .map((l) => JSON.parse(l) as { context?: string; msg?: string })
        .filter((l) => l.context === 'Mints')
        .map((l) => l.msg);
    await waitFor(() => said().length === 3);
    expect(said().sort()).toEqual([
      `PYUSD (${HOOKED}): TransferHook; transfer hook program ${ABSENT_HOOK_PROGRAM.toBase58()}`,
      `USDC (${FROZEN}): DefaultAccountState; new accounts start frozen`,
      `USDG (${PAUSABLE}): PausableConfig, PermanentDelegate; pausable (running); permanent delegate ${issuer}`,
    ]);
  });

  describe('transfer hook (program absent)', () => {
    it('the accounts a hooked transfer carries are the ones spl-token resolves: the validation list, the hook program, the validation account', async () => {
      const mint = await chain.mint('PYUSD');
      const payer = Keypair.generate().publicKey;
      const source = getAssociatedTokenAddressSync(
        new PublicKey(HOOKED),
        payer,
        true,
        TOKEN_2022_PROGRAM_ID,
      );
      const destination = new PublicKey(await chain.tokenAccount(acme.walletAddress, 'PYUSD'));
      const hooks = new TransferHooks(billing.connection, 'confirmed');
      const extra = await hooks.extraAccounts(mint, {
        source,
        destination,
        authority: payer,
        amount: 5n * UNIT,
      });
      const helper = await createTransferCheckedWithTransferHookInstruction(
        billing.connection,
        source,
        new PublicKey(HOOKED),
        destination,
        payer,
        5n * UNIT,
        6,
        [],
        'confirmed',
        TOKEN_2022_PROGRAM_ID,
      );
      expect(extra).toEqual(helper.keys.slice(4));
      const pda = PublicKey.findProgramAddressSync(
        [Buffer.from(HOOK_PDA_SEED), source.toBuffer()],
        ABSENT_HOOK_PROGRAM,
      )[0];
      expect(extra.map((m) => [m.pubkey.toBase58(), m.isSigner, m.isWritable])).toEqual([
        [HOOK_EXTRA_ACCOUNT.toBase58(), false, false],
        [pda.toBase58(), false, true],
        [ABSENT_HOOK_PROGRAM.toBase58(), false, false],
        [
          getExtraAccountMetaAddress(new PublicKey(HOOKED), ABSENT_HOOK_PROGRAM).toBase58(),
          false,
          false,
        ],
      ]);
    });

    it('a charge waits with transfer_hook_failed: nothing is sent, the subscription stays Active, the customer keeps its money', async () => {
      const planId = await plan('PYUSD');
      const k = customer(HOOKED);
      const wallet = k.publicKey.toBase58();
      const { subscription } = await billing.subscribe(k, planId, acme.auth);
      expect(subscription).toMatchObject({ status: 'Active', failureReason: null });
      expect(await billing.attempts(subscription.id)).toMatchObject([
        {
          period: 1,
          state: 'pending',
          signature: null,
          failure_reason: null,
          last_error: expect.stringMatching(
            /^transfer_hook_failed: the PYUSD mint's transfer hook program \w+ is not deployed/,
          ),
        },
      ]);
      expect(await balanceOf(wallet, 'PYUSD')).toBe(100n * UNIT);
      expect(await billing.connection.getSignaturesForAddress(k.publicKey)).toHaveLength(2);
    });

    it('the checkout refuses to build a payment that cannot go through, saying why (409), and the page says what the hook is', async () => {
      const inv = await invoice('PYUSD');
      const refused = await t.http
        .post(`/api/checkout/invoices/${inv.id}/transaction`)
        .send({ account: customer(HOOKED).publicKey.toBase58() })
        .expect(409);
      expect(refused.body.error).toMatchObject({
        code: 'CONFLICT',
        message: expect.stringMatching(
          /^PYUSD cannot be transferred at the moment: its issuer's transfer hook program/,
        ),
      });
      const page = await t.http.get(`/checkout/invoices/${inv.id}`).expect(200);
      expect(page.text).toContain('Every PYUSD transfer runs a program of the issuer');
    });

    it('a hook program that refuses every transfer: the payment and the charge carry the accounts spl-token resolves, the charge fails on-chain and waits as transfer_hook_failed, the subscription stays Active', async () => {
      // A real program at the hook's address (the Memo program's code: it refuses the hook's
      // Execute, whose accounts do not sign), as an issuer's hook that refuses the transfer.
      const memo = t.chain!.chain.getAccount('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr')!;
      t.chain!.chain.setAccount(ABSENT_HOOK_PROGRAM.toBase58(), {
        lamports: memo.lamports,
        owner: memo.owner,
        data: memo.data,
        executable: true,
      });
      const k = customer(HOOKED);
      const source = getAssociatedTokenAddressSync(
        new PublicKey(HOOKED),
        k.publicKey,
        true,
        TOKEN_2022_PROGRAM_ID,
      );
      const destination = new PublicKey(await chain.tokenAccount(acme.walletAddress, 'PYUSD'));
      const expected = (authority: PublicKey) =>
        createTransferCheckedWithTransferHookInstruction(
          billing.connection,
          source,
          new PublicKey(HOOKED),
          destination,
          authority,
          5n * UNIT,
          6,
          [],
          'confirmed',
          TOKEN_2022_PROGRAM_ID,
        );
      const keysOf = (ix: {
        keys: { pubkey: PublicKey; isSigner: boolean; isWritable: boolean }[];
      }) => ix.keys.map((m) => [m.pubkey.toBase58(), m.isSigner, m.isWritable]);

      // The checkout's payment: the transfer carries the hook's accounts, then the reference.
      const inv = await invoice('PYUSD');
      const built = await t.http
        .post(`/api/checkout/invoices/${inv.id}/transaction`)
        .send({ account: k.publicKey.toBase58() })
        .expect(200);
      const payment = Transaction.from(Buffer.from(built.body.transaction as string, 'base64'));
      const transfer = payment.instructions[payment.instructions.length - 1];
      const reference = (await t.http.get(`/api/checkout/invoices/${inv.id}`).expect(200)).body
        .reference as string;
      // (Compiled into a transaction, the fee payer signs and is writable wherever it appears.)
      const asFeePayer = (keys: (string | boolean)[][], payer: PublicKey) =>
        keys.map(([key, signer, writable]) =>
          key === payer.toBase58() ? [key, true, true] : [key, signer, writable],
        );
      expect(keysOf(transfer)).toEqual([
        ...asFeePayer(keysOf(await expected(k.publicKey)), k.publicKey),
        [reference, false, false],
      ]);

      // A charge: signed with the hook's accounts (the service key as the transfer's authority),
      // refused on-chain by the hook: it waits, nobody is PastDue, no money moved.
      const { subscription } = await billing.subscribe(k, await plan('PYUSD'), acme.auth);
      expect(subscription).toMatchObject({ status: 'Active', failureReason: null });
      const [attempt] = await t.sql<{ transaction: string | null; last_error: string }>(
        `SELECT transaction, last_error FROM charge_attempts WHERE subscription_id = $1`,
        [subscription.id],
      );
      expect(attempt.last_error).toMatch(/^transfer_hook_failed: /);
      const charge = Transaction.from(Buffer.from(attempt.transaction!, 'base64'));
      const pull = charge.instructions.find((ix) => ix.programId.equals(TOKEN_2022_PROGRAM_ID))!;
      const service = new PublicKey(chain.servicePublicKey);
      expect(keysOf(pull)).toEqual(asFeePayer(keysOf(await expected(service)), service));
      expect(await balanceOf(k.publicKey.toBase58(), 'PYUSD')).toBe(100n * UNIT);
    });
  });

  describe('pausable', () => {
    /** Each test's subscriptions end with it, so that no later run charges them. */
    const live: string[] = [];
    afterEach(async () => {
      t.chain!.chain.setMintPaused(PAUSABLE, false);
      for (const id of live.splice(0)) {
        await t.http.post(`/api/subscriptions/${id}/cancel`).set(acme.auth).expect(200);
      }
    });

    it('a paused mint makes a charge wait (mint_paused), never PastDue; once resumed, the next run charges it', async () => {
      const planId = await plan('USDG');
      const k = customer(PAUSABLE);
      const wallet = k.publicKey.toBase58();
      const { subscription } = await billing.subscribe(k, planId, acme.auth);
      live.push(subscription.id);
      expect(await balanceOf(wallet, 'USDG')).toBe(90n * UNIT);

      t.chain!.chain.setMintPaused(PAUSABLE, true);
      await billing.advance(30 * DAY);
      expect((await billing.run()).charges).toMatchObject({ attempts: 1, deferred: 1, failed: 0 });
      expect(
        await t.http.get(`/api/subscriptions/${subscription.id}`).set(acme.auth).expect(200),
      ).toMatchObject({ body: { status: 'Active', failureReason: null } });
      expect((await billing.attempts(subscription.id))[1]).toMatchObject({
        period: 2,
        state: 'pending',
        signature: null,
        last_error: expect.stringMatching(/^mint_paused: the USDG mint is paused by its issuer/),
      });
      expect(await balanceOf(wallet, 'USDG')).toBe(90n * UNIT);

      // Resumed; the attempt's wait (five minutes of real time) is set to over rather than waited.
      t.chain!.chain.setMintPaused(PAUSABLE, false);
      await t.sql(`UPDATE charge_attempts SET lease_until = now() WHERE subscription_id = $1`, [
        subscription.id,
      ]);
      expect((await billing.run()).charges).toMatchObject({ succeeded: 1, failed: 0 });
      expect(await balanceOf(wallet, 'USDG')).toBe(80n * UNIT);
      expect(
        await t.http.get(`/api/subscriptions/${subscription.id}`).set(acme.auth).expect(200),
      ).toMatchObject({ body: { status: 'Active', failureReason: null } });
    });

    it('paused after the charge was signed: the chain refuses it, the failure is read as mint_paused (the mint read again), the subscription stays Active', async () => {
      const planId = await plan('USDG');
      const k = customer(PAUSABLE);
      const { subscription } = await billing.subscribe(k, planId, acme.auth);
      live.push(subscription.id);
      await billing.advance(30 * DAY);
      // The issuer pauses between the charge's reads and its send (of this mint's charge).
      const send = chain.sendAndConfirm.bind(chain);
      jest.spyOn(chain, 'sendAndConfirm').mockImplementation(async (tx) => {
        const keys = Transaction.from(Buffer.from(tx.transaction, 'base64')).compileMessage()
          .accountKeys;
        if (keys.some((key) => key.toBase58() === PAUSABLE)) {
          t.chain!.chain.setMintPaused(PAUSABLE, true);
        }
        return send(tx);
      });
      expect((await billing.run()).charges).toMatchObject({ failed: 0 });
      jest.restoreAllMocks();
      expect((await billing.attempts(subscription.id))[1]).toMatchObject({
        // Refused by the node: its bytes are kept and settled by signature before a new try.
        period: 2,
        state: 'sent',
        signature: expect.any(String),
        last_error: expect.stringMatching(/^mint_paused: /),
      });
      expect(
        await t.http.get(`/api/subscriptions/${subscription.id}`).set(acme.auth).expect(200),
      ).toMatchObject({ body: { status: 'Active', failureReason: null } });
      expect(await balanceOf(k.publicKey.toBase58(), 'USDG')).toBe(90n * UNIT);
    });

    it('the checkout refuses to pay an invoice in a paused mint with a 409 saying so, and builds it again once resumed', async () => {
      const inv = await invoice('USDG');
      const payer = customer(PAUSABLE).publicKey.toBase58();
      t.chain!.chain.setMintPaused(PAUSABLE, true);
      const refused = await t.http
        .post(`/api/checkout/invoices/${inv.id}/transaction`)
        .send({ account: payer })
        .expect(409);
      expect(refused.body.error).toMatchObject({
        code: 'CONFLICT',
        message:
          'USDG is paused by its issuer: no USDG transfer can go through until the issuer resumes it. Try again later.',
      });
      t.chain!.chain.setMintPaused(PAUSABLE, false);
      await t.http
        .post(`/api/checkout/invoices/${inv.id}/transaction`)
        .send({ account: payer })
        .expect(200);
    });

    it('the checkout page discloses the permanent delegate in plain words', async () => {
      const inv = await invoice('USDG');
      const page = await t.http.get(`/checkout/invoices/${inv.id}`).expect(200);
      expect(page.text).toContain('What the issuer of USDG can do');
      expect(page.text).toMatch(
        /it can move or burn USDG from any USDG account, yours and the merchant's\s+included, without the owner's signature/,
      );
      expect(page.text).toContain(t.chain!.chain.mintAuthority.toBase58());
      const planPage = await t.http.get(`/checkout/plans/${await plan('USDG')}`).expect(200);
      expect(planPage.text).toContain('holds a permanent delegate');
    });
  });

  describe('default account state frozen', () => {
    it("the merchant's new receiving account starts frozen: the checkout refuses with a 409 saying so, a charge waits (the issuer's side: the subscription stays Active, nothing moves)", async () => {
      const inv = await invoice('USDC');
      const refused = await t.http
        .post(`/api/checkout/invoices/${inv.id}/transaction`)
        .send({ account: customer(FROZEN).publicKey.toBase58() })
        .expect(409);
      expect(refused.body.error).toMatchObject({
        code: 'CONFLICT',
        message:
          'The merchant cannot receive USDC yet: its receiving token account is frozen (new USDC accounts start frozen until the issuer thaws them).',
      });

      const k = customer(FROZEN);
      const { subscription } = await billing.subscribe(k, await plan('USDC'), acme.auth);
      expect(subscription).toMatchObject({ status: 'Active', failureReason: null });
      expect(await balanceOf(k.publicKey.toBase58(), 'USDC')).toBe(100n * UNIT);
      const [attempt] = await t.sql<{ state: string; last_error: string }>(
        'SELECT state, last_error FROM charge_attempts WHERE subscription_id = $1',
        [subscription.id],
      );
      expect(attempt).toMatchObject({ state: 'pending' });
      expect(attempt.last_error).toMatch(/^merchant_account_frozen: the merchant's token account/);
    });

    it('a payer whose new account is still frozen is told so (409) before signing anything', async () => {
      const merchant = await t.createMerchant('Thawed');
      // The issuer thawed the merchant's account (the faucet does, as an issuer would).
      fund(t, merchant.walletAddress, { symbol: FROZEN, amount: 1n });
      const inv = (
        await t.http
          .post('/api/invoices')
          .set(merchant.auth)
          .send({
            walletAddress: Keypair.generate().publicKey.toBase58(),
            mint: 'USDC',
            lineItems: [{ description: 'Work', quantity: 1, unitAmount: '5' }],
          })
          .expect(201)
      ).body.invoice as { id: string };
      const payer = Keypair.generate();
      fund(t, payer.publicKey.toBase58());
      const { createAssociatedTokenAccountIdempotentInstruction } =
        await import('@solana/spl-token');
      await billing.sendInstructions(payer, [
        createAssociatedTokenAccountIdempotentInstruction(
          payer.publicKey,
          getAssociatedTokenAddressSync(
            new PublicKey(FROZEN),
            payer.publicKey,
            true,
            TOKEN_2022_PROGRAM_ID,
          ),
          payer.publicKey,
          new PublicKey(FROZEN),
          TOKEN_2022_PROGRAM_ID,
        ),
      ]);
      const refused = await t.http
        .post(`/api/checkout/invoices/${inv.id}/transaction`)
        .send({ account: payer.publicKey.toBase58() })
        .expect(409);
      expect(refused.body.error.message).toBe(
        'Your USDC token account is frozen by the issuer (new USDC accounts start frozen until the issuer thaws them): nothing can leave it until the issuer thaws it.',
      );
      const page = await t.http.get(`/checkout/invoices/${inv.id}`).expect(200);
      expect(page.text).toContain('New USDC accounts start frozen');
    });
  });
});
