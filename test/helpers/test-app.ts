import { NestExpressApplication } from '@nestjs/platform-express';
import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { randomBytes } from 'node:crypto';
import { Test } from '@nestjs/testing';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import type { DestinationStream } from 'pino';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { AppModule } from '../../src/app.module';
import { configureApp } from '../../src/app.setup';
import { Clock } from '../../src/common/clock';
import { parseConfig } from '../../src/config/load-config';
import { MerchantsService } from '../../src/merchants/merchants.service';
import { createTestDatabase } from '../setup/test-database';
import { startTestChain, TestChain } from './test-chain';
import { TestClock } from './test-clock';

/** A merchant made for a test, with an agent that sends its API key. */
export interface TestMerchant {
  id: string;
  name: string;
  walletAddress: string;
  apiKey: string;
  webhookSecret: string;
  auth: { Authorization: string };
  /** The settlement wallet's keypair, to sign what the API hands the merchant to sign. */
  wallet: Keypair;
}

export interface TestApp {
  app: NestExpressApplication;
  http: TestAgent;
  clock: TestClock;
  databaseUrl: string;
  /** The app's own localnet chain (unless the test gave `SOLANA_RPC_URL` or another cluster). */
  chain?: TestChain;
  /** Runs SQL against the app's database (assertions on stored state). */
  sql<T = Record<string, unknown>>(query: string, params?: unknown[]): Promise<T[]>;
  createMerchant(name?: string): Promise<TestMerchant>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** Share a database with another TestApp (two instances of the service). */
  databaseUrl?: string;
  /** Share a clock with another TestApp, so both see the same domain time. */
  clock?: TestClock;
  /** Replace providers (e.g. the DNS resolver behind the webhook SSRF check). */
  overrides?: { token: unknown; value: unknown }[];
  /** Where the app's log lines go (with `LOG_LEVEL` in `env`); by default nothing is logged. */
  logDestination?: DestinationStream;
}

/**
 * Boots the whole service on a fresh database copied from the migrated template (or on a given
 * one), with a controllable clock. Nothing is mocked: real PostgreSQL, real HTTP through supertest.
 */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const owned = options.databaseUrl ? undefined : await createTestDatabase();
  const databaseUrl = options.databaseUrl ?? owned!.url;
  const dataDir = mkdtempSync(join(tmpdir(), 'billing-app-'));
  const env: Record<string, string> = { LOG_LEVEL: 'silent', DATA_DIR: dataDir, ...options.env };
  const localnet = (env.SOLANA_CLUSTER ?? 'localnet') === 'localnet';
  // Localnet: a chain of its own (in memory, on a free port), unless the test gives an RPC URL.
  const chain = localnet && !env.SOLANA_RPC_URL ? await startTestChain() : undefined;
  if (chain) env.SOLANA_RPC_URL = chain.url;
  // Elsewhere the service keypair is required; a test gets a throwaway one.
  if (!localnet && !env.SERVICE_KEYPAIR) {
    env.SERVICE_KEYPAIR = JSON.stringify([...Keypair.generate().secretKey]);
  }
  const config = parseConfig(env);
  const clock = options.clock ?? new TestClock();
  const builder = Test.createTestingModule({
    imports: [AppModule.forRoot(config, databaseUrl, { logDestination: options.logDestination })],
  })
    .overrideProvider(Clock)
    .useValue(clock);
  for (const { token, value } of options.overrides ?? [])
    builder.overrideProvider(token).useValue(value);
  const moduleRef = await builder.compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>({
    bodyParser: false,
    logger: false,
  });
  configureApp(app, config);
  await app.init();

  // A small pool, so that concurrent requests in a test can each run their checks.
  const db = new Pool({ connectionString: databaseUrl, max: 4 });
  db.on('error', () => undefined); // a test may take the database away on purpose
  let merchantCount = 0;

  return {
    app,
    http: request(app.getHttpServer()),
    clock,
    databaseUrl,
    chain,
    sql: async <T>(query: string, params: unknown[] = []) =>
      (await db.query(query, params)).rows as T[],
    async createMerchant(name = `Merchant ${++merchantCount}`) {
      const wallet = Keypair.generate();
      const walletAddress = wallet.publicKey.toBase58();
      const created = await app.get(MerchantsService).create({ name, walletAddress });
      return {
        id: created.merchant.id,
        name,
        walletAddress,
        apiKey: created.apiKey,
        webhookSecret: created.webhookSecret,
        auth: { Authorization: `Bearer ${created.apiKey}` },
        wallet,
      };
    },
    async close() {
      await app.close();
      await db.end();
      await chain?.close();
      await owned?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A random valid wallet address (base58 of 32 random bytes). */
export function randomWallet(): string {
  return bs58.encode(randomBytes(32));
}
