import { request } from 'undici';
import type { AppConfig } from '../config/app-config';
import { configuredMints } from '../solana/chain.factory';
import { join } from 'node:path';
import { ConfigError } from '../config/load-config';
import { ChainDirectoryLock } from './data-dir-lock';
import { resolveDevKey } from './dev-key';
import { UNAUTHORIZED } from './json-rpc';
import { LocalnetChain } from './localnet-chain';
import { startLocalnetRpc } from './rpc-server';

export interface EmbeddedLocalnet {
  url: string;
  /** False when a localnet already served `LOCALNET_RPC_PORT` (e.g. `npm run localnet`). */
  owned: boolean;
  stop(): Promise<void>;
}

/**
 * Whether a localnet chain of ours answers at `url` (it knows `localnet_getClock`).
 * @throws ConfigError when it does but refuses this dev key (a chain started with another one).
 */
async function answersAsLocalnet(url: string, devKey: string): Promise<boolean> {
  let body: { result?: unknown; error?: { code?: number } };
  try {
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${devKey}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'localnet_getClock', params: [] }),
      headersTimeout: 2000,
      bodyTimeout: 2000,
    });
    body = (await res.body.json()) as typeof body;
  } catch {
    return false;
  }
  if (body.error?.code === UNAUTHORIZED) {
    throw new ConfigError([
      `DEV_KEY: the localnet chain at ${url} was started with another dev key; give both the same DEV_KEY (or the same DATA_DIR)`,
    ]);
  }
  return body.result !== undefined;
}

/**
 * A start-up step, like the embedded database: on localnet without `SOLANA_RPC_URL`, uses the
 * chain already serving `LOCALNET_RPC_PORT` or starts one in-process, its state under
 * `$DATA_DIR/localnet`.
 */
export async function openLocalnet(config: AppConfig): Promise<EmbeddedLocalnet | undefined> {
  if (!config.embeddedLocalnet) return undefined;
  const url = config.solanaRpcUrl;
  const devKey = resolveDevKey(config.DEV_KEY, config.DATA_DIR);
  if (await answersAsLocalnet(url, devKey))
    return { url, owned: false, stop: () => Promise.resolve() };
  // One chain per data directory: when another process already serves this directory's chain
  // (on another port), use that one rather than open a second chain on the same files.
  const owner = ChainDirectoryLock.owner(join(config.DATA_DIR, 'localnet'));
  if (owner?.url && (await answersAsLocalnet(owner.url, devKey))) {
    return { url: owner.url, owned: false, stop: () => Promise.resolve() };
  }
  const chain = await LocalnetChain.open({
    dataDir: config.DATA_DIR,
    mints: configuredMints(config),
    finalitySlots: config.LOCALNET_FINALITY_SLOTS,
  });
  try {
    const rpc = await startLocalnetRpc(chain, { port: config.LOCALNET_RPC_PORT, devKey });
    chain.announce(rpc.url);
    return {
      url: rpc.url,
      owned: true,
      stop: async () => {
        await rpc.close();
        await chain.close();
      },
    };
  } catch (error) {
    await chain.close();
    throw error;
  }
}
