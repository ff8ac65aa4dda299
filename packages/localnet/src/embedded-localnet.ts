import { join } from 'node:path';
import { request } from 'undici';
import { ChainDirectoryLock } from './data-dir-lock';
import { UNAUTHORIZED } from './json-rpc';
import { LocalnetChain } from './localnet-chain';
import type { MintInfo } from './mints';
import { startLocalnetRpc } from './rpc-server';

export interface EmbeddedLocalnet {
  url: string;
  /** False when a localnet already served the port (e.g. `npm run localnet`). */
  owned: boolean;
  stop(): Promise<void>;
}

/** What `openLocalnet` needs: plain values, no service configuration. */
export interface OpenLocalnetOptions {
  /** Where a chain of ours may already answer (`http://127.0.0.1:<port>`). */
  url: string;
  /** The port to serve on when none answers (the WebSocket takes the next one). */
  port: number;
  /** The operator's dev key its `localnet_*` methods require. */
  devKey: string;
  /** The chain's state lives under `<dataDir>/localnet`. */
  dataDir: string;
  mints: MintInfo[];
  finalitySlots?: number;
}

/** A chain of ours answers at the URL but was started with another dev key. */
export class DevKeyMismatchError extends Error {}

/**
 * Whether a localnet chain of ours answers at `url` (it knows `localnet_getClock`).
 * @throws DevKeyMismatchError when it does but refuses this dev key.
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
    throw new DevKeyMismatchError(
      `the localnet chain at ${url} was started with another dev key; give both the same DEV_KEY (or the same DATA_DIR)`,
    );
  }
  return body.result !== undefined;
}

/**
 * Uses the chain already serving `url` or starts one in-process, its state under
 * `<dataDir>/localnet`.
 */
export async function openLocalnet(options: OpenLocalnetOptions): Promise<EmbeddedLocalnet> {
  const { url, devKey } = options;
  if (await answersAsLocalnet(url, devKey))
    return { url, owned: false, stop: () => Promise.resolve() };
  // One chain per data directory: when another process already serves this directory's chain
  // (on another port), use that one rather than open a second chain on the same files.
  const owner = ChainDirectoryLock.owner(join(options.dataDir, 'localnet'));
  if (owner?.url && (await answersAsLocalnet(owner.url, devKey))) {
    return { url: owner.url, owned: false, stop: () => Promise.resolve() };
  }
  const chain = await LocalnetChain.open({
    dataDir: options.dataDir,
    mints: options.mints,
    finalitySlots: options.finalitySlots,
  });
  try {
    const rpc = await startLocalnetRpc(chain, { port: options.port, devKey });
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
