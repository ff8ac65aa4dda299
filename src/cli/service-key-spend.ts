/**
 * `npm run service-key:spend [-- --json]`: what the service key paid in network fees for each
 * merchant's charges (the operator's cost; docs/billing.md). Reads the same database as the
 * server (DATABASE_URL, or the embedded PostgreSQL of $DATA_DIR).
 */
import { NestFactory } from '@nestjs/core';
import { parseArgs } from 'node:util';
import { serviceKeySpend } from '../billing/service-key-spend';
import { loadConfig } from '../config/load-config';
import { Db } from '../database/db';
import { openDatabase } from '../database/database-connection';
import { runMigrations } from '../database/migrate';
import { CliModule } from './cli.module';
import { runCli, UsageError } from './run-cli';

const USAGE = 'usage: npm run service-key:spend [-- --json]';
const LAMPORTS_PER_SOL = 1_000_000_000n;

runCli(async (out) => {
  let json = false;
  try {
    json = parseArgs({ options: { json: { type: 'boolean', default: false } }, strict: true })
      .values.json!;
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  const config = loadConfig();
  const db = await openDatabase(config);
  try {
    await runMigrations(db.url);
    const app = await NestFactory.createApplicationContext(CliModule.forRoot(config, db.url), {
      logger: false,
    });
    try {
      const spend = await serviceKeySpend(app.get(Db));
      if (json) {
        out(JSON.stringify(spend));
        return;
      }
      if (spend.length === 0) out('The service key has paid no network fee yet.');
      for (const m of spend) {
        const lamports = BigInt(m.lamports);
        const sol = `${lamports / LAMPORTS_PER_SOL}.${(lamports % LAMPORTS_PER_SOL).toString().padStart(9, '0')}`;
        out(`${m.merchantId}  ${m.merchantName}: ${m.landedCharges} charges, ${sol} SOL`);
      }
    } finally {
      await app.close();
    }
  } finally {
    await db.release();
  }
});
