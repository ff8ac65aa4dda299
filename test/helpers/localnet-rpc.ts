import { LocalnetChain, LocalnetRpc, startLocalnetRpc } from '@stablecoin-billing/localnet';
import { mintTable } from '../../src/solana/mints';
import { TEST_DEV_AUTH, TEST_DEV_KEY } from './test-chain';

export interface LocalnetUnderTest {
  chain: LocalnetChain;
  rpc: LocalnetRpc;
  /** `Authorization` with the dev key the chain was started with. */
  devAuth: { Authorization: string };
  /** Raw JSON-RPC: the whole response body, error included. */
  call(method: string, params?: unknown[]): Promise<RpcBody>;
  /** JSON-RPC that must succeed: its result. */
  result<T>(method: string, params?: unknown[]): Promise<T>;
  close(): Promise<void>;
}

export interface RpcBody {
  result?: unknown;
  error?: { code: number; message: string; data?: Record<string, unknown> };
}

/** Starts the RPC server on a random port pair, retrying when either port is taken. */
async function serve(chain: LocalnetChain): Promise<LocalnetRpc> {
  for (let attempt = 0; ; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 40_000);
    try {
      return await startLocalnetRpc(chain, { port, devKey: TEST_DEV_KEY });
    } catch (error) {
      if (attempt >= 10) throw error;
    }
  }
}

/** A localnet chain (in memory unless `dataDir` is given) behind its JSON-RPC server. */
export async function startLocalnet(dataDir?: string): Promise<LocalnetUnderTest> {
  const chain = await LocalnetChain.open({ dataDir, mints: mintTable('localnet') });
  const rpc = await serve(chain);
  let id = 0;
  const call = async (method: string, params: unknown[] = []): Promise<RpcBody> => {
    const res = await fetch(rpc.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...TEST_DEV_AUTH },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
    });
    return (await res.json()) as RpcBody;
  };
  return {
    chain,
    rpc,
    devAuth: TEST_DEV_AUTH,
    call,
    result: async <T>(method: string, params: unknown[] = []): Promise<T> => {
      const body = await call(method, params);
      if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
      return body.result as T;
    },
    close: async () => {
      await rpc.close();
      await chain.close();
    },
  };
}
