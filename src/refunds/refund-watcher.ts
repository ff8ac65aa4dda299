import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { Db } from '../database/db';
import { EventsService } from '../events/events.service';
import { ChainPort } from '../solana/chain.port';
import { RefundFinder } from './refund-finder';
import { toRefundResponse } from './refund.mapper';
import { RefundsRepository } from './refunds.repository';

/** What one sweep of Pending refunds did. */
export interface RefundSweepResult {
  refundsSucceeded: number;
  refundsExpired: number;
}

/** Pending refunds looked for per sweep (one `getSignaturesForAddress` each, oldest first). */
const SWEEP_BATCH = 200;

/**
 * Follows Pending refunds to their end (docs/refunds.md): each sweep looks for every Pending
 * refund's transfer by its reference. Found and finalized: Succeeded (`RefundFinder.settle`).
 * Not found once the chain's **finalized** block height has passed the last valid block height
 * of its transaction: Expired, with `refund.expired`, and what it held of its payment is free
 * again. The height is read before the scan: past it, no transaction of that blockhash can land
 * any more, and one that landed is finalized and so in the scan. Expiry is a compare-and-set on
 * that very height, so a transaction issued meanwhile is never expired by an older reading.
 * No database transaction is open across an RPC call.
 */
@Injectable()
export class RefundWatcher {
  private readonly logger = new Logger(RefundWatcher.name);

  constructor(
    private readonly db: Db,
    private readonly refunds: RefundsRepository,
    private readonly finder: RefundFinder,
    private readonly events: EventsService,
    private readonly chain: ChainPort,
    private readonly clock: Clock,
  ) {}

  async sweep(): Promise<RefundSweepResult> {
    const result: RefundSweepResult = { refundsSucceeded: 0, refundsExpired: 0 };
    const pending = await this.refunds.pending(SWEEP_BATCH);
    if (pending.length === 0) return result;
    const finalizedHeight = await this.chain.finalizedBlockHeight();
    for (const refund of pending) {
      try {
        const landing = await this.finder.find(refund);
        if (landing) {
          if (landing.finalized && (await this.finder.settle(refund, landing))) {
            result.refundsSucceeded++;
          }
          continue;
        }
        if (Number(refund.last_valid_block_height) >= finalizedHeight) continue;
        const expired = await this.db.transaction(async (tx) => {
          const row = await this.refunds.expire(
            tx,
            refund.id,
            refund.last_valid_block_height,
            this.clock.now(),
          );
          if (row)
            await this.events.record(tx, row.merchant_id, 'refund.expired', toRefundResponse(row));
          return row;
        });
        if (expired) result.refundsExpired++;
      } catch (error) {
        this.logger.warn(
          { err: error, refund: refund.id },
          'Could not follow a Pending refund; the next sweep tries again',
        );
      }
    }
    return result;
  }
}
