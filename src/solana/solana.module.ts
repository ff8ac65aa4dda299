import {
  Global,
  Injectable,
  Module,
  OnApplicationShutdown,
  OnModuleInit,
  Optional,
} from '@nestjs/common';
import { Connection } from '@solana/web3.js';
import { AppConfig } from '../config/app-config';
import { Metrics } from '../metrics/metrics';
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

/** Every JSON-RPC request counted in the metrics (`solana_rpc_*`), by method and outcome. */
@Injectable()
class RpcMetrics implements OnModuleInit {
  constructor(
    private readonly transport: RpcTransport,
    @Optional() private readonly metrics?: Metrics,
  ) {}

  onModuleInit(): void {
    const metrics = this.metrics;
    if (metrics) {
      this.transport.observe((method, outcome, seconds) =>
        metrics.recordRpcRequest(method, outcome, seconds),
      );
    }
  }
}

/**
 * The chain, behind `ChainPort`: one `RpcChainAdapter` over a web3.js `Connection` to the
 * configured RPC URLs (the embedded localnet by default), both on one `RpcTransport`. The
 * transport reports every request to the metrics (`RpcTransport.observe`).
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
    RpcMetrics,
  ],
  exports: [ChainPort, Connection, RpcTransport],
})
export class SolanaModule {}
