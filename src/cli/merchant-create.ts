/**
 * `npm run merchant:create -- --name "Acme" --wallet <base58> [--json]` (DESIGN D14).
 * Creates a merchant with its first API key and webhook secret, on the same database as the
 * server: DATABASE_URL, or the embedded PostgreSQL of $DATA_DIR, reused when a server already
 * runs on it (never a second postmaster on one data directory).
 */
import { NestFactory } from '@nestjs/core';
import { parseArgs } from 'node:util';
import { ValidationError } from '../common/errors/domain-error';
import { isSolanaAddress } from '../common/validators/solana-address';
import { loadConfig } from '../config/load-config';
import { openDatabase } from '../database/database-connection';
import { runMigrations } from '../database/migrate';
import { MerchantsService } from '../merchants/merchants.service';
import { CliModule } from './cli.module';
import { runCli, UsageError } from './run-cli';

const USAGE = 'usage: npm run merchant:create -- --name <name> --wallet <base58 address> [--json]';

runCli(async (out) => {
  let values: { name?: string; wallet?: string; json?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        name: { type: 'string' },
        wallet: { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  if (values.help) {
    out(USAGE);
    return;
  }
  if (!values.name || !values.wallet)
    throw new UsageError(`--name and --wallet are required\n${USAGE}`);
  if (!isSolanaAddress(values.wallet)) {
    throw new UsageError(
      'walletAddress: must be a base58 Solana address (32-44 characters, 32 bytes)',
    );
  }

  const config = loadConfig();
  const db = await openDatabase(config);
  try {
    await runMigrations(db.url);
    const app = await NestFactory.createApplicationContext(CliModule.forRoot(config, db.url), {
      logger: false,
    });
    try {
      const created = await app
        .get(MerchantsService)
        .create({ name: values.name, walletAddress: values.wallet })
        .catch((error: unknown) => {
          if (error instanceof ValidationError) throw new UsageError(error.message);
          throw error;
        });
      if (values.json) {
        out(JSON.stringify(created));
      } else {
        out(`Merchant created: ${created.merchant.name} (${created.merchant.id})`);
        out(`  wallet:         ${created.merchant.walletAddress}`);
        out(`  API key:        ${created.apiKey}   (shown once; store it now)`);
        out(`  webhook secret: ${created.webhookSecret}`);
      }
    } finally {
      await app.close();
    }
  } finally {
    await db.release();
  }
});
