import { HTTPFacilitatorClient } from '@x402/core/server';
import {
  decodePaymentRequiredHeader,
  decodePaymentSignatureHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { decodePaymentResponseHeader, wrapFetchWithPaymentFromConfig } from '@x402/fetch';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import { ExactSvmScheme as ExactSvmServer } from '@x402/svm/exact/server';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { createTransferCheckedInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import {
  ComputeBudgetProgram,
  Keypair,
  PublicKey,
  SystemProgram,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { X402_NETWORKS } from '../src/solana/exact-transfers';
import { fund } from './helpers/chain-tx';
import { billingHelpers } from './helpers/billing';
import { createTestApp, TestApp, TestMerchant } from './helpers/test-app';

const USDC = 1_000_000n;
const NETWORK = X402_NETWORKS.localnet as `${string}:${string}`;

interface Line {
  id: string;
  kind: string;
  status: string;
  amount: string;
  mint: string;
  signature: string;
  payer: string;
  customerId: string | null;
  resourceUrl: string | null;
}

const MEMO = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
const LIGHTHOUSE = new PublicKey('L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95');
const memo = (text: string, signer?: PublicKey) =>
  new TransactionInstruction({
    programId: MEMO,
    keys: signer ? [{ pubkey: signer, isSigner: true, isWritable: false }] : [],
    data: Buffer.from(text),
  });
const withReference = (ix: TransactionInstruction, reference?: PublicKey) => {
  if (reference) ix.keys.push({ pubkey: reference, isSigner: false, isWritable: false });
  return ix;
};

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );

/**
 * The x402 facilitator (docs/x402.md) driven by the official packages, not our own client: a
 * resource server built with `@x402/express` that names this service as its facilitator (with
 * the merchant's API key), and agents paying with `@x402/fetch` + `@x402/svm` from funded
 * localnet keypairs. Payments land on the localnet chain and in the merchant's ledger.
 */
describe('x402 pay per request', () => {
  let t: TestApp;
  let acme: TestMerchant;
  let other: TestMerchant;
  let serviceUrl: string;
  let resourceUrl: string;
  let resource: Server;
  let usdcMint: string;
  let billing: ReturnType<typeof billingHelpers>;
  const PRICE = '10000'; // 0.01 USDC

  /** An agent holding 10 USDC (and no SOL: the facilitator pays the fee). */
  const agent = async () => {
    const keypair = Keypair.generate();
    fund(t, keypair.publicKey.toBase58(), { symbol: 'USDC', amount: 10n * USDC });
    const signer = await createKeyPairSignerFromBytes(keypair.secretKey);
    const scheme = new ExactSvmClient(signer, { rpcUrl: t.chain!.url });
    const sent: Headers[] = [];
    const recording: typeof fetch = (input, init) => {
      sent.push(new Headers(init?.headers ?? (input instanceof Request ? input.headers : {})));
      return fetch(input, init);
    };
    // The localnet USDC mint is not among devnet's default assets: allowed, with a cap.
    const pay = wrapFetchWithPaymentFromConfig(recording, {
      schemes: [{ network: 'solana:*', client: scheme }],
      spendControls: {
        allowedAssets: [{ network: NETWORK, asset: usdcMint, maxAmountPerPayment: '100000' }],
      },
    });
    return { keypair, scheme, pay, sent };
  };
  const ledger = async (merchant: TestMerchant) =>
    (await t.http.get('/api/payments?kind=per_request').set(merchant.auth).expect(200))
      .body as Line[];
  /** The requirements the resource server asks (from its 402). */
  const requirementsOf = async (): Promise<PaymentRequirements> => {
    const unpaid = await fetch(`${resourceUrl}/weather`);
    expect(unpaid.status).toBe(402);
    return decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!).accepts[0];
  };
  /** Sends a payment of our own making to the resource server. */
  const present = (payload: PaymentPayload) =>
    fetch(`${resourceUrl}/weather`, {
      headers: { 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload) },
    });
  const payloadOf = (accepted: PaymentRequirements, transaction: string): PaymentPayload => ({
    x402Version: 2,
    resource: { url: `${resourceUrl}/weather`, description: 'Weather', mimeType: '' },
    accepted,
    payload: { transaction },
  });
  /** The facilitator's request body: the payment and the requirements it answers. */
  const bodyOf = (requirements: PaymentRequirements, transaction: string) => ({
    x402Version: 2,
    paymentPayload: payloadOf(requirements, transaction),
    paymentRequirements: requirements,
  });

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        LOCALNET_FINALITY_SLOTS: '0',
        WATCH_INTERVAL_MS: '3600000',
        CHARGE_RUN_INTERVAL_MS: '3600000',
        // Three payments' fees (10,001 lamports each) and not a fourth.
        X402_DAILY_FEE_BUDGET_LAMPORTS: '35000',
      },
    });
    billing = billingHelpers(t);
    acme = await t.createMerchant('Acme');
    other = await t.createMerchant('Other');
    serviceUrl = await listen(t.app.getHttpServer());
    usdcMint = (await billing.chain.mint('USDC')).address;

    const facilitator = new HTTPFacilitatorClient({
      url: `${serviceUrl}/x402`,
      createAuthHeaders: () =>
        Promise.resolve({ verify: acme.auth, settle: acme.auth, supported: acme.auth }),
    });
    const server = new x402ResourceServer(facilitator).register(NETWORK, new ExactSvmServer());
    const app = express();
    app.use(
      paymentMiddleware(
        {
          'GET /weather': {
            accepts: {
              scheme: 'exact',
              price: { amount: PRICE, asset: usdcMint },
              network: NETWORK,
              payTo: acme.walletAddress,
              maxTimeoutSeconds: 60,
            },
            description: 'Weather',
          },
        },
        server,
      ),
    );
    app.get('/weather', (_req, res) => {
      res.json({ weather: 'sunny' });
    });
    resource = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => resource.once('listening', resolve));
    resourceUrl = `http://127.0.0.1:${(resource.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    resource?.close();
    await t?.close();
  });

  it('GET /x402/supported names the exact scheme on the cluster and the service key as fee payer; the merchant key is required', async () => {
    const { body } = await t.http.get('/x402/supported').set(acme.auth).expect(200);
    const feePayer = billing.chain.servicePublicKey;
    expect(body).toEqual({
      kinds: [{ x402Version: 2, scheme: 'exact', network: NETWORK, extra: { feePayer } }],
      extensions: [],
      signers: { 'solana:*': [feePayer] },
    });
    const anonymous = await t.http.get('/x402/supported').expect(401);
    expect(anonymous.body.error.code).toBe('UNAUTHORIZED');
  });

  it('an unpaid request gets 402 with the requirements; a paid one gets the resource, the transfer lands, and the merchant gets a per_request ledger line, linked to its customer by wallet, and a webhook event', async () => {
    const requirements = await requirementsOf();
    expect(requirements).toMatchObject({
      scheme: 'exact',
      network: NETWORK,
      amount: PRICE,
      asset: usdcMint,
      payTo: acme.walletAddress,
      extra: { feePayer: billing.chain.servicePublicKey },
    });

    const payer = await agent();
    const wallet = payer.keypair.publicKey.toBase58();
    const customer = (
      await t.http.post('/api/customers').set(acme.auth).send({ walletAddress: wallet }).expect(201)
    ).body as { id: string };
    const before = await billing.balance(acme.walletAddress);
    // An Open invoice: the payment watcher reads the merchant's receiving account meanwhile.
    await t.http
      .post('/api/invoices')
      .set(acme.auth)
      .send({
        walletAddress: Keypair.generate().publicKey.toBase58(),
        mint: 'USDC',
        lineItems: [{ description: 'Work', quantity: 1, unitAmount: '5' }],
      })
      .expect(201);
    await billing.run();

    const paid = await payer.pay(`${resourceUrl}/weather`);
    expect(paid.status).toBe(200);
    expect(await paid.json()).toEqual({ weather: 'sunny' });
    const settled = decodePaymentResponseHeader(paid.headers.get('payment-response')!);
    expect(settled).toMatchObject({ success: true, network: NETWORK, payer: wallet });

    expect(await billing.balance(acme.walletAddress)).toBe(before + 10_000n);
    expect(await billing.balance(wallet)).toBe(10n * USDC - 10_000n);
    const [line] = await ledger(acme);
    expect(line).toMatchObject({
      kind: 'per_request',
      amount: '0.01',
      mint: 'USDC',
      signature: settled.transaction,
      payer: wallet,
      customerId: customer.id,
      resourceUrl: `${resourceUrl}/weather`,
    });
    const events = await t.sql<{ payload: { data: { object: Line } } }>(
      `SELECT payload FROM events WHERE type = 'payment.per_request' AND merchant_id = $1`,
      [acme.id],
    );
    expect(events.map((e) => e.payload.data.object.id)).toEqual([line.id]);
    // The payment watcher reads the transfer in the receiving account, and leaves it to x402:
    // one line for it, not an unattributed one as well.
    await billing.run();
    const all = (await t.http.get('/api/payments').set(acme.auth).expect(200)).body as Line[];
    expect(all.filter((l) => l.signature === settled.transaction)).toEqual([line]);
    // Another merchant sees none of it.
    expect(await ledger(other)).toEqual([]);
    expect(
      (await t.http.get(`/api/payments/${line.id}`).set(other.auth).expect(404)).body.error.code,
    ).toBe('NOT_FOUND');
  });

  it('a payer without the money: verify says insufficient_funds; settle sends it, the node refuses it: the settlement stays Pending (settled by its signature), nothing moves', async () => {
    const requirements = await requirementsOf();
    const poor = Keypair.generate();
    fund(t, poor.publicKey.toBase58(), { symbol: 'USDC', amount: 1n });
    const transaction = await handMade(poor);
    const body = bodyOf(requirements, transaction);
    const verdict = await t.http.post('/x402/verify').set(acme.auth).send(body).expect(200);
    expect(verdict.body).toEqual({
      isValid: false,
      invalidReason: 'insufficient_funds',
      payer: poor.publicKey.toBase58(),
    });
    const spent = async () =>
      (await t.http.get('/x402/fee-budget').set(acme.auth).expect(200)).body.spentLamports;
    const before = await spent();
    const settle = await t.http.post('/x402/settle').set(acme.auth).send(body).expect(200);
    expect(settle.body).toMatchObject({
      success: false,
      errorReason: 'settlement_pending',
      transaction: '',
    });
    // Its fee stays counted until its blockhash expires (a copy sent through another RPC URL
    // could still land); then the reconciler fails it and gives the fee back.
    const [settlement] = await t.sql<{ status: string; network_fee: string }>(
      `SELECT status, network_fee::text FROM x402_settlements WHERE payer = $1`,
      [poor.publicKey.toBase58()],
    );
    expect(settlement.status).toBe('Pending');
    expect(BigInt(await spent())).toBe(BigInt(before) + BigInt(settlement.network_fee));
    expect(await billing.balance(poor.publicKey.toBase58())).toBe(1n);
  });

  it('a replayed payment is refused: the same PAYMENT-SIGNATURE again gets 402 and settles nothing', async () => {
    const payer = await agent();
    expect((await payer.pay(`${resourceUrl}/weather`)).status).toBe(200);
    const header = payer.sent.map((h) => h.get('payment-signature')).find(Boolean)!;
    const lines = (await ledger(acme)).length;

    const replayed = await fetch(`${resourceUrl}/weather`, {
      headers: { 'PAYMENT-SIGNATURE': header },
    });
    expect(replayed.status).toBe(402);
    // Presented to the facilitator itself: refused as a duplicate, not an error.
    const payload = decodePaymentSignatureHeader(header);
    const direct = await t.http
      .post('/x402/settle')
      .set(acme.auth)
      .send({ x402Version: 2, paymentPayload: payload, paymentRequirements: payload.accepted })
      .expect(200);
    expect(direct.body).toMatchObject({ success: false, errorReason: 'duplicate_settlement' });
    expect(await billing.balance(payer.keypair.publicKey.toBase58())).toBe(10n * USDC - 10_000n);
    expect((await ledger(acme)).length).toBe(lines);
  });

  it('a short payment is refused at verify (amount mismatch), and nothing moves', async () => {
    const requirements = await requirementsOf();
    const payer = await agent();
    const short = await payer.scheme.createPaymentPayload(2, { ...requirements, amount: '9999' });
    const verdict = await t.http
      .post('/x402/verify')
      .set(acme.auth)
      .send(bodyOf(requirements, short.payload.transaction as string))
      .expect(200);
    expect(verdict.body).toEqual({
      isValid: false,
      invalidReason: 'invalid_exact_svm_payload_amount_mismatch',
      payer: payer.keypair.publicKey.toBase58(),
    });
    const refused = await present(payloadOf(requirements, short.payload.transaction as string));
    expect(refused.status).toBe(402);
    expect(await billing.balance(payer.keypair.publicKey.toBase58())).toBe(10n * USDC);
  });

  /**
   * A payment of our own making: the fee payer the service key, the payer signing, and the
   * instructions given (by default the scheme's: limit, price, the transfer to the merchant).
   */
  const handMade = async (
    payer: Keypair,
    change: {
      price?: number;
      transfer?: Partial<{ source: PublicKey; destination: PublicKey; authority: PublicKey }>;
      mint?: PublicKey;
      extra?: TransactionInstruction[];
      tamper?: boolean;
      /** An account more on the transfer (as a Solana Pay reference rides). */
      reference?: PublicKey;
    } = {},
  ) => {
    const feePayer = new PublicKey(billing.chain.servicePublicKey);
    const mint = change.mint ?? new PublicKey(usdcMint);
    const owner = payer.publicKey;
    const { blockhash } = await billing.connection.getLatestBlockhash();
    const message = new TransactionMessage({
      payerKey: feePayer,
      recentBlockhash: blockhash,
      instructions: [
        ComputeBudgetProgram.setComputeUnitLimit({ units: 20_000 }),
        ComputeBudgetProgram.setComputeUnitPrice({ microLamports: change.price ?? 1 }),
        withReference(
          createTransferCheckedInstruction(
            change.transfer?.source ?? getAssociatedTokenAddressSync(mint, owner),
            mint,
            change.transfer?.destination ??
              getAssociatedTokenAddressSync(mint, new PublicKey(acme.walletAddress)),
            change.transfer?.authority ?? owner,
            BigInt(PRICE),
            6,
          ),
          change.reference,
        ),
        ...(change.extra ?? []),
      ],
    }).compileToV0Message();
    const tx = new VersionedTransaction(message);
    tx.sign([payer]);
    if (change.tamper) tx.signatures[1][0] ^= 1;
    return Buffer.from(tx.serialize()).toString('base64');
  };

  it.each([
    [
      'an extra instruction (the payer moving SOL as well)',
      'invalid_exact_svm_payload_unknown_optional_instruction',
      (payer: Keypair) => ({
        extra: [
          SystemProgram.transfer({
            fromPubkey: payer.publicKey,
            toPubkey: Keypair.generate().publicKey,
            lamports: 1,
          }),
        ],
      }),
    ],
    [
      "the fee payer's own tokens (the service key as the transfer's authority)",
      'invalid_exact_svm_payload_transaction_fee_payer_transferring_funds',
      (payer: Keypair) => {
        const service = new PublicKey(billing.chain.servicePublicKey);
        return {
          transfer: {
            source: getAssociatedTokenAddressSync(new PublicKey(usdcMint), service),
            authority: service,
          },
          // The payer signs something (a memo) so that the transaction has its two signers.
          extra: [
            new TransactionInstruction({
              programId: new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr'),
              keys: [{ pubkey: payer.publicKey, isSigner: true, isWritable: false }],
              data: Buffer.from('0123456789abcdef0123456789abcdef'),
            }),
          ],
        };
      },
    ],
    [
      "an account more on the transfer (an invoice's reference riding along)",
      'invalid_exact_svm_payload_no_transfer_instruction',
      () => ({ reference: Keypair.generate().publicKey }),
    ],
    [
      'a Lighthouse instruction in the sixth place (only a Memo may be there)',
      'invalid_exact_svm_payload_unknown_optional_instruction',
      () => ({
        extra: [
          memo('0123456789abcdef0123456789abcdef'),
          memo('second'),
          new TransactionInstruction({ programId: LIGHTHOUSE, keys: [], data: Buffer.from([1]) }),
        ],
      }),
    ],
    [
      "another wallet's account as the destination",
      'invalid_exact_svm_payload_recipient_mismatch',
      () => ({
        transfer: {
          destination: getAssociatedTokenAddressSync(
            new PublicKey(usdcMint),
            new PublicKey(other.walletAddress),
          ),
        },
      }),
    ],
    [
      'a compute-unit price past the ceiling',
      'invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high',
      () => ({ price: 1_000_001 }),
    ],
    [
      "a payer's signature that does not verify",
      'invalid_exact_svm_payload_signature_invalid',
      () => ({ tamper: true }),
    ],
  ])('a transaction with %s is refused, and nothing moves', async (_what, reason, change) => {
    const requirements = await requirementsOf();
    const payer = await agent();
    const service = billing.chain.servicePublicKey;
    fund(t, service, { symbol: 'USDC', amount: 5n * USDC });
    const serviceBefore = await billing.balance(service);
    const transaction = await handMade(payer.keypair, change(payer.keypair));
    const body = bodyOf(requirements, transaction);
    const settle = await t.http.post('/x402/settle').set(acme.auth).send(body).expect(200);
    expect(settle.body).toMatchObject({ success: false, errorReason: reason, transaction: '' });
    expect((await present(body.paymentPayload)).status).toBe(402);
    expect(await billing.balance(payer.keypair.publicKey.toBase58())).toBe(10n * USDC);
    expect(await billing.balance(service)).toBe(serviceBefore);
  });

  it('a hand-made payment that keeps every rule is valid (the cases above differ from it in one thing each)', async () => {
    const requirements = await requirementsOf();
    const payer = await agent();
    const verdict = await t.http
      .post('/x402/verify')
      .set(acme.auth)
      .send(bodyOf(requirements, await handMade(payer.keypair)))
      .expect(200);
    expect(verdict.body).toEqual({ isValid: true, payer: payer.keypair.publicKey.toBase58() });
  });

  it("the merchant's daily fee budget is counted and enforced: past it, settle answers fee_budget_exceeded and sends nothing", async () => {
    const settled = await t.sql<{ fee: string }>(
      `SELECT sum(network_fee)::text AS fee FROM x402_settlements
        WHERE merchant_id = $1 AND status <> 'Failed'`,
      [acme.id],
    );
    const budget = (await t.http.get('/x402/fee-budget').set(acme.auth).expect(200)).body;
    expect(budget).toMatchObject({
      budgetLamports: '35000',
      spentLamports: settled[0].fee,
    });
    expect(BigInt(budget.remainingLamports)).toBe(35_000n - BigInt(settled[0].fee));

    const requirements = await requirementsOf();
    const payer = await agent();
    const payment = await payer.scheme.createPaymentPayload(2, requirements);
    const settle = await t.http
      .post('/x402/settle')
      .set(acme.auth)
      .send(bodyOf(requirements, payment.payload.transaction as string))
      .expect(200);
    expect(settle.body).toEqual({
      success: false,
      errorReason: 'fee_budget_exceeded',
      payer: payer.keypair.publicKey.toBase58(),
      transaction: '',
      network: NETWORK,
    });
    expect(await billing.balance(payer.keypair.publicKey.toBase58())).toBe(10n * USDC);
    // Another merchant's budget is its own.
    const otherBudget = (await t.http.get('/x402/fee-budget').set(other.auth).expect(200)).body;
    expect(otherBudget.spentLamports).toBe('0');
  });

  it('a payment to another wallet than the merchant, or in another network, is not valid for this merchant', async () => {
    const requirements = await requirementsOf();
    const payer = await agent();
    const payment = await payer.scheme.createPaymentPayload(2, requirements);
    const ask = (reqs: PaymentRequirements, merchant = acme) =>
      t.http
        .post('/x402/verify')
        .set(merchant.auth)
        .send(bodyOf(reqs, payment.payload.transaction as string))
        .expect(200);
    // Acme's payment presented with another merchant's key: payTo is not that merchant's wallet.
    expect((await ask(requirements, other)).body).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_svm_payload_recipient_mismatch',
    });
    expect(
      (await ask({ ...requirements, network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp' })).body,
    ).toMatchObject({ isValid: false, invalidReason: 'invalid_network' });
    expect((await ask(requirements)).body).toEqual({
      isValid: true,
      payer: payer.keypair.publicKey.toBase58(),
    });
  });

  it('a payer whose payments landed and failed three times today is refused (payer_failures_exceeded) before anything is sent', async () => {
    const requirements = await requirementsOf();
    const payer = await agent();
    const wallet = payer.keypair.publicKey.toBase58();
    // Setup (not what is under test): three settlements of this payer that landed and failed.
    for (let i = 0; i < 3; i++) {
      await t.sql(
        `INSERT INTO x402_settlements (id, created_at, updated_at, merchant_id, status, signature,
           transaction, last_valid_block_height, network, payer, mint, amount, network_fee, error)
         VALUES (gen_random_uuid(), now(), now(), $1, 'Failed', $2, '', 0, $3, $4, 'USDC', 1,
           10001, 'landed: {"InstructionError":[2,{"Custom":1}]}')`,
        [acme.id, `failed-${wallet.slice(0, 20)}-${i}`, NETWORK, wallet],
      );
    }
    const payment = await payer.scheme.createPaymentPayload(2, requirements);
    const settle = await t.http
      .post('/x402/settle')
      .set(acme.auth)
      .send(bodyOf(requirements, payment.payload.transaction as string))
      .expect(200);
    expect(settle.body).toMatchObject({ success: false, errorReason: 'payer_failures_exceeded' });
    expect(await billing.balance(wallet)).toBe(10n * USDC);
    const rows = await t.sql(`SELECT 1 FROM x402_settlements WHERE payer = $1`, [wallet]);
    expect(rows).toHaveLength(3);
  });

  it('malformed bodies are a 400 with the field named, and lose nothing', async () => {
    const bad = await t.http
      .post('/x402/settle')
      .set(acme.auth)
      .send({ x402Version: 2, paymentPayload: { x402Version: 2 }, paymentRequirements: {} })
      .expect(400);
    expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    const notBase64 = await t.http
      .post('/x402/verify')
      .set(acme.auth)
      .send({
        x402Version: 2,
        paymentPayload: {
          x402Version: 2,
          accepted: { scheme: 'exact', network: NETWORK, amount: '1', asset: 'x', payTo: 'y' },
          payload: { transaction: '!!!' },
        },
        paymentRequirements: {
          scheme: 'exact',
          network: NETWORK,
          amount: '1',
          asset: 'x',
          payTo: 'y',
        },
      })
      .expect(400);
    expect(notBase64.body.error.code).toBe('VALIDATION_ERROR');
    const garbage = await t.http
      .post('/x402/verify')
      .set(acme.auth)
      .send({
        x402Version: 2,
        paymentPayload: {
          x402Version: 2,
          accepted: {
            scheme: 'exact',
            network: NETWORK,
            amount: PRICE,
            asset: usdcMint,
            payTo: acme.walletAddress,
            extra: { feePayer: billing.chain.servicePublicKey },
          },
          payload: { transaction: 'AAAA' },
        },
        paymentRequirements: {
          scheme: 'exact',
          network: NETWORK,
          amount: PRICE,
          asset: usdcMint,
          payTo: acme.walletAddress,
          extra: { feePayer: billing.chain.servicePublicKey },
        },
      })
      .expect(200);
    expect(garbage.body).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_svm_payload_transaction_could_not_be_decoded',
    });
    // An amount past what the ledger holds (2^63 - 1 base units), in a well-formed payment:
    // refused, not a 500.
    const requirements = { ...(await requirementsOf()), amount: '9223372036854775808' };
    const payer = await agent();
    const payment = await payer.scheme.createPaymentPayload(2, requirements);
    for (const route of ['/x402/verify', '/x402/settle']) {
      const huge = await t.http
        .post(route)
        .set(acme.auth)
        .send(bodyOf(requirements, payment.payload.transaction as string))
        .expect(200);
      expect(JSON.stringify(huge.body)).toContain('invalid_payment_requirements');
    }
  });
});
