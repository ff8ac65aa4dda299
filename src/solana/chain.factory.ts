import { Logger } from '@nestjs/common';
import { Connection } from '@solana/web3.js';
import type { AppConfig } from '../config/app-config';
import { MintInfo, mintTable } from './mints';
import { RpcChainAdapter } from './rpc-chain.adapter';
import { RpcTransport } from './rpc-transport';
import { loadServiceKeypair } from './service-keypair';

/** The cluster's mint table with the configured `MINT_*` overrides. */
export function configuredMints(config: AppConfig): MintInfo[] {
  return mintTable(config.SOLANA_CLUSTER, {
    USDC: config.MINT_USDC,
    PYUSD: config.MINT_PYUSD,
    USDG: config.MINT_USDG,
  });
}

/**
 * The one JSON-RPC transport to the configured RPC URLs (failover, budget, 429s, batches,
 * timeouts: docs/solana.md, "RPC providers"). Nothing connects until first use.
 */
export function createRpcTransport(config: AppConfig): RpcTransport {
  return new RpcTransport({
    urls: config.solanaRpcUrls,
    timeoutMs: config.SOLANA_RPC_TIMEOUT_MS,
    requestsPerSecond: config.solanaRpcRequestsPerSecond,
    maxBatch: config.SOLANA_RPC_MAX_BATCH,
  });
}

/**
 * A web3.js `Connection` whose every request goes through the transport (its `fetch`). web3.js
 * retries no 429 itself: the transport has handled it by the time web3.js sees an answer.
 */
export function createConnection(transport: RpcTransport, config: AppConfig): Connection {
  return new Connection(transport.endpoint, {
    commitment: config.SOLANA_COMMITMENT,
    fetch: transport.fetch,
    disableRetryOnRateLimit: true,
  });
}

const mintsLogger = new Logger('Mints');

/** The chain adapter as the service configures it (the service keypair loaded or generated). */
export async function createChainAdapter(
  connection: Connection,
  transport: RpcTransport,
  config: AppConfig,
): Promise<RpcChainAdapter> {
  return new RpcChainAdapter(connection, {
    cluster: config.SOLANA_CLUSTER,
    scheme: config.subscriptionScheme,
    commitment: config.SOLANA_COMMITMENT,
    mints: configuredMints(config),
    serviceKey: await loadServiceKeypair(config),
    approvalPeriods: config.SUBSCRIPTION_APPROVAL_PERIODS,
    transport,
    priorityFeeMaxMicroLamports: config.PRIORITY_FEE_MAX_MICRO_LAMPORTS,
    log: (line) => mintsLogger.log(line),
  });
}

/** The transport, its connection and the chain adapter over them (the CLIs' way). */
export async function createChain(
  config: AppConfig,
): Promise<{ transport: RpcTransport; connection: Connection; chain: RpcChainAdapter }> {
  const transport = createRpcTransport(config);
  const connection = createConnection(transport, config);
  return { transport, connection, chain: await createChainAdapter(connection, transport, config) };
}
