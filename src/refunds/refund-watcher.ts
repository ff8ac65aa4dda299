import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { Db } from '../database/db';
import { EventsService } from '../events/events.service';
import { PaymentsService } from '../payments/payments.service';
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
 * Not found by a scan that read every transaction naming the reference, once the chain's
 * **finalized** block height has passed the last valid block height of its transaction (or
 * found, but taken by another refund): Expired, with `refund.expired`, and what it held of its payment is free
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
    private readonly payments: PaymentsService,
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
        const { landings, complete } = await this.finder.look(refund);
        // Not final yet: the next sweep settles it.
        if (landings.some((l) => !l.finalized)) continue;
        let settled = false;
        for (const landing of landings) {
          if (await this.finder.settle(refund, landing)) {
            settled = true;
            break;
          }
        }
        if (settled) {
          result.refundsSucceeded++;
          continue;
        }
        // Settled meanwhile, or its transfers all settled other refunds: as if none landed. A
        // scan the RPC could not serve whole proves nothing yet.
        if (!complete) continue;
        if (Number(refund.last_valid_block_height) >= finalizedHeight) continue;
        const expired = await this.db.transaction(async (tx) => {
          // The line's lock first, as every refund path takes it before the refund's.
          await this.payments.refundableIn(tx, refund.merchant_id, refund.payment_id, true);
          const row = await this.refunds.expire(
            tx,
            refund.id,
            refund.last_valid_block_height,
            this.clock.now(),
          );
          if (row) {
            // What it held of its payment is free again.
            await this.payments.holdForRefundIn(
              tx,
              row.merchant_id,
              row.payment_id,
              -BigInt(row.amount),
            );
            await this.events.record(tx, row.merchant_id, 'refund.expired', toRefundResponse(row));
          }
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
