import { Connection } from '@solana/web3.js';
import type { AppConfig } from '../config/app-config';
import { MintInfo, mintTable } from './mints';
import { RpcChainAdapter } from './rpc-chain.adapter';
import { loadServiceKeypair } from './service-keypair';

/** Longest wait for one JSON-RPC answer. */
const RPC_TIMEOUT_MS = 15_000;

/** The cluster's mint table with the configured `MINT_*` overrides. */
export function configuredMints(config: AppConfig): MintInfo[] {
  return mintTable(config.SOLANA_CLUSTER, {
    USDC: config.MINT_USDC,
    PYUSD: config.MINT_PYUSD,
    USDG: config.MINT_USDG,
  });
}

/** A web3.js `Connection` to the configured RPC. Nothing connects until first use. */
export function createConnection(config: AppConfig): Connection {
  return new Connection(config.solanaRpcUrl, {
    commitment: config.SOLANA_COMMITMENT,
    disableRetryOnRateLimit: false,
    // web3.js sets no timeout: an RPC that never answers would hold a caller forever.
    fetch: (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(RPC_TIMEOUT_MS) }),
  });
}

/** The chain adapter as the service configures it (the service keypair loaded or generated). */
export async function createChainAdapter(
  connection: Connection,
  config: AppConfig,
): Promise<RpcChainAdapter> {
  return new RpcChainAdapter(connection, {
    cluster: config.SOLANA_CLUSTER,
    scheme: config.subscriptionScheme,
    commitment: config.SOLANA_COMMITMENT,
    mints: configuredMints(config),
    serviceKey: await loadServiceKeypair(config),
    approvalPeriods: config.SUBSCRIPTION_APPROVAL_PERIODS,
  });
}
