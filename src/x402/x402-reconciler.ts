import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { BackgroundWork } from '../common/background/background-work';
import { Clock } from '../common/clock';
import { ChainPort } from '../solana/chain.port';
import { X402Repository } from './x402.repository';
import { X402Service } from './x402.service';

/** How often Pending settlements are looked up by signature. */
const RECONCILE_INTERVAL_MS = 5_000;
/** A settlement this young is still its sender's to conclude. */
const SENDER_GRACE_MS = 30_000;
const BATCH = 100;

/**
 * Concludes the settlements whose sender never did (an instance killed after the send, an RPC
 * that went silent): by signature, never by sending again. What landed is recorded in the
 * ledger even though the resource server got no answer (the merchant sees it, and can refund).
 */
@Injectable()
export class X402Reconciler implements OnApplicationBootstrap {
  constructor(
    private readonly work: BackgroundWork,
    private readonly settlements: X402Repository,
    private readonly x402: X402Service,
    private readonly chain: ChainPort,
    private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    this.work.every('x402.reconcile', RECONCILE_INTERVAL_MS, () => this.reconcile());
  }

  /** @returns how many Pending settlements were concluded. */
  async reconcile(): Promise<number> {
    const before = new Date(this.clock.now().getTime() - SENDER_GRACE_MS);
    const pending = await this.settlements.pending(before, BATCH);
    if (pending.length === 0) return 0;
    const outcomes = await this.chain.outcomes(
      pending.map((p) => ({
        signature: p.signature,
        lastValidBlockHeight: Number(p.last_valid_block_height),
      })),
    );
    let concluded = 0;
    for (const settlement of pending) {
      const outcome = outcomes.get(settlement.signature)!;
      if (outcome.state === 'pending' || outcome.state === 'unknown') continue;
      if ((await this.x402.conclude(settlement, outcome)) !== 'settlement_pending') concluded++;
    }
    return concluded;
  }
}
