import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { Db } from '../database/db';
import { EventsService } from '../events/events.service';
import { InvoicesService } from '../invoices/invoices.service';
import { MerchantsService } from '../merchants/merchants.service';
import { PaymentsService } from '../payments/payments.service';
import { ChainPort, ScannedTransfer } from '../solana/chain.port';
import { toRefundResponse } from './refund.mapper';
import { RefundRow, RefundsRepository } from './refunds.repository';

/** A refund's transfer as found on-chain. */
export interface RefundLanding {
  signature: string;
  slot: number;
  /** Whether its block was finalized when read (a refund succeeds only then). */
  finalized: boolean;
  transfer: ScannedTransfer;
}

/** The succeed step found the refund settled meanwhile: its ledger line is rolled back. */
class SettledMeanwhile extends Error {}

/**
 * Finds a refund's transfer on-chain and records it, once.
 *
 * **What counts:** a top-level transfer instruction that carries the refund's reference, moves
 * exactly its amount (before any transfer fee) of its mint into the recipient's token account,
 * and is signed by the merchant's wallet. Anything else carrying the reference (a transfer by
 * someone else, another amount, another account) is not this refund: it stays Pending and
 * expires as if nothing had landed.
 *
 * **Once:** the refund moves Pending -> Succeeded by compare-and-set, and its negative ledger
 * line is unique per transfer instruction: one transfer settles at most one refund (two
 * refunds' references on one transfer settle the first read), and a refund is settled by one
 * instance, once, with `refund.succeeded` and its invoice's `amountRefunded` in the same
 * transaction.
 */
@Injectable()
export class RefundFinder {
  constructor(
    private readonly db: Db,
    private readonly refunds: RefundsRepository,
    private readonly payments: PaymentsService,
    private readonly invoices: InvoicesService,
    private readonly merchants: MerchantsService,
    private readonly events: EventsService,
    private readonly chain: ChainPort,
    private readonly clock: Clock,
  ) {}

  /** The refund's transfer on-chain (at `confirmed`), or null when none landed (yet). */
  async find(refund: RefundRow): Promise<RefundLanding | null> {
    const [merchant, mint] = await Promise.all([
      this.merchants.account(refund.merchant_id),
      this.chain.mint(refund.mint),
    ]);
    const scan = await this.chain.scanReference(refund.reference, null);
    for (const receipt of scan.receipts) {
      if (receipt.destination !== refund.destination || receipt.mint !== mint.address) continue;
      const transfer = receipt.transfers.find(
        (t) =>
          t.references.includes(refund.reference) &&
          t.authority === merchant.walletAddress &&
          t.gross === BigInt(refund.amount),
      );
      if (transfer) {
        return {
          signature: receipt.signature,
          slot: receipt.slot,
          finalized: receipt.finalized,
          transfer,
        };
      }
    }
    return null;
  }

  /** Settles the refund if its transfer landed and is finalized; the refund as now, or null. */
  async settleIfLanded(refund: RefundRow): Promise<RefundRow | null> {
    const landing = await this.find(refund);
    return landing?.finalized ? this.settle(refund, landing) : null;
  }

  /**
   * Records a finalized landing: the negative ledger line, Pending -> Succeeded,
   * `refund.succeeded` and the invoice's `amountRefunded`, in one transaction. Null when the
   * refund was settled meanwhile or the transfer already settled another refund.
   */
  async settle(refund: RefundRow, landing: RefundLanding): Promise<RefundRow | null> {
    const merchant = await this.merchants.account(refund.merchant_id);
    try {
      return await this.db.transaction(async (tx) => {
        const line = await this.payments.insertIn(tx, {
          merchantId: refund.merchant_id,
          kind: 'refund',
          status: 'finalized',
          amount: -landing.transfer.gross,
          fee: landing.transfer.fee,
          destination: refund.destination,
          instruction: landing.transfer.instruction,
          references: landing.transfer.references,
          mint: refund.mint,
          signature: landing.signature,
          payer: merchant.walletAddress,
          customerId: refund.customer_id,
          invoiceId: refund.invoice_id,
          subscriptionId: refund.subscription_id,
          slot: landing.slot,
        });
        if (!line) return null;
        const row = await this.refunds.succeed(
          tx,
          refund.id,
          {
            signature: landing.signature,
            slot: landing.slot,
            fee: landing.transfer.fee.toString(),
            ledgerPaymentId: line.id,
          },
          this.clock.now(),
        );
        if (!row) throw new SettledMeanwhile();
        await this.events.record(tx, row.merchant_id, 'refund.succeeded', toRefundResponse(row));
        if (row.invoice_id) {
          await this.invoices.addRefundedIn(
            tx,
            row.merchant_id,
            row.invoice_id,
            BigInt(row.amount),
          );
        }
        return row;
      });
    } catch (error) {
      if (error instanceof SettledMeanwhile) return null;
      throw error;
    }
  }
}
