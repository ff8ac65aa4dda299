import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock } from '../common/clock';
import { formatUnits } from '../common/money';
import type { SqlTx } from '../database/pg-transaction';
import { CustomerCreditsRepository } from './customer-credits.repository';

/** A customer's credit balance in one mint, as the API shows it. */
export interface CreditBalance {
  /** @example "USDC" */
  mint: string;
  /** Decimal string. @example "25" */
  balance: string;
}

/**
 * Customers' credit balances with their merchant, per mint (docs/refunds.md, "Credit
 * balances"): a credit note that leaves a credit adds to it, and each new invoice of the
 * customer in that mint takes what it can of it, in the invoice's own transaction. Every change
 * holds the customer's balance first, so it never goes below zero and no credit is used twice.
 */
@Injectable()
export class CustomerCreditsService {
  constructor(
    private readonly credits: CustomerCreditsRepository,
    private readonly clock: Clock,
  ) {}

  /** Adds `amount` to the customer's balance, for a credit note, in the caller's transaction. */
  async addIn(
    tx: SqlTx,
    credit: { merchantId: string; customerId: string; mint: string; amount: bigint },
    creditNoteId: string,
  ): Promise<void> {
    await this.credits.lock(tx, credit.customerId);
    await this.credits.insert(tx, {
      id: randomUUID(),
      ...credit,
      amount: credit.amount.toString(),
      creditNoteId,
      invoiceId: null,
      at: this.clock.now(),
    });
  }

  /**
   * Takes up to `upTo` of the customer's balance in the mint for a new invoice, in the
   * caller's transaction. @returns what it took (0 without a balance).
   */
  async applyIn(
    tx: SqlTx,
    debit: { merchantId: string; customerId: string; mint: string; upTo: bigint },
    invoiceId: string,
  ): Promise<bigint> {
    await this.credits.lock(tx, debit.customerId);
    const balance = await this.credits.balance(tx, debit.merchantId, debit.customerId, debit.mint);
    const applied = balance < debit.upTo ? balance : debit.upTo;
    if (applied <= 0n) return 0n;
    await this.credits.insert(tx, {
      id: randomUUID(),
      merchantId: debit.merchantId,
      customerId: debit.customerId,
      mint: debit.mint,
      amount: (-applied).toString(),
      creditNoteId: null,
      invoiceId,
      at: this.clock.now(),
    });
    return applied;
  }

  /**
   * Gives back to the customer's balance what it gave an invoice that will never be paid (voided
   * or expired), in the caller's transaction; nothing when it gave nothing or was given back.
   */
  async restoreIn(
    tx: SqlTx,
    invoice: { merchantId: string; customerId: string; mint: string },
    invoiceId: string,
  ): Promise<void> {
    await this.credits.lock(tx, invoice.customerId);
    const net = await this.credits.ofInvoice(tx, invoice.customerId, invoiceId);
    if (net >= 0n) return;
    await this.credits.insert(tx, {
      id: randomUUID(),
      ...invoice,
      amount: (-net).toString(),
      creditNoteId: null,
      invoiceId,
      at: this.clock.now(),
    });
  }

  /** The customer's balances that are not zero, per mint. */
  async balances(merchantId: string, customerId: string): Promise<CreditBalance[]> {
    const rows = await this.credits.balances(merchantId, customerId);
    return rows.map((row) => ({ mint: row.mint, balance: formatUnits(row.balance) }));
  }
}
