import { Injectable } from '@nestjs/common';
import { sql } from '../../database/typed-sql';
import type { SqlTx } from '../../database/pg-transaction';
import type { IRecipientQuery, IRecipientResult } from './billing-notices.repository.types';

/** Who a customer notice goes to. */
export type NoticeRecipientRow = IRecipientResult;

/** The customer's address and its merchant's name and id. */
const recipient = sql<IRecipientQuery>`
  SELECT c.email, m.name AS merchant, m.id AS merchant_id
    FROM customers c JOIN merchants m ON m.id = c.merchant_id WHERE c.id = $customerId!`;

/**
 * What customer notices read: the customer's address and its merchant's name (a read of
 * `customers` and `merchants`, one statement as it was, in the caller's transaction), typed by
 * pgtyped from the migrated schema (`npm run db:types`).
 */
@Injectable()
export class BillingNoticesRepository {
  async recipient(tx: SqlTx, customerId: string): Promise<NoticeRecipientRow | undefined> {
    const [row] = await recipient.run({ customerId }, tx);
    return row;
  }
}
