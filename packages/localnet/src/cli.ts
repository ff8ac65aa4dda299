#!/usr/bin/env node
/**
 * `localnet`: the chain on its own, without the billing service.
 *
 *   LOCALNET_DEV_KEY (required): the key its `localnet_*` methods take as a bearer token
 *   LOCALNET_DATA_DIR=.data (state under <dir>/localnet)   LOCALNET_HOST=127.0.0.1
 *   LOCALNET_RPC_PORT=8899 (WebSocket on the next port)   LOCALNET_FINALITY_SLOTS=8
 *   MINT_USDC / MINT_PYUSD / MINT_USDG: mint addresses (default: mainnet's)
 *
 * The service's `npm run localnet` starts the same chain with the service's configuration (its
 * dev key file and mint overrides).
 */
import { ChainClockStateError } from './chain-clock';
import { DEV_KEY_PATTERN } from './dev-key';
import { mainnetMints } from './mints';
import { serveLocalnet } from './serve';

class UsageError extends Error {}

function given(name: string): string | undefined {
  const value = process.env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function wholeNumber(name: string, fallback: number, min: number, max: number): number {
  const value = given(name);
  const parsed = value === undefined ? fallback : Number(value);
  if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
    throw new UsageError(`${name}=${JSON.stringify(value)}: must be a whole number ${min}..${max}`);
  }
  return parsed;
}

async function main(): Promise<void> {
  const devKey = given('LOCALNET_DEV_KEY');
  if (devKey === undefined || !DEV_KEY_PATTERN.test(devKey)) {
    throw new UsageError(
      'LOCALNET_DEV_KEY is required: 32..256 printable characters without spaces',
    );
  }
  await serveLocalnet({
    dataDir: given('LOCALNET_DATA_DIR') ?? '.data',
    host: given('LOCALNET_HOST') ?? '127.0.0.1',
    // The WebSocket takes the next port, so the last port cannot be ours.
    port: wholeNumber('LOCALNET_RPC_PORT', 8899, 1, 65534),
    finalitySlots: wholeNumber('LOCALNET_FINALITY_SLOTS', 8, 0, 150),
    devKey,
    mints: mainnetMints({
      USDC: given('MINT_USDC'),
      PYUSD: given('MINT_PYUSD'),
      USDG: given('MINT_USDG'),
    }),
    log: (line) => process.stdout.write(`${line}\n`),
  });
}

main().catch((error: unknown) => {
  if (error instanceof UsageError || error instanceof ChainClockStateError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
