import { Injectable } from '@nestjs/common';
import { sql } from '../database/typed-sql';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import type {
  IBalancesOfQuery,
  ICreditBalanceQuery,
  ICreditOfInvoiceQuery,
  IInsertCreditQuery,
  ILockCreditsQuery,
} from './customer-credits.repository.types';

/**
 * Holds a customer's balance for the caller's transaction: every change of one customer's
 * balance takes it first, so two changes never both read the sum before the other's entry.
 */
const lockCredits = sql<ILockCreditsQuery>`
  SELECT pg_advisory_xact_lock(hashtextextended('customer_credits:' || $customerId!::text, 0))
    AS "locked!"`;

/** The customer's balance in one mint: the sum of its entries (base units, as text). */
const creditBalance = sql<ICreditBalanceQuery>`
  SELECT coalesce(sum(amount), 0)::text AS "balance!" FROM customer_credits
   WHERE customer_id = $customerId! AND merchant_id = $merchantId! AND mint = $mint!`;

/** The customer's balances, per mint, that are not zero. */
const balancesOf = sql<IBalancesOfQuery>`
  SELECT mint, sum(amount)::text AS "balance!" FROM customer_credits
   WHERE customer_id = $customerId! AND merchant_id = $merchantId!
   GROUP BY mint HAVING sum(amount) <> 0 ORDER BY mint`;

/** What the customer's balance gave an invoice, net (base units, as text; <= 0). */
const creditOfInvoice = sql<ICreditOfInvoiceQuery>`
  SELECT coalesce(sum(amount), 0)::text AS "net!" FROM customer_credits
   WHERE customer_id = $customerId! AND invoice_id = $invoiceId!`;

const insertCredit = sql<IInsertCreditQuery>`
  INSERT INTO customer_credits (id, created_at, updated_at, merchant_id, customer_id, mint, amount,
    credit_note_id, invoice_id)
  VALUES ($id!, $at!, $at!, $merchantId!, $customerId!, $mint!, $amount!::bigint, $creditNoteId,
    $invoiceId)`;

/** Every statement on `customer_credits`: the customers module owns a customer's balance. */
@Injectable()
export class CustomerCreditsRepository {
  constructor(private readonly db: Db) {}

  /** Holds the customer's balance until the caller's transaction ends. */
  async lock(tx: SqlTx, customerId: string): Promise<void> {
    await lockCredits.run({ customerId }, tx);
  }

  async balance(tx: SqlTx, merchantId: string, customerId: string, mint: string): Promise<bigint> {
    const [row] = await creditBalance.run({ merchantId, customerId, mint }, tx);
    return BigInt(row.balance);
  }

  async ofInvoice(tx: SqlTx, customerId: string, invoiceId: string): Promise<bigint> {
    const [row] = await creditOfInvoice.run({ customerId, invoiceId }, tx);
    return BigInt(row.net);
  }

  balances(merchantId: string, customerId: string): Promise<{ mint: string; balance: string }[]> {
    return balancesOf.run({ merchantId, customerId }, this.db);
  }

  async insert(
    tx: SqlTx,
    entry: {
      id: string;
      merchantId: string;
      customerId: string;
      mint: string;
      amount: string;
      creditNoteId: string | null;
      invoiceId: string | null;
      at: Date;
    },
  ): Promise<void> {
    await insertCredit.run(entry, tx);
  }
}
