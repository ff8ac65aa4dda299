import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { LocalnetRpcClient } from './localnet-rpc.client';
import { ChainPort } from '../solana/chain.port';

/** The service key pays the fees of its pulls: on localnet it is kept at least this funded. */
const MIN_LAMPORTS = 5_000_000_000n;
const TOP_UP_LAMPORTS = 100_000_000_000n;

/**
 * Localnet only: the service key (fee payer of every charge) gets SOL from the localnet faucet
 * at start-up when it holds less than 5 SOL. On devnet and mainnet-beta the operator funds it
 * (docs/billing.md); a charge the key cannot pay for is a transient failure, retried.
 */
@Injectable()
export class ServiceKeyFunding implements OnApplicationBootstrap {
  private readonly logger = new Logger(ServiceKeyFunding.name);

  constructor(
    private readonly rpc: LocalnetRpcClient,
    private readonly chain: ChainPort,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    try {
      const balance = await this.rpc.call<{ value: number }>('getBalance', [
        this.chain.servicePublicKey,
        { commitment: 'confirmed' },
      ]);
      if (BigInt(balance.value) >= MIN_LAMPORTS) return;
      await this.rpc.call('localnet_faucet', [
        { walletAddress: this.chain.servicePublicKey, lamports: TOP_UP_LAMPORTS.toString() },
      ]);
    } catch (error) {
      this.logger.warn({ err: error }, 'Could not fund the service key on localnet');
    }
  }
}
