import { Global, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { Connection } from '@solana/web3.js';
import { AppConfig } from '../config/app-config';
import { createChainAdapter, createConnection } from './chain.factory';
import { ChainPort } from './chain.port';

/** Stops the chain adapter's background work when the app closes. */
@Injectable()
class ChainShutdown implements OnApplicationShutdown {
  constructor(private readonly chain: ChainPort) {}

  onApplicationShutdown(): void {
    this.chain.close();
  }
}

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
    ChainShutdown,
  ],
  exports: [ChainPort, Connection],
})
export class SolanaModule {}
