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
import { BoundedExpressAdapter } from '../../src/common/http/bounded-express-adapter';
import { parseConfig } from '../../src/config/load-config';
import { MerchantsService } from '../../src/merchants/merchants.service';
import { createTestDatabase } from '../setup/test-database';
import { openReceivingAccounts } from './chain-tx';
import { openApiResponseCheck } from './openapi-responses';
import { startTestChain, TEST_DEV_AUTH, TEST_DEV_KEY, TestChain } from './test-chain';
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
  /** `Authorization` with the operator's dev key (`TEST_DEV_KEY`): what `/api/dev/*` needs. */
  devAuth: { Authorization: string };
  /** Runs SQL against the app's database (assertions on stored state). */
  sql<T = Record<string, unknown>>(query: string, params?: unknown[]): Promise<T[]>;
  /**
   * A merchant with an API key. On the app's own chain its receiving token accounts of the three
   * mints exist, as after its first registration (`receivingAccounts: false`: none, as a merchant
   * who never registered anything).
   */
  createMerchant(name?: string, options?: { receivingAccounts?: boolean }): Promise<TestMerchant>;
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
  /** How the app's own chain is created (a mint with a transfer fee, a finality lag). */
  chainOptions?: Parameters<typeof startTestChain>[1];
  /**
   * The app's `SOLANA_RPC_URL` made from its own chain (several URLs, a provider in front of
   * it); by default the chain's URL alone.
   */
  rpcUrls?: (chain: TestChain) => string | Promise<string>;
}

/**
 * Boots the whole service on a fresh database copied from the migrated template (or on a given
 * one), with a controllable clock. Nothing is mocked: real PostgreSQL, real HTTP through supertest.
 *
 * When a step fails (a bad env value, a provider that throws in `app.init()`, a port taken),
 * whatever was started before it is released in reverse order and the step's own error is
 * rethrown, so a suite whose `beforeAll` fails reports that cause at once and leaves nothing
 * running. `close()` releases everything the same way and may be called more than once.
 */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const resources = new Resources();
  try {
    return await startTestApp(options, resources);
  } catch (error) {
    await resources.releaseAfterFailure();
    throw error;
  }
}

async function startTestApp(options: TestAppOptions, resources: Resources): Promise<TestApp> {
  const owned = options.databaseUrl ? undefined : await createTestDatabase();
  if (owned) resources.add('the test database', () => owned.drop());
  const databaseUrl = options.databaseUrl ?? owned!.url;
  const dataDir = mkdtempSync(join(tmpdir(), 'billing-app-'));
  resources.add('the data directory', () => rmSync(dataDir, { recursive: true, force: true }));
  const env: Record<string, string> = {
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir,
    DEV_KEY: TEST_DEV_KEY,
    ...options.env,
  };
  const localnet = (env.SOLANA_CLUSTER ?? 'localnet') === 'localnet';
  // Localnet: a chain of its own (in memory, on a free port), unless the test gives an RPC URL.
  const chain =
    localnet && !env.SOLANA_RPC_URL
      ? await startTestChain(undefined, options.chainOptions)
      : undefined;
  if (chain) {
    resources.add('the localnet chain', () => chain.close());
    env.SOLANA_RPC_URL = options.rpcUrls ? await options.rpcUrls(chain) : chain.url;
  }
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
  const app = moduleRef.createNestApplication<NestExpressApplication>(
    new BoundedExpressAdapter(config.HTTP_REQUEST_TIMEOUT_MS),
    { bodyParser: false, logger: false },
  );
  // Closed even when `init` fails half-way: the shutdown hooks end what did start (the ORM's
  // pool, the LISTEN connection, the workers' timers).
  resources.add('the Nest application', () => app.close());
  // Every JSON response is checked against openapi.json (reported by close()).
  const responseProblems: string[] = [];
  app.use(openApiResponseCheck(responseProblems));
  configureApp(app, config);
  await app.init();

  // A small pool, so that concurrent requests in a test can each run their checks.
  const db = new Pool({ connectionString: databaseUrl, max: 4 });
  db.on('error', () => undefined); // a test may take the database away on purpose
  resources.add('the SQL pool', () => db.end());
  let merchantCount = 0;

  const testApp: TestApp = {
    app,
    http: request(app.getHttpServer()),
    clock,
    databaseUrl,
    chain,
    devAuth: TEST_DEV_AUTH,
    sql: async <T>(query: string, params: unknown[] = []) =>
      (await db.query(query, params)).rows as T[],
    async createMerchant(name = `Merchant ${++merchantCount}`, options = {}) {
      const wallet = Keypair.generate();
      const walletAddress = wallet.publicKey.toBase58();
      const created = await app.get(MerchantsService).create({ name, walletAddress });
      if (chain && options.receivingAccounts !== false) {
        await openReceivingAccounts(testApp, wallet);
      }
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
    close: async () => {
      await resources.release();
      const problems = [...new Set(responseProblems)];
      responseProblems.length = 0;
      if (problems.length) {
        throw new Error(
          `Responses that do not match openapi.json:\n${problems.slice(0, 20).join('\n')}`,
        );
      }
    },
  };
  return testApp;
}

/** How long one release may take after a failed start before the next one runs anyway. */
const RELEASE_AFTER_FAILURE_MS = 10_000;
/** A release slower than this is reported (a busy machine; or something that does not stop). */
const SLOW_RELEASE_MS = 15_000;

/**
 * What a TestApp started, released in reverse order (the pool before the app, the app before
 * its chain and its database). Each release runs even when an earlier one fails.
 */
class Resources {
  private readonly started: { name: string; release: () => unknown }[] = [];
  private released?: Promise<void>;

  add(name: string, release: () => unknown): void {
    this.started.push({ name, release });
  }

  /** Releases everything once; later calls get the first call's outcome. */
  release(): Promise<void> {
    this.released ??= this.releaseAll();
    return this.released;
  }

  /**
   * After a failed start: every release is bounded in time and none may throw, so the start's
   * own error is what the caller sees. A release that fails is reported, not hidden.
   */
  async releaseAfterFailure(): Promise<void> {
    this.released ??= this.releaseAll(RELEASE_AFTER_FAILURE_MS).catch((error: unknown) => {
      console.warn('createTestApp: releasing after a failed start', error);
    });
    await this.released;
  }

  private async releaseAll(limitMs?: number): Promise<void> {
    const failures: unknown[] = [];
    for (const { name, release } of [...this.started].reverse()) {
      const started = Date.now();
      try {
        await (limitMs === undefined ? release() : withinTime(name, limitMs, release));
      } catch (error) {
        failures.push(error);
      }
      // Said when slow, so that a hook that runs out of time names what it was waiting for.
      const ms = Date.now() - started;
      if (ms > SLOW_RELEASE_MS) console.warn(`TestApp: releasing ${name} took ${ms} ms`);
    }
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) throw new AggregateError(failures, 'TestApp: several releases failed');
  }
}

async function withinTime(name: string, ms: number, run: () => unknown): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`releasing ${name} took over ${ms} ms`)), ms);
  });
  try {
    await Promise.race([Promise.resolve().then(run), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** A random valid wallet address (base58 of 32 random bytes). */
export function randomWallet(): string {
  return bs58.encode(randomBytes(32));
}

/**
 * Sends a request again while the service answers 503 SERVICE_UNAVAILABLE, its documented
 * "retry later" (on a machine busy with a second copy of the suite, the chain can give no
 * blockhash within the service's bound), up to 20 times; then expects `status`.
 */
export async function retryingUnavailable(
  send: () => request.Test,
  status: number,
): Promise<request.Response> {
  let res = await send();
  for (let i = 0; res.status === 503 && i < 20; i++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    res = await send();
  }
  if (res.status !== status) {
    throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  }
  return res;
}
