import { Injectable } from '@nestjs/common';
import bs58 from 'bs58';
import { randomBytes, randomUUID } from 'node:crypto';
import { Clock } from '../common/clock';
import { DomainError, NotFoundError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-codes';
import { formatAmount, parseAmount } from '../common/money';
import { resolvePage } from '../common/pagination';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import { EventsService } from '../events/events.service';
import { IdempotencyClaim, IdempotencyService } from '../idempotency/idempotency.service';
import { InvoiceCreditsService } from '../invoices/invoice-credits.service';
import { MerchantsService } from '../merchants/merchants.service';
import type { RefundableRow } from '../payments/payment-refunds.repository';
import { PaymentsService } from '../payments/payments.service';
import { ChainPort, UnsignedTx } from '../solana/chain.port';
import { isMintSymbol, type MintSymbol } from '../solana/mints';
import { CreateRefundDto, ListRefundsQueryDto } from './dto/refund.dto';
import {
  RefundReissueResponse,
  RefundResponse,
  RefundTransactionResponse,
} from './dto/refund.response';
import { RefundFinder } from './refund-finder';
import { toRefundResponse } from './refund.mapper';
import { RefundRow, RefundsRepository } from './refunds.repository';

/** A refund checked and its transaction built, to be written in a transaction (`createIn`). */
export interface PreparedRefund {
  merchantId: string;
  line: RefundableRow;
  payer: string;
  mint: MintSymbol;
  amount: bigint;
  reason: string | null;
  reference: string;
  destination: string;
  built: UnsignedTx;
}

/** More than is left of the payment (what Pending and Succeeded refunds do not already hold). */
export class RefundExceedsPaymentError extends DomainError {
  constructor(left: bigint, mint: string, of: 'payment' | 'invoice' = 'payment') {
    const what = of === 'payment' ? 'this payment' : "this invoice's payments";
    super(
      ErrorCode.REFUND_EXCEEDS_PAYMENT,
      left <= 0n
        ? `Nothing is left to give back of ${what}: refunds (Pending or Succeeded) and credit notes hold all of it`
        : `At most ${formatAmount(left)} ${mint} is left to give back of ${what}`,
    );
  }
}

/** A ledger line that cannot be refunded (yet), and why. */
export class PaymentNotRefundableError extends DomainError {
  constructor(why: string) {
    super(ErrorCode.PAYMENT_NOT_REFUNDABLE, why);
  }
}

/**
 * Refunds (docs/refunds.md): money a merchant gives back of a ledger line, from its own wallet.
 * The service builds the transfer (the merchant signs and sends it), holds its amount of the
 * line while it can land, and records it only once the watcher finds it finalized on-chain
 * (`RefundWatcher`). What Pending and Succeeded refunds of a line hold never exceeds the line:
 * each is decided under the line's row lock, so of two racing for the last unit one wins.
 */
@Injectable()
export class RefundsService {
  constructor(
    private readonly db: Db,
    private readonly refunds: RefundsRepository,
    private readonly payments: PaymentsService,
    private readonly merchants: MerchantsService,
    private readonly invoices: InvoiceCreditsService,
    private readonly events: EventsService,
    private readonly idempotency: IdempotencyService,
    private readonly chain: ChainPort,
    private readonly finder: RefundFinder,
    private readonly clock: Clock,
  ) {}

  /**
   * A Pending refund of the merchant's ledger line and its unsigned transaction. The transfer
   * is built first (no database transaction waits on the chain); the refund is then written
   * with `refund.created` under the line's lock, only if it still fits what is left.
   * @throws NotFoundError when the merchant has no such line
   * @throws PaymentNotRefundableError for a refund's own line, a failed charge, a payment not
   *   finalized yet, or one whose payer is unknown
   * @throws RefundExceedsPaymentError beyond what is left of it
   */
  async create(
    merchantId: string,
    paymentId: string,
    input: CreateRefundDto,
    claim?: IdempotencyClaim,
  ): Promise<RefundTransactionResponse> {
    const prepared = await this.prepare(merchantId, paymentId, input);
    return this.db.transaction(async (tx) => {
      const response = await this.createIn(tx, prepared);
      if (claim) await this.idempotency.completeIn(tx, claim, 201, response);
      return response;
    });
  }

  /**
   * What a refund of the line needs before any database transaction: the line read, the amount
   * checked against what is left now, and its transaction built on the chain.
   * @throws as `create`
   */
  async prepare(
    merchantId: string,
    paymentId: string,
    input: { amount?: string | null; reason?: string | null },
  ): Promise<PreparedRefund> {
    const line = await this.payments.refundableIn(this.db, merchantId, paymentId, false);
    if (!line) throw new NotFoundError('Payment');
    const { payer, mint } = refundable(line);
    const left = BigInt(line.amount) - BigInt(line.refund_held);
    const amount = input.amount == null ? left : parseAmount(input.amount);
    if (amount <= 0n || amount > left) throw new RefundExceedsPaymentError(left, mint);
    const merchant = await this.merchants.account(merchantId);
    const reference = bs58.encode(randomBytes(32));
    const [built, destination] = await Promise.all([
      this.chain.buildRefund({
        merchantWallet: merchant.walletAddress,
        recipient: payer,
        mint,
        amount,
        reference,
      }),
      this.chain.tokenAccount(payer, mint),
    ]);
    return {
      merchantId,
      line,
      payer,
      mint,
      amount,
      reason: input.reason ?? null,
      reference,
      destination,
      built,
    };
  }

  /**
   * Writes a prepared refund in the caller's transaction, with `refund.created`, only if it
   * still fits what is left of its line, decided under the line's row lock.
   * @throws RefundExceedsPaymentError when another refund took what it needs meanwhile
   */
  async createIn(tx: SqlTx, prepared: PreparedRefund): Promise<RefundTransactionResponse> {
    const { merchantId, line, mint, amount } = prepared;
    const invoiceId = invoiceOf(line);
    // An invoice's payments: what it was paid, less what its refunds hold and what credit notes
    // turned into the customer's balance, bounds them all (the invoice locked first).
    if (invoiceId) await this.fitsInvoiceIn(tx, merchantId, invoiceId, amount, mint);
    const locked = (await this.payments.refundableIn(tx, merchantId, line.id, true))!;
    // Decided on the line as it is now: attached to an invoice meanwhile, it is asked again.
    if (locked.kind !== line.kind || locked.invoice_id !== line.invoice_id) {
      throw new PaymentNotRefundableError(
        'This payment changed meanwhile (it was attached to an invoice): ask for the refund again',
      );
    }
    const leftNow = BigInt(locked.amount) - BigInt(locked.refund_held);
    if (amount > leftNow) throw new RefundExceedsPaymentError(leftNow, mint);
    await this.payments.holdForRefundIn(tx, merchantId, line.id, amount);
    const row = await this.refunds.insert(tx, {
      id: randomUUID(),
      merchantId,
      paymentId: line.id,
      invoiceId,
      subscriptionId: line.subscription_id,
      customerId: line.customer_id,
      mint,
      amount: amount.toString(),
      reason: prepared.reason,
      reference: prepared.reference,
      recipient: prepared.payer,
      destination: prepared.destination,
      lastValidBlockHeight: prepared.built.lastValidBlockHeight,
      at: this.clock.now(),
    });
    const refund = toRefundResponse(row);
    await this.events.record(tx, merchantId, 'refund.created', refund);
    return {
      refund,
      unsignedTx: prepared.built.transaction,
      lastValidBlockHeight: prepared.built.lastValidBlockHeight,
    };
  }

  /**
   * A new transaction for an Expired refund (its last one can no longer land). The chain is
   * asked first: a transfer carrying its reference that landed after all settles it instead
   * (then the refund is returned Succeeded, with no transaction); one not final yet, or a
   * history the RPC could not serve whole, is a 409 (ask again). Otherwise it is Pending again,
   * provided it still fits what is left of its payment.
   * @throws NotFoundError when the merchant has no such refund
   * @throws ConflictError (`PAYMENT_NOT_REFUNDABLE`) while its transaction can still land
   */
  async reissue(merchantId: string, id: string): Promise<RefundReissueResponse> {
    const found = await this.refunds.find(merchantId, id);
    if (!found) throw new NotFoundError('Refund');
    if (found.status === 'Succeeded') return settledAnswer(found);
    if (found.status === 'Pending') {
      throw new PaymentNotRefundableError(
        `Refund ${id} is Pending: its transaction can land until block height ` +
          `${found.last_valid_block_height}; a new one is issued only once it has expired`,
      );
    }
    const { landings, complete } = await this.finder.look(found);
    for (const landing of landings.filter((l) => l.finalized)) {
      const settled = await this.finder.settle(found, landing);
      if (settled) return settledAnswer(settled);
    }
    // A transfer that may be this refund is landing, or its history could not be read whole: a
    // second transaction now could be a second refund.
    if (!complete || landings.some((l) => !l.finalized)) {
      throw new PaymentNotRefundableError(
        `A transfer carrying refund ${id}'s reference is on-chain but not final yet, or its ` +
          'history could not be read whole: ask again in a few seconds',
      );
    }
    const merchant = await this.merchants.account(merchantId);
    const built = await this.chain.buildRefund({
      merchantWallet: merchant.walletAddress,
      recipient: found.recipient,
      mint: found.mint,
      amount: BigInt(found.amount),
      reference: found.reference,
    });
    return this.db.transaction(async (tx) => {
      // The locks in the order every refund takes them: invoice, line, refund.
      if (found.invoice_id) {
        await this.fitsInvoiceIn(
          tx,
          merchantId,
          found.invoice_id,
          BigInt(found.amount),
          found.mint,
        );
      }
      const locked = await this.payments.refundableIn(tx, merchantId, found.payment_id, true);
      const current = await this.refunds.lock(tx, merchantId, id);
      if (!locked || current?.status !== 'Expired') {
        throw new PaymentNotRefundableError(
          `Refund ${id} changed meanwhile (it is ${current?.status ?? 'gone'}); read it again`,
        );
      }
      const left = BigInt(locked.amount) - BigInt(locked.refund_held);
      if (BigInt(found.amount) > left) throw new RefundExceedsPaymentError(left, found.mint);
      await this.payments.holdForRefundIn(tx, merchantId, found.payment_id, BigInt(found.amount));
      const row = (await this.refunds.reissue(
        tx,
        id,
        built.lastValidBlockHeight,
        this.clock.now(),
      ))!;
      const refund = toRefundResponse(row);
      await this.events.record(tx, merchantId, 'refund.reissued', refund);
      return {
        refund,
        unsignedTx: built.transaction,
        lastValidBlockHeight: built.lastValidBlockHeight,
      };
    });
  }

  /** @throws NotFoundError when the merchant has no such refund. */
  async get(merchantId: string, id: string): Promise<RefundResponse> {
    const row = await this.refunds.find(merchantId, id);
    if (!row) throw new NotFoundError('Refund');
    return toRefundResponse(row);
  }

  /**
   * Newest first; each filter narrows; `limit` and `startingAfter` ask for a page.
   * @throws ValidationError when `startingAfter` names no refund of the merchant.
   */
  async list(merchantId: string, query: ListRefundsQueryDto): Promise<RefundResponse[]> {
    const page = await resolvePage(query, 'refund', (id) => this.refunds.createdAt(merchantId, id));
    const rows = await this.refunds.list(merchantId, query, page);
    return rows.map(toRefundResponse);
  }

  /** A customer's refunds, newest first (the portal's list). */
  async listForCustomer(merchantId: string, customerId: string): Promise<RefundResponse[]> {
    const rows = await this.refunds.list(
      merchantId,
      { customerId },
      { limit: null, afterCreatedAt: null, afterId: null },
    );
    return rows.map(toRefundResponse);
  }

  /**
   * What can still be given back of the invoice's payments (refunded, or credited to the
   * customer's balance), with the invoice locked for the caller's transaction.
   * @throws PaymentNotRefundableError while the invoice is Open: what its payments brought
   *   still counts towards paying it (void it first, or take off what it asks: `reduce_due`)
   */
  async leftOfInvoiceIn(tx: SqlTx, merchantId: string, invoiceId: string): Promise<bigint> {
    const invoice = await this.invoices.lockedIn(tx, merchantId, invoiceId);
    if (invoice.status === 'Open') {
      throw new PaymentNotRefundableError(
        'The invoice is Open: what its payments brought still counts towards paying it. Void ' +
          'it first, or take off what it asks with a credit note (reduce_due)',
      );
    }
    const held = await this.refunds.refundedOfInvoice(tx, invoiceId);
    return BigInt(invoice.amount_paid) - BigInt(invoice.amount_credited_to_balance) - held;
  }

  /** @throws as `leftOfInvoiceIn`; RefundExceedsPaymentError when `amount` does not fit. */
  private async fitsInvoiceIn(
    tx: SqlTx,
    merchantId: string,
    invoiceId: string,
    amount: bigint,
    mint: string,
  ): Promise<void> {
    const left = await this.leftOfInvoiceIn(tx, merchantId, invoiceId);
    if (amount > left) throw new RefundExceedsPaymentError(left, mint, 'invoice');
  }
}

/** A reissue's answer for a refund found Succeeded: no transaction. */
function settledAnswer(row: RefundRow): RefundReissueResponse {
  return { refund: toRefundResponse(row), unsignedTx: null, lastValidBlockHeight: null };
}

/**
 * The invoice a line is a payment of, in the invoice's books: none for a payment that arrived
 * once it was no longer Open (`invoice_not_open`: not in its `amountPaid`, refunded on its own).
 */
function invoiceOf(line: RefundableRow): string | null {
  return line.kind === 'invoice' && line.note !== 'invoice_not_open' ? line.invoice_id : null;
}

/**
 * Who and what a refund of the line goes to.
 * @throws PaymentNotRefundableError when it cannot be refunded (yet)
 */
function refundable(line: RefundableRow): { payer: string; mint: MintSymbol } {
  if (line.kind === 'refund') {
    throw new PaymentNotRefundableError('This ledger line is a refund: refund the payment itself');
  }
  if (line.status === 'failed') {
    throw new PaymentNotRefundableError('This charge failed: it moved nothing to give back');
  }
  if (line.status !== 'finalized') {
    throw new PaymentNotRefundableError(
      'This payment is not finalized yet: it can be refunded once it is irreversible (seconds)',
    );
  }
  if (line.payer === null || !isMintSymbol(line.mint)) {
    throw new PaymentNotRefundableError(
      'Nobody is known to have paid this: there is no wallet to give it back to',
    );
  }
  return { payer: line.payer, mint: line.mint };
}
