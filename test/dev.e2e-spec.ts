import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { ChainPort } from '../src/solana/chain.port';
import { createTestApp, randomWallet, TestApp, TestMerchant } from './helpers/test-app';

describe('Localnet dev endpoints and the chain behind the app', () => {
  let t: TestApp;
  let m: TestMerchant;
  let connection: Connection;

  beforeAll(async () => {
    t = await createTestApp();
    m = await t.createMerchant();
    connection = new Connection(t.chain!.url, 'confirmed');
  });
  afterAll(async () => {
    await t.close();
  });

  async function tokenBalance(owner: string, mint: 'USDC' | 'PYUSD' | 'USDG'): Promise<string> {
    const resolved = await t.app.get(ChainPort).mint(mint);
    const ata = getAssociatedTokenAddressSync(
      new PublicKey(resolved.address),
      new PublicKey(owner),
      true,
      new PublicKey(resolved.tokenProgram),
    );
    return (await connection.getTokenAccountBalance(ata)).value.amount;
  }

  describe('POST /api/dev/faucet', () => {
    it.each(['USDC', 'PYUSD', 'USDG'] as const)(
      'funds a wallet with 1 SOL and %s on the chain',
      async (mint) => {
        const walletAddress = randomWallet();
        const res = await t.http
          .post('/api/dev/faucet')
          .set(t.devAuth)
          .send({ walletAddress, mint, amount: '100.5' })
          .expect(200);
        expect(res.body).toEqual({
          walletAddress,
          mint,
          amount: '100.5',
          lamports: '1000000000',
          signatures: expect.arrayContaining([expect.any(String)]),
        });
        expect(await tokenBalance(walletAddress, mint)).toBe('100500000');
        expect(await connection.getBalance(new PublicKey(walletAddress))).toBe(LAMPORTS_PER_SOL);
      },
    );

    it.each([
      [{ walletAddress: 'not-a-wallet', mint: 'USDC', amount: '1' }, 'walletAddress'],
      [{ walletAddress: randomWallet(), mint: 'DAI', amount: '1' }, 'mint'],
      [{ walletAddress: randomWallet(), mint: 'USDC', amount: '0' }, 'amount'],
      [{ walletAddress: randomWallet(), mint: 'USDC', amount: '-1' }, 'amount'],
      [{ walletAddress: randomWallet(), mint: 'USDC', amount: '1.0000001' }, 'amount'],
      [{ walletAddress: randomWallet(), mint: 'USDC', amount: '1000000.000001' }, 'amount'],
      [{ walletAddress: randomWallet(), mint: 'USDC', amount: 5 }, 'amount'],
      [{ walletAddress: randomWallet(), mint: 'USDC', amount: '1', extra: true }, 'extra'],
    ])('refuses %j with 400 VALIDATION_ERROR on %s', async (body, field) => {
      const res = await t.http.post('/api/dev/faucet').set(t.devAuth).send(body).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    });

    it('a wallet the chain refuses to fund is a 400, not a 5xx', async () => {
      const res = await t.http
        .post('/api/dev/faucet')
        .set(t.devAuth)
        .send({ walletAddress: '11111111111111111111111111111111', mint: 'USDC', amount: '1' })
        .expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.message).toMatch(/^The localnet chain refused the request: /);
    });

    it('needs the dev key: none, a wrong one or a merchant API key is 401 and funds nothing', async () => {
      const walletAddress = randomWallet();
      for (const auth of [{}, { Authorization: 'Bearer dk_wrong' }, m.auth]) {
        const res = await t.http
          .post('/api/dev/faucet')
          .set(auth)
          .send({ walletAddress, mint: 'USDC', amount: '1' })
          .expect(401);
        expect(res.body.error.code).toBe('UNAUTHORIZED');
      }
      expect(await connection.getBalance(new PublicKey(walletAddress))).toBe(0);
    });

    it('funds a wallet that then pays with a transaction the service builds', async () => {
      const payer = Keypair.generate();
      const merchantWallet = randomWallet();
      await t.http
        .post('/api/dev/faucet')
        .set(t.devAuth)
        .send({ walletAddress: payer.publicKey.toBase58(), mint: 'USDC', amount: '20' })
        .expect(200);
      // The merchant's receiving account exists (a registration created it; here the faucet).
      await t.http
        .post('/api/dev/faucet')
        .set(t.devAuth)
        .send({ walletAddress: merchantWallet, mint: 'USDC', amount: '0.000001' })
        .expect(200);
      const chain = t.app.get(ChainPort);
      const reference = Keypair.generate().publicKey.toBase58();
      const unsigned = await chain.buildInvoicePayment({
        payer: payer.publicKey.toBase58(),
        merchantWallet,
        mint: 'USDC',
        amount: 7_250_000n,
        reference,
      });
      const tx = Transaction.from(Buffer.from(unsigned.transaction, 'base64'));
      tx.partialSign(payer);
      const outcome = await chain.sendAndConfirm({
        signature: bs58.encode(tx.signature!),
        transaction: tx.serialize().toString('base64'),
        lastValidBlockHeight: unsigned.lastValidBlockHeight,
      });
      expect(outcome).toMatchObject({ state: 'succeeded' });
      expect(await tokenBalance(payer.publicKey.toBase58(), 'USDC')).toBe('12750000');
      expect(await tokenBalance(merchantWallet, 'USDC')).toBe('7250001');
      const scan = await chain.scanReference(reference, null);
      expect(scan.receipts).toMatchObject([
        {
          received: 7_250_000n,
          destination: await chain.tokenAccount(merchantWallet, 'USDC'),
          payer: payer.publicKey.toBase58(),
          references: [reference],
        },
      ]);
    });
  });

  describe('POST /api/dev/clock/advance', () => {
    it('moves the service clock and the chain clock by the same amount', async () => {
      const chainBefore = await chainClock();
      const serviceBefore = t.clock.now().getTime();
      const res = await t.http
        .post('/api/dev/clock/advance')
        .set(t.devAuth)
        .send({ seconds: 86_400 })
        .expect(200);
      expect(res.body).toEqual({
        now: new Date(serviceBefore + 86_400_000).toISOString(),
        chainUnixTimestamp: expect.any(Number),
      });
      expect(t.clock.now().getTime()).toBe(serviceBefore + 86_400_000);
      // The chain's clock also follows wall time: allow the second or two the test takes.
      expect(res.body.chainUnixTimestamp - chainBefore).toBeGreaterThanOrEqual(86_400);
      expect(res.body.chainUnixTimestamp - chainBefore).toBeLessThanOrEqual(86_402);
      expect(await chainClock()).toBeGreaterThanOrEqual(res.body.chainUnixTimestamp);
    });

    it.each([{ seconds: 0 }, { seconds: -5 }, { seconds: 1.5 }, { seconds: '60' }, {}])(
      'refuses %j with 400 VALIDATION_ERROR',
      async (body) => {
        const res = await t.http
          .post('/api/dev/clock/advance')
          .set(t.devAuth)
          .send(body)
          .expect(400);
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
        expect(res.body.error.details[0].field).toBe('seconds');
      },
    );

    async function chainClock(): Promise<number> {
      const res = await fetch(t.chain!.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...t.devAuth },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'localnet_getClock', params: [] }),
      });
      return ((await res.json()) as { result: { unixTimestamp: number } }).result.unixTimestamp;
    }
  });

  it('GET /health reports the chain up', async () => {
    const res = await t.http.get('/health').expect(200);
    expect(res.body.details.chain).toEqual({ status: 'up', slot: expect.any(Number) });
  });
});

describe('Dev endpoints off localnet', () => {
  it('do not exist on devnet: 404 NOT_FOUND', async () => {
    const t = await createTestApp({ env: { SOLANA_CLUSTER: 'devnet' } });
    try {
      const m = await t.createMerchant();
      for (const path of ['/api/dev/faucet', '/api/dev/clock/advance']) {
        const res = await t.http.post(path).set(m.auth).send({}).expect(404);
        expect(res.body.error.code).toBe('NOT_FOUND');
      }
    } finally {
      await t.close();
    }
  });
});

describe('Health when the chain is down', () => {
  it('GET /health is 503 with the chain down', async () => {
    const t = await createTestApp();
    try {
      await t.chain!.close();
      const res = await t.http.get('/health').expect(503);
      expect(res.body.details.chain.status).toBe('down');
      expect(res.body.details.database.status).toBe('up');
    } finally {
      await t.close().catch(() => undefined);
    }
  });
});
