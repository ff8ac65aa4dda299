import { Injectable } from '@nestjs/common';
import type { SqlTx } from '../../database/pg-transaction';

/** Who a customer notice goes to. */
export interface NoticeRecipientRow {
  email: string | null;
  merchant: string;
  merchant_id: string;
}

/**
 * What customer notices read: the customer's address and its merchant's name (a read of
 * `customers` and `merchants`, one statement as it was, in the caller's transaction).
 */
@Injectable()
export class BillingNoticesRepository {
  async recipient(tx: SqlTx, customerId: string): Promise<NoticeRecipientRow | undefined> {
    const [row] = await tx.execute<NoticeRecipientRow[]>(
      `SELECT c.email, m.name AS merchant, m.id AS merchant_id
         FROM customers c JOIN merchants m ON m.id = c.merchant_id WHERE c.id = ?`,
      [customerId],
    );
    return row;
  }
}
