/**
 * `npm run localnet`: the localnet chain on its own, for several service instances (or a wallet)
 * to share, started as the service would start it (its dev key file, its mint overrides). State
 * persists under `$DATA_DIR/localnet`; the service, started later with the same
 * `LOCALNET_RPC_PORT`, uses this chain instead of starting its own.
 *
 *   DATA_DIR=.data   LOCALNET_RPC_PORT=8899 (WebSocket on the next port)   LOCALNET_HOST=127.0.0.1
 *   MINT_USDC / MINT_PYUSD / MINT_USDG: mint address overrides, as for the service
 *   DEV_KEY: the operator's dev key its `localnet_*` methods need (else `$DATA_DIR/dev-key`,
 *   made on first start: a service with the same DATA_DIR reads the same one)
 *
 * Variables come from the environment, then `.env` (which never overrides the environment). The
 * chain itself is the `@stablecoin-billing/localnet` package (packages/localnet), loaded here.
 */
import { parse as parseDotenv } from 'dotenv';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from '../config/load-config';
import { DEV_KEY_PATTERN, DevKeyError, resolveDevKey } from '../dev/dev-key';
import { loadLocalnet } from '../dev/embedded-localnet';
import { mintTable } from '../solana/mints';
import { UsageError } from './run-cli';

function environment(): Record<string, string | undefined> {
  const path = resolve(process.cwd(), '.env');
  const fromFile = existsSync(path) ? parseDotenv(readFileSync(path)) : {};
  return { ...fromFile, ...process.env };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function port(value: string | undefined): number {
  const parsed = Number(value ?? 8899);
  // The WebSocket takes the next port, so the last port cannot be ours.
  if (!Number.isInteger(parsed) || parsed < 1 || parsed > 65534) {
    throw new UsageError(`LOCALNET_RPC_PORT=${JSON.stringify(value)}: must be 1..65534`);
  }
  return parsed;
}

async function main(): Promise<void> {
  const env = environment();
  const dataDir = nonEmpty(env.DATA_DIR) ?? '.data';
  const host = nonEmpty(env.LOCALNET_HOST) ?? '127.0.0.1';
  const rpcPort = port(nonEmpty(env.LOCALNET_RPC_PORT));
  const mints = mintTable('localnet', {
    USDC: nonEmpty(env.MINT_USDC),
    PYUSD: nonEmpty(env.MINT_PYUSD),
    USDG: nonEmpty(env.MINT_USDG),
  });
  const finality = nonEmpty(env.LOCALNET_FINALITY_SLOTS);
  const finalitySlots = finality === undefined ? undefined : Number(finality);
  if (
    finalitySlots !== undefined &&
    !(Number.isInteger(finalitySlots) && finalitySlots >= 0 && finalitySlots <= 150)
  ) {
    throw new UsageError('LOCALNET_FINALITY_SLOTS must be a whole number 0..150');
  }
  const givenKey = nonEmpty(env.DEV_KEY);
  if (givenKey !== undefined && !DEV_KEY_PATTERN.test(givenKey)) {
    throw new UsageError('DEV_KEY must be 32..256 printable characters without spaces');
  }
  const devKey = resolveDevKey(givenKey, dataDir);
  const localnet = await loadLocalnet();
  try {
    await localnet.serveLocalnet({
      dataDir,
      host,
      port: rpcPort,
      devKey,
      mints,
      finalitySlots,
      log: (line) => process.stdout.write(`${line}\n`),
    });
  } catch (error) {
    if (error instanceof localnet.ChainClockStateError) throw new UsageError(error.message);
    throw error;
  }
}

main().catch((error: unknown) => {
  if (error instanceof UsageError || error instanceof DevKeyError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
