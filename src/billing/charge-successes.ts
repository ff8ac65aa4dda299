import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { Db } from '../database/db';
import { UsageService } from '../usage/usage.service';
import type { BatchCommit } from '../database/group-commit';
import type { SqlTx } from '../database/pg-transaction';
import { EventsService, NewEvent } from '../events/events.service';
import { PaymentsService } from '../payments/payments.service';
import { ChainPort } from '../solana/chain.port';
import { SubscriptionsService } from '../subscriptions/subscriptions.service';
import { BillingNotices } from './billing-notices';
import { ChargeClaims } from './charge-claims';
import { AttemptRow, ChargeAttemptsRepository } from './repositories/charge-attempts.repository';

/**
 * A try: its signature and its signed bytes, from which the network fee it pays when it lands is
 * read (the base fee and its priority fee: `ChainPort.networkFee`).
 */
export interface ChargeTry {
  signature: string;
  transaction: string;
}

/** The ledger line of a charge attempt: what a success and a failure share. */
export function chargeLine(row: AttemptRow, signature: string | null) {
  return {
    merchantId: row.merchant_id,
    kind: 'subscription' as const,
    mint: row.mint,
    signature,
    payer: row.subscriber,
    customerId: row.s_customer_id,
    subscriptionId: row.subscription_id,
    period: row.period,
  };
}

/** A try that landed, to be settled with the other successes of the moment. */
export interface Success {
  row: AttemptRow;
  tried: ChargeTry;
  /** Lamports the service key paid for it (`ChainPort.networkFee`). */
  networkFee: bigint;
  slot: number;
  finalized: boolean;
  /** What the chain withheld of the pull (a Token-2022 transfer fee). */
  fee: bigint;
  from: 'open' | 'failed';
}

/**
 * The successes of the charges in flight, settled together (`BatchCommit`): the successes that
 * land while a group is committing go in the next group, one transaction for the group, and each
 * kind of row written for the whole group by one statement (the attempts, the ledger lines, the
 * subscriptions, the events of each merchant), not one statement per charge. A group that fails
 * rolls back and each of its successes is settled again alone, so only the failing one fails.
 */
@Injectable()
export class ChargeSuccesses {
  private readonly groups: BatchCommit<Success, boolean>;

  constructor(
    db: Db,
    private readonly attempts: ChargeAttemptsRepository,
    private readonly chain: ChainPort,
    private readonly clock: Clock,
    private readonly events: EventsService,
    private readonly payments: PaymentsService,
    private readonly subscriptions: SubscriptionsService,
    private readonly notices: BillingNotices,
    private readonly claims: ChargeClaims,
    private readonly usage: UsageService,
  ) {
    this.groups = db.batchCommit((tx, items) => this.write(tx, items));
  }

  /** Settles a success with those of the moment: @returns whether this instance settled it. */
  settle(success: Success): Promise<boolean> {
    return this.groups.run(success);
  }

  /**
   * Settles a group of successes in the caller's transaction: @returns for each whether it
   * settled it (false: another instance did, or holds the attempt now). Only the try that landed
   * settles its attempt (compare-and-set on its signature, and on this instance holding it);
   * then the ledger lines, the subscriptions' moves and the events of those it won.
   */
  private async write(tx: SqlTx, items: Success[]): Promise<boolean[]> {
    // One subscription twice in a group (never expected: it has one open attempt at a time)
    // would be one row of a multi-row update: then each settles alone.
    if (new Set(items.map((i) => i.row.subscription_id)).size < items.length) {
      throw new Error('a subscription twice in one group of successes');
    }
    const now = this.clock.now();
    const open = items.filter((i) => i.from === 'open');
    const won =
      open.length > 0
        ? await this.attempts.markSucceededMany(
            tx,
            open.map((i) => ({
              id: i.row.id,
              signature: i.tried.signature,
              networkFee: i.networkFee,
            })),
            this.claims.instance,
            now,
          )
        : new Set<string>();
    for (const item of items) {
      if (item.from !== 'failed') continue;
      const settle = { id: item.row.id, signature: item.tried.signature };
      const landed = { ...settle, networkFee: item.networkFee, now };
      if (await this.attempts.markSucceededFromFailed(tx, landed)) won.add(item.row.id);
    }
    const winners = items.filter((i) => won.has(i.row.id));
    if (winners.length === 0) return items.map(() => false);
    // A metered charge's line carries what it billed (docs/usage.md).
    const metered = winners.filter((i) => i.row.metered);
    const usage = await this.usage.breakdownsIn(
      tx,
      metered.map((i) => ({ subscriptionId: i.row.subscription_id, period: i.row.period })),
    );
    const payments = await this.payments.insertManyIn(
      tx,
      winners.map((i) => {
        const breakdown = usage.get(`${i.row.subscription_id}:${i.row.period - 1}`);
        return {
          ...chargeLine(i.row, i.tried.signature),
          status: i.finalized ? ('finalized' as const) : ('confirmed' as const),
          amount: BigInt(i.row.amount) - i.fee,
          fee: i.fee,
          slot: i.slot,
          details: breakdown ? { usage: breakdown } : null,
        };
      }),
    );
    const subscriptions = await this.subscriptions.recordCharges(
      tx,
      winners.map((i) => ({
        merchantId: i.row.merchant_id,
        id: i.row.subscription_id,
        chargedAt: now,
        amount: BigInt(i.row.amount),
        period: i.row.period,
      })),
    );
    const events = new Map<string, NewEvent[]>();
    winners.forEach((item, i) => {
      const payment = payments[i];
      if (!payment) return; // its line was written already: so were its events
      const merchant = events.get(item.row.merchant_id) ?? [];
      merchant.push({ type: 'payment.received', object: payment });
      if (item.finalized) merchant.push({ type: 'payment.confirmed', object: payment });
      events.set(item.row.merchant_id, merchant);
    });
    for (const [merchantId, merchantEvents] of events) {
      await this.events.recordAll(tx, merchantId, merchantEvents);
    }
    for (const [i, { row }] of winners.entries()) {
      if (this.chain.approvalOf(row.s_scheme)) {
        const amount = BigInt(row.amount);
        const left = BigInt(row.s_authorized_amount) - BigInt(row.s_charged_amount) - amount;
        // Two periods before the approval runs out: ask the customer to re-authorise.
        // Where new subscriptions are under the Subscriptions program, the notice asks the
        // customer to move there instead (the portal's re-authorisation is that move).
        if (left >= 2n * amount && left < 3n * amount) {
          const move = this.chain.movable(row.s_scheme);
          await this.notices.approvalRunningLow(tx, subscriptions[i], left / amount, move);
        }
      }
    }
    return items.map((i) => won.has(i.row.id));
  }
}
