import { createServer } from 'node:net';
import {
  LocalnetFaults,
  LocalnetChain,
  LocalnetChainOptions,
  startLocalnetRpc,
} from '@stablecoin-billing/localnet';
import { mintTable } from '../../src/solana/mints';

/**
 * The dev key every test chain and test app share (docs/dev.md): what the `localnet_*` methods
 * and `/api/dev/*` need. Tests send it through `devAuth` / the RPC helpers.
 */
export const TEST_DEV_KEY = 'dk_test_0123456789abcdefghijklmnopqrstuvwxyz';
export const TEST_DEV_AUTH = { Authorization: `Bearer ${TEST_DEV_KEY}` };

export interface TestChain {
  chain: LocalnetChain;
  url: string;
  /** The JSON-RPC server's fault switches, the ones `localnet_setFaults` sets. */
  faults: LocalnetFaults;
  close(): Promise<void>;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port whose successor is free too (the WebSocket listens on port + 1). */
export async function freePortPair(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = 20_000 + Math.floor(Math.random() * 40_000);
    if ((await portFree(port)) && (await portFree(port + 1))) return port;
  }
  throw new Error('no free port pair');
}

/**
 * A localnet chain (in memory unless `dataDir` is given) with its JSON-RPC server on a free port
 * pair. `transferFees` give PYUSD/USDG a Token-2022 transfer fee (a new chain only).
 */
export async function startTestChain(
  dataDir?: string,
  options: Pick<LocalnetChainOptions, 'finalitySlots' | 'transferFees'> = {},
): Promise<TestChain> {
  const chain = await LocalnetChain.open({ dataDir, mints: mintTable('localnet'), ...options });
  for (let attempt = 0; ; attempt++) {
    try {
      const rpc = await startLocalnetRpc(chain, {
        port: await freePortPair(),
        devKey: TEST_DEV_KEY,
      });
      return {
        chain,
        url: rpc.url,
        faults: rpc.faults,
        close: async () => {
          await rpc.close();
          await chain.close();
        },
      };
    } catch (error) {
      if (attempt >= 5) throw error; // the pair was taken between the check and the listen
    }
  }
}
