import {
  Global,
  Injectable,
  Logger,
  Module,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { Connection } from '@solana/web3.js';
import { AppConfig } from '../config/app-config';
import { createChainAdapter, createConnection, createRpcTransport } from './chain.factory';
import { ChainPort } from './chain.port';
import { MINT_SYMBOLS } from './mints';
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
 * Reads every configured mint at start (its token program, decimals and Token-2022 extensions,
 * each logged once: docs/solana.md, "Token-2022 extensions"), in the background: start-up never
 * waits on the RPC, and a mint that cannot be read now is read at its first use.
 */
@Injectable()
class MintsAtStart implements OnApplicationBootstrap {
  private readonly logger = new Logger('Mints');

  constructor(private readonly chain: ChainPort) {}

  onApplicationBootstrap(): void {
    for (const symbol of MINT_SYMBOLS) {
      this.chain
        .mint(symbol)
        .catch((error: unknown) =>
          this.logger.warn(
            `${symbol}: could not read the mint at start (read again at its first use): ${String(error)}`,
          ),
        );
    }
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
    MintsAtStart,
  ],
  exports: [ChainPort, Connection, RpcTransport],
})
export class SolanaModule {}
