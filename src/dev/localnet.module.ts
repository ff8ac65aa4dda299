import { Module } from '@nestjs/common';
import { LocalnetClockSync } from './localnet-clock.sync';
import { LocalnetRpcClient } from './localnet-rpc.client';

/**
 * The client of the localnet chain's own `localnet_*` JSON-RPC methods (faucet, clock), and the
 * service clock's sync with the chain's (servers and the merchant CLI alike). The chain
 * itself is not started here: `main.ts` starts it before the app (or `npm run localnet` runs it
 * for several instances). Localnet is a chain emulator and knows nothing of billing.
 */
@Module({
  providers: [LocalnetRpcClient, LocalnetClockSync],
  exports: [LocalnetRpcClient],
})
export class LocalnetModule {}
