import { Global, Module } from '@nestjs/common';
import { Connection } from '@solana/web3.js';
import { AppConfig } from '../config/app-config';
import { createChainAdapter, createConnection } from './chain.factory';
import { ChainPort } from './chain.port';

/**
 * The chain, behind `ChainPort`: one `RpcChainAdapter` over a web3.js `Connection` to the
 * configured RPC (the embedded localnet by default). Nothing connects until first use.
 */
@Global()
@Module({
  providers: [
    { provide: Connection, inject: [AppConfig], useFactory: createConnection },
    {
      provide: ChainPort,
      inject: [Connection, AppConfig],
      useFactory: createChainAdapter,
    },
  ],
  exports: [ChainPort, Connection],
})
export class SolanaModule {}
