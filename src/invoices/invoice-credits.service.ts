import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { DomainError, NotFoundError } from '../common/errors/domain-error';
import { ErrorCode } from '../common/errors/error-codes';
import { formatAmount } from '../common/money';
import type { SqlTx } from '../database/pg-transaction';
import { InvoiceWithCustomerResponse } from './dto/invoice.response';
import { InvoicePaymentTarget, InvoicesRepository } from './invoices.repository';
import { InvoiceNotOpenError, InvoicesService } from './invoices.service';

/** A credit note asks to take more off an Open invoice than it still asks for. */
export class CreditExceedsDueError extends DomainError {
  constructor(due: bigint, mint: string) {
    super(
      ErrorCode.CREDIT_EXCEEDS_DUE,
      `At most ${formatAmount(due)} ${mint} is still due on this invoice: a credit note can take off no more`,
    );
  }
}

/**
 * What money given back does to invoices (docs/refunds.md): a credit note's `reduce_due` and
 * `credit`, a landed refund's `amountRefunded`, and the invoice's row lock the refunds and
 * credit notes of one invoice are decided under. Each in the caller's transaction.
 */
@Injectable()
export class InvoiceCreditsService {
  constructor(
    private readonly invoices: InvoicesRepository,
    private readonly service: InvoicesService,
    private readonly clock: Clock,
  ) {}

  /**
   * A credit note's `reduce_due`, in the caller's transaction: the Open invoice asks for
   * `amount` less (`amountCredited`), never below what is paid; once what is paid and credited
   * covers it, it is Paid (`invoice.paid`).
   * @throws NotFoundError (`INVOICE_NOT_FOUND`); InvoiceNotOpenError; CreditExceedsDueError
   */
  async creditIn(
    tx: SqlTx,
    merchantId: string,
    id: string,
    amount: bigint,
  ): Promise<InvoiceWithCustomerResponse> {
    const invoice = await this.invoices.lockForPayment(tx, merchantId, id);
    if (!invoice) throw new NotFoundError('Invoice', ErrorCode.INVOICE_NOT_FOUND);
    if (invoice.status !== 'Open') throw new InvoiceNotOpenError(invoice.status);
    const due =
      BigInt(invoice.total) - BigInt(invoice.amount_paid) - BigInt(invoice.amount_credited);
    if (amount > due) throw new CreditExceedsDueError(due < 0n ? 0n : due, invoice.mint);
    await this.invoices.addCredited(tx, merchantId, id, amount.toString(), this.clock.now());
    const covered = await this.invoices.lockCovered(tx, id);
    if (covered?.covered) return this.service.transition(tx, merchantId, id, 'pay');
    return this.service.getIn(tx, merchantId, id);
  }

  /**
   * The merchant's invoice as money given back of it needs it (total, paid, credited), locked
   * for the caller's transaction: refunds and credit notes of one invoice are decided one at a
   * time. @throws NotFoundError (`INVOICE_NOT_FOUND`)
   */
  async lockedIn(tx: SqlTx, merchantId: string, id: string): Promise<InvoicePaymentTarget> {
    const invoice = await this.invoices.lockForPayment(tx, merchantId, id);
    if (!invoice) throw new NotFoundError('Invoice', ErrorCode.INVOICE_NOT_FOUND);
    return invoice;
  }

  /** A credit note's `credit` of the invoice's payments, in the caller's transaction. */
  creditToBalanceIn(tx: SqlTx, merchantId: string, id: string, amount: bigint): Promise<void> {
    return this.invoices.addCreditedToBalance(
      tx,
      merchantId,
      id,
      amount.toString(),
      this.clock.now(),
    );
  }

  /**
   * A landed refund of one of the invoice's payments, in the caller's transaction: its
   * `amountRefunded` grows by `amount` (the invoice's status stays what it is).
   */
  addRefundedIn(tx: SqlTx, merchantId: string, id: string, amount: bigint): Promise<void> {
    return this.invoices.addRefunded(tx, merchantId, id, amount.toString(), this.clock.now());
  }
}
