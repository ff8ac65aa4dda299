import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { ConflictError, NotFoundError, ValidationError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-codes';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { EventsService, NewEvent } from '../events/events.service';
import { PaymentResponse } from '../payments/dto/payment.response';
import { NewPayment, PaymentsService } from '../payments/payments.service';
import type { ScannedPull, ScannedReceipt, ScannedTransfer } from '../solana/chain.port';
import type { MintSymbol } from '../solana/mints';
import { InvoiceWithCustomerResponse } from './dto/invoice.response';
import { InvoicePaymentTarget, InvoicesRepository } from './invoices.repository';
import { InvoiceNotOpenError, InvoicesService } from './invoices.service';

/** Why money that arrived pays no invoice (the ledger line's `note`). */
export type UnattributedReason =
  | 'several_invoices'
  | 'no_invoice_reference'
  | 'other_mint'
  | 'no_transfer_instruction'
  | 'subscription_pull_by_other';

/** The merchant's subscriptions by on-chain address (the program's subscription PDAs). */
export type SubscriptionsByAddress = ReadonlyMap<string, { id: string; customerId: string }>;

/** What one receipt did to the ledger and the invoices. */
export interface ReceiptOutcome {
  /** New ledger lines (0 when the receipt was recorded before). */
  lines: number;
  unattributed: number;
  /** Invoices it made Paid. */
  paid: number;
}

/**
 * The invoices' payment rules (DESIGN sections 8 and 10): what counts as a payment of an
 * invoice, partial and over payments, late ones, and what pays no invoice. The billing engine's
 * watcher finds what arrived in merchants' receiving accounts and hands it here.
 *
 * **Attribution.** An invoice is credited with what the transfer instruction carrying its
 * reference moved into the merchant's receiving account of the invoice's mint, net of what the
 * chain withheld (a Token-2022 transfer fee is not the merchant's money), and nothing else. A
 * transfer carrying several invoices' references, none, or an invoice's reference in another
 * mint, and money that arrived with no transfer instruction of its own, are recorded once as
 * `unattributed` (`payment.unattributed`), never dropped and never credited twice; the merchant
 * attaches such a line to an invoice (`attach`) or refunds it.
 *
 * **Pulls by others.** A pull by the Subscriptions program into the account (its
 * `SubscriptionTransferEvent`) that is not one of the service's own charges (those are the charge
 * engine's, left out before here) was made by the plan's owner or another of its pullers: it is
 * recorded once as `unattributed`, `note: subscription_pull_by_other`, with the subscription it
 * pulled from (ours when its PDA is one of the merchant's subscriptions) and the puller.
 */
@Injectable()
export class InvoicePaymentsService {
  constructor(
    private readonly db: Db,
    private readonly repository: InvoicesRepository,
    private readonly clock: Clock,
    private readonly events: EventsService,
    private readonly payments: PaymentsService,
    private readonly invoices: InvoicesService,
  ) {}

  /**
   * Records what one transaction brought a merchant's receiving account of `accountMint`, in
   * one database transaction: each transfer instruction as a payment of the invoice it names,
   * or as unattributed; each pull by the Subscriptions program as a pull by another (the
   * caller gives the merchant's subscriptions at the pulls' addresses); what came without an
   * instruction as unattributed. Idempotent: a receipt seen again (a re-scan, another instance)
   * writes nothing more.
   */
  async record(
    merchantId: string,
    accountMint: MintSymbol,
    receipt: ScannedReceipt,
    subscriptions: SubscriptionsByAddress = new Map(),
  ): Promise<ReceiptOutcome> {
    return this.db.transaction(async (tx) => {
      const outcome: ReceiptOutcome = { lines: 0, unattributed: 0, paid: 0 };
      // Recorded before lines were per instruction (one line per transaction, no destination):
      // that receipt is settled. Its line escapes the unique key (a null never collides), so
      // without this a re-scan (the old watcher recorded before it moved its cursor) credits
      // the invoice again.
      if (
        await this.payments.hasLegacyInvoiceLineIn(tx, merchantId, receipt.signature, accountMint)
      ) {
        return outcome;
      }
      // The merchant's invoices the receipt names, locked in one order (two receipts naming the
      // same invoices never wait on each other in a circle).
      const named =
        receipt.references.length === 0
          ? []
          : await this.repository.lockByReferences(tx, merchantId, receipt.references);
      for (const transfer of receipt.transfers) {
        if (transfer.amount <= 0n) continue;
        const hits = named.filter((i) => transfer.references.includes(i.onchain_id));
        if (hits.length === 1 && hits[0].mint === accountMint) {
          const paid = await this.credit(tx, merchantId, hits[0], receipt, transfer);
          if (paid === null) continue;
          outcome.lines++;
          if (paid) outcome.paid++;
        } else {
          const reason: UnattributedReason =
            hits.length > 1
              ? 'several_invoices'
              : hits.length === 1
                ? 'other_mint'
                : 'no_invoice_reference';
          if (await this.unattributed(tx, merchantId, accountMint, receipt, reason, transfer)) {
            outcome.lines++;
            outcome.unattributed++;
          }
        }
      }
      for (const pull of receipt.pulls) {
        if (pull.amount <= 0n) continue;
        const ours = subscriptions.get(pull.subscription);
        if (await this.pullByOther(tx, merchantId, accountMint, receipt, pull, ours)) {
          outcome.lines++;
          outcome.unattributed++;
        }
      }
      if (receipt.unexplained > 0n) {
        if (
          await this.unattributed(tx, merchantId, accountMint, receipt, 'no_transfer_instruction')
        ) {
          outcome.lines++;
          outcome.unattributed++;
        }
      }
      return outcome;
    });
  }

  /**
   * The invoice becomes Paid (`invoice.paid`) once its finalized payments reach the total (in
   * the caller's transaction, which has seen the payment finalized).
   * @returns whether it moved now.
   */
  async payIfCovered(tx: SqlTx, payment: PaymentResponse): Promise<boolean> {
    if (payment.kind !== 'invoice' || !payment.invoiceId || payment.note) return false;
    const covered = await this.repository.lockCovered(tx, payment.invoiceId);
    if (!covered?.covered) return false;
    await this.invoices.transition(tx, covered.merchant_id, payment.invoiceId, 'pay', {
      signature: payment.signature!,
    });
    return true;
  }

  /**
   * The merchant's resolution of an unattributed payment: it becomes a payment of one of its
   * Open invoices in the same mint, as if the transfer had carried that invoice's reference
   * (`payment.received`, and `invoice.paid` once finalized payments cover it). Once: a line
   * already attached is a 409.
   * @throws NotFoundError (`INVOICE_NOT_FOUND`, or `NOT_FOUND` for the payment);
   *   InvoiceNotOpenError; ValidationError (another mint); ConflictError (already attached).
   */
  async attach(
    merchantId: string,
    invoiceId: string,
    paymentId: string,
  ): Promise<InvoiceWithCustomerResponse> {
    return this.db.transaction(async (tx) => {
      const invoice = await this.repository.lockForPayment(tx, merchantId, invoiceId);
      if (!invoice) throw new NotFoundError('Invoice', ErrorCode.INVOICE_NOT_FOUND);
      const line = await this.payments.unattributedIn(tx, merchantId, paymentId);
      if (!line) {
        if (!(await this.payments.existsIn(tx, merchantId, paymentId))) {
          throw new NotFoundError('Payment', ErrorCode.NOT_FOUND);
        }
        throw new ConflictError('This payment is not unattributed (it was attached already)');
      }
      // Given back (or being given back): it pays nothing, or it would be credited twice.
      if (line.refundHeld > 0n) {
        throw new ConflictError(
          'This payment has refunds (Pending or Succeeded): it cannot pay an invoice as well',
        );
      }
      if (invoice.status !== 'Open') throw new InvoiceNotOpenError(invoice.status);
      if (line.mint !== invoice.mint) {
        throw new ValidationError(
          `paymentId: the payment is in ${line.mint}, the invoice in ${invoice.mint}`,
          [{ field: 'paymentId', message: `is a payment in ${line.mint}` }],
        );
      }
      const excess = this.excessOf(invoice, line.amount);
      const payment = await this.payments.attachIn(tx, merchantId, paymentId, {
        invoiceId,
        customerId: invoice.customer_id,
        excess,
      });
      await this.addPaid(tx, invoice, line.amount);
      await this.events.record(tx, merchantId, 'payment.received', payment!);
      if (payment!.status === 'finalized') await this.payIfCovered(tx, payment!);
      return this.invoices.getIn(tx, merchantId, invoiceId);
    });
  }

  /**
   * A payment of `invoice` by one transfer: the ledger line (its excess over the total; the whole
   * of it, noted `invoice_not_open`, when the invoice is no longer Open), `amountPaid`, events,
   * and Paid when finalized payments cover it.
   * @returns whether it made the invoice Paid; null when it was recorded before.
   */
  private async credit(
    tx: SqlTx,
    merchantId: string,
    invoice: InvoicePaymentTarget,
    receipt: ScannedReceipt,
    transfer: ScannedTransfer,
  ): Promise<boolean | null> {
    const open = invoice.status === 'Open';
    const payment = await this.payments.insertIn(tx, {
      ...this.line(merchantId, invoice.mint, receipt, transfer),
      kind: 'invoice',
      amount: transfer.amount,
      fee: transfer.fee,
      excess: open ? this.excessOf(invoice, transfer.amount) : transfer.amount,
      customerId: invoice.customer_id,
      invoiceId: invoice.id,
      note: open ? null : 'invoice_not_open',
    });
    if (!payment) return null; // recorded before (another scan or instance)
    if (open) await this.addPaid(tx, invoice, transfer.amount);
    const events: NewEvent[] = [{ type: 'payment.received', object: payment }];
    if (payment.status === 'finalized') events.push({ type: 'payment.confirmed', object: payment });
    await this.events.recordAll(tx, merchantId, events);
    return payment.status === 'finalized' ? this.payIfCovered(tx, payment) : false;
  }

  /** Money that pays no invoice: one ledger line and `payment.unattributed`. */
  private async unattributed(
    tx: SqlTx,
    merchantId: string,
    mint: MintSymbol,
    receipt: ScannedReceipt,
    reason: UnattributedReason,
    transfer?: ScannedTransfer,
  ): Promise<boolean> {
    return this.insertUnattributed(tx, {
      ...this.line(merchantId, mint, receipt, transfer),
      kind: 'unattributed',
      amount: transfer ? transfer.amount : receipt.unexplained,
      fee: transfer?.fee ?? 0n,
      customerId: null,
      note: reason,
    });
  }

  /**
   * A pull into the account by someone other than the service (the plan's owner, another
   * puller): one ledger line, keyed by the instruction that made it, with the subscription
   * (`references`: its PDA, then the puller; `subscriptionId` and `customerId` when it is one of
   * the merchant's), the subscriber as payer, and `payment.unattributed`.
   */
  private async pullByOther(
    tx: SqlTx,
    merchantId: string,
    mint: MintSymbol,
    receipt: ScannedReceipt,
    pull: ScannedPull,
    ours: { id: string; customerId: string } | undefined,
  ): Promise<boolean> {
    return this.insertUnattributed(tx, {
      ...this.line(merchantId, mint, receipt),
      kind: 'unattributed',
      amount: pull.amount,
      fee: pull.fee,
      instruction: pull.instruction,
      references: [pull.subscription, pull.puller],
      payer: pull.delegator,
      customerId: ours?.customerId ?? null,
      subscriptionId: ours?.id ?? null,
      note: 'subscription_pull_by_other' satisfies UnattributedReason,
    });
  }

  /** An unattributed line, unless written before, and `payment.unattributed`: whether new. */
  private async insertUnattributed(tx: SqlTx, line: NewPayment): Promise<boolean> {
    const payment = await this.payments.insertIn(tx, line);
    if (!payment) return false;
    const events: NewEvent[] = [{ type: 'payment.unattributed', object: payment }];
    if (payment.status === 'finalized') events.push({ type: 'payment.confirmed', object: payment });
    await this.events.recordAll(tx, line.merchantId, events);
    return true;
  }

  /** What a payment line of a receipt shares, whatever it pays. */
  private line(
    merchantId: string,
    mint: MintSymbol,
    receipt: ScannedReceipt,
    transfer?: ScannedTransfer,
  ): Omit<NewPayment, 'kind' | 'amount' | 'customerId'> {
    return {
      merchantId,
      status: receipt.finalized ? 'finalized' : 'confirmed',
      mint,
      signature: receipt.signature,
      payer: receipt.payer,
      destination: receipt.destination,
      instruction: transfer?.instruction ?? null,
      references: transfer ? transfer.references : receipt.references,
      slot: receipt.slot,
    };
  }

  /** What `amount` brings beyond what the invoice asks for, given what was paid before. */
  private excessOf(invoice: InvoicePaymentTarget, amount: bigint): bigint {
    // What it asks for: its total less what credits took off it.
    const total = BigInt(invoice.total) - BigInt(invoice.amount_credited);
    const before = BigInt(invoice.amount_paid);
    const after = before + amount;
    if (after <= total) return 0n;
    return after - (before > total ? before : total);
  }

  /** `amountPaid` grows by `amount` (and the locked row's copy with it). */
  private async addPaid(tx: SqlTx, invoice: InvoicePaymentTarget, amount: bigint): Promise<void> {
    await this.repository.addPaid(tx, invoice.id, amount.toString(), this.clock.now());
    invoice.amount_paid = (BigInt(invoice.amount_paid) + amount).toString();
  }
}
