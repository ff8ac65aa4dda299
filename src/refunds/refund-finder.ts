import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { Db } from '../database/db';
import { EventsService } from '../events/events.service';
import { InvoiceCreditsService } from '../invoices/invoice-credits.service';
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
 * **Once:** the refund moves Pending (or Expired) -> Succeeded by compare-and-set, and its negative ledger
 * line is unique per transfer instruction: one transfer settles at most one refund (two
 * refunds' references on one transfer settle the first read), and a refund is settled by one
 * instance, once, with `refund.succeeded` and its invoice's `amountRefunded` in the same
 * transaction.
 */
@Injectable()
export class RefundFinder {
  private readonly logger = new Logger(RefundFinder.name);

  constructor(
    private readonly db: Db,
    private readonly refunds: RefundsRepository,
    private readonly payments: PaymentsService,
    private readonly invoices: InvoiceCreditsService,
    private readonly merchants: MerchantsService,
    private readonly events: EventsService,
    private readonly chain: ChainPort,
    private readonly clock: Clock,
  ) {}

  /**
   * The transfers on-chain (at `confirmed`) that would make the refund, oldest first, and
   * whether the scan read every transaction naming its reference (`complete`: only then does
   * "none" mean none landed).
   */
  async look(refund: RefundRow): Promise<{ landings: RefundLanding[]; complete: boolean }> {
    const [merchant, mint] = await Promise.all([
      this.merchants.account(refund.merchant_id),
      this.chain.mint(refund.mint),
    ]);
    const scan = await this.chain.scanReference(refund.reference, null);
    const landings: RefundLanding[] = [];
    for (const receipt of scan.receipts) {
      if (receipt.destination !== refund.destination || receipt.mint !== mint.address) continue;
      for (const transfer of receipt.transfers) {
        if (
          transfer.references.includes(refund.reference) &&
          transfer.authority === merchant.walletAddress &&
          transfer.gross === BigInt(refund.amount)
        ) {
          landings.push({
            signature: receipt.signature,
            slot: receipt.slot,
            finalized: receipt.finalized,
            transfer,
          });
        }
      }
    }
    return { landings, complete: scan.complete };
  }

  /**
   * Records a finalized landing: the negative ledger line, Pending (or Expired) -> Succeeded,
   * `refund.succeeded` and the invoice's `amountRefunded`, in one transaction. Null when the
   * refund was settled meanwhile or the transfer already settled another refund. The chain is
   * the truth: an Expired refund whose transfer is found after all is recorded even if what it
   * held was given back meanwhile (that is logged as a warning: the merchant paid twice).
   */
  async settle(refund: RefundRow, landing: RefundLanding): Promise<RefundRow | null> {
    const merchant = await this.merchants.account(refund.merchant_id);
    try {
      return await this.db.transaction(async (tx) => {
        // The locks in the order every refund path takes them: invoice, line, refund.
        if (refund.invoice_id) {
          await this.invoices.lockedIn(tx, refund.merchant_id, refund.invoice_id);
        }
        await this.payments.refundableIn(tx, refund.merchant_id, refund.payment_id, true);
        const current = await this.refunds.lock(tx, refund.merchant_id, refund.id);
        if (!current || current.status === 'Succeeded') return null;
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
        if (current.status === 'Expired') {
          // What it held was given back at its expiry: it holds it again.
          await this.payments.holdForRefundIn(
            tx,
            row.merchant_id,
            row.payment_id,
            BigInt(row.amount),
          );
          this.logger.warn(
            { refund: row.id, signature: landing.signature },
            'An Expired refund landed after all: recorded; check what else was given back of its payment',
          );
        }
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
