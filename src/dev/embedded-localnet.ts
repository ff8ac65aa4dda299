import type { EmbeddedLocalnet } from '@stablecoin-billing/localnet';
import type { AppConfig } from '../config/app-config';
import { ConfigError } from '../config/load-config';
import { configuredMints } from '../solana/chain.factory';
import { resolveDevKey } from './dev-key';

type LocalnetPackage = typeof import('@stablecoin-billing/localnet');

/** The localnet refused to start for a reason the operator can fix (said as it is, exit 2). */
export class LocalnetRefusal extends Error {}

/**
 * The chain emulator package, loaded only when the service runs on localnet: a devnet or mainnet
 * process never loads it (nor LiteSVM's native binary), and a production install (without
 * development dependencies) does not have it.
 * @throws ConfigError when it is not installed.
 */
export async function loadLocalnet(): Promise<LocalnetPackage> {
  try {
    return await import('@stablecoin-billing/localnet');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    throw new ConfigError([
      'SOLANA_CLUSTER=localnet needs the localnet chain (@stablecoin-billing/localnet, a development dependency): install with `npm install` (not --omit=dev), or set SOLANA_CLUSTER=devnet or mainnet-beta',
    ]);
  }
}

/**
 * A start-up step, like the embedded database: on localnet without `SOLANA_RPC_URL`, uses the
 * chain already serving `LOCALNET_RPC_PORT` or starts one in-process, its state under
 * `$DATA_DIR/localnet`. Nothing elsewhere.
 */
export async function openEmbeddedLocalnet(
  config: AppConfig,
): Promise<EmbeddedLocalnet | undefined> {
  if (!config.embeddedLocalnet) return undefined;
  const localnet = await loadLocalnet();
  try {
    return await localnet.openLocalnet({
      url: config.solanaRpcUrl,
      port: config.LOCALNET_RPC_PORT,
      devKey: resolveDevKey(config.DEV_KEY, config.DATA_DIR),
      dataDir: config.DATA_DIR,
      mints: configuredMints(config),
      finalitySlots: config.LOCALNET_FINALITY_SLOTS,
    });
  } catch (error) {
    if (error instanceof localnet.DevKeyMismatchError) {
      throw new ConfigError([`DEV_KEY: ${error.message}`]);
    }
    if (error instanceof localnet.ChainClockStateError) throw new LocalnetRefusal(error.message);
    throw error;
  }
}
