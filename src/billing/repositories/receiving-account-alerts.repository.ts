import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db';
import type { SqlTx } from '../../database/pg-transaction';
import type { MintSymbol } from '../../solana/mints';

/** A merchant's receiving account found missing (the merchant was told once). */
export interface ReceivingAccountAlertRow {
  merchant_id: string;
  mint: MintSymbol;
  address: string;
}

/** Every statement on `receiving_account_alerts`: the table's one owner (issue 22). */
@Injectable()
export class ReceivingAccountAlertsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Notes a missing receiving account in the caller's transaction.
   * @returns false when it was noted already (the merchant was told).
   */
  async add(tx: SqlTx, alert: ReceivingAccountAlertRow, now: Date): Promise<boolean> {
    const added = await tx.execute<{ mint: string }[]>(
      `INSERT INTO receiving_account_alerts (merchant_id, mint, address, created_at)
       VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING mint`,
      [alert.merchant_id, alert.mint, alert.address, now],
    );
    return added.length > 0;
  }

  /** Up to 100 alerts (usually there are none). */
  list(): Promise<ReceivingAccountAlertRow[]> {
    return this.db.execute<ReceivingAccountAlertRow[]>(
      `SELECT merchant_id, mint, address FROM receiving_account_alerts LIMIT 100`,
    );
  }

  async remove(alert: ReceivingAccountAlertRow): Promise<void> {
    await this.db.execute(
      `DELETE FROM receiving_account_alerts WHERE merchant_id = ? AND mint = ? AND address = ?`,
      [alert.merchant_id, alert.mint, alert.address],
    );
  }
}
