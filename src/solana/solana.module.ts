import { Global, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { Connection } from '@solana/web3.js';
import { AppConfig } from '../config/app-config';
import { createChainAdapter, createConnection, createRpcTransport } from './chain.factory';
import { ChainPort } from './chain.port';
import { RpcTransport } from './rpc-transport';

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
 * configured RPC URLs (the embedded localnet by default), both on one `RpcTransport`. The
 * transport is exported so that the app counts every request in its metrics (`RpcMetrics`).
 * Nothing connects until first use.
 */
@Global()
@Module({
  providers: [
    { provide: RpcTransport, inject: [AppConfig], useFactory: createRpcTransport },
    { provide: Connection, inject: [RpcTransport, AppConfig], useFactory: createConnection },
    {
      provide: ChainPort,
      inject: [Connection, RpcTransport, AppConfig],
      useFactory: createChainAdapter,
    },
    ChainShutdown,
  ],
  exports: [ChainPort, Connection, RpcTransport],
})
export class SolanaModule {}
