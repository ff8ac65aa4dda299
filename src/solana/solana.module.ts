import { Global, Module } from '@nestjs/common';
import { Connection } from '@solana/web3.js';
import { AppConfig } from '../config/app-config';
import { ChainPort } from './chain.port';
import { mintTable } from './mints';
import { RpcChainAdapter } from './rpc-chain.adapter';
import { loadServiceKeypair } from './service-keypair';

/** Longest wait for one JSON-RPC answer. */
const RPC_TIMEOUT_MS = 15_000;

/**
 * The chain, behind `ChainPort`: one `RpcChainAdapter` over a web3.js `Connection` to the
 * configured RPC (the embedded localnet by default). Nothing connects until first use.
 */
@Global()
@Module({
  providers: [
    {
      provide: Connection,
      inject: [AppConfig],
      useFactory: (config: AppConfig) =>
        new Connection(config.solanaRpcUrl, {
          commitment: config.SOLANA_COMMITMENT,
          disableRetryOnRateLimit: false,
          // web3.js sets no timeout: an RPC that never answers would hold a caller forever.
          fetch: (input, init) =>
            fetch(input, { ...init, signal: AbortSignal.timeout(RPC_TIMEOUT_MS) }),
        }),
    },
    {
      provide: ChainPort,
      inject: [Connection, AppConfig],
      useFactory: async (connection: Connection, config: AppConfig) =>
        new RpcChainAdapter(connection, {
          cluster: config.SOLANA_CLUSTER,
          scheme: config.subscriptionScheme,
          commitment: config.SOLANA_COMMITMENT,
          mints: mintTable(config.SOLANA_CLUSTER, {
            USDC: config.MINT_USDC,
            PYUSD: config.MINT_PYUSD,
            USDG: config.MINT_USDG,
          }),
          serviceKey: await loadServiceKeypair(config),
          approvalPeriods: config.SUBSCRIPTION_APPROVAL_PERIODS,
        }),
    },
  ],
  exports: [ChainPort, Connection],
})
export class SolanaModule {}
