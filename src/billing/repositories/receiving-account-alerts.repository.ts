import { Injectable } from '@nestjs/common';
import { sql } from '../../database/typed-sql';
import { Db } from '../../database/db';
import type { SqlTx } from '../../database/pg-transaction';
import type { MintSymbol } from '../../solana/mints';
import type {
  IAddAlertQuery,
  IListAlertsQuery,
  IRemoveAlertQuery,
} from './receiving-account-alerts.repository.types';

/** A merchant's receiving account found missing (the merchant was told once). */
export interface ReceivingAccountAlertRow {
  merchant_id: string;
  mint: MintSymbol;
  address: string;
}

/** A missing receiving account, noted once (a conflict: noted already, nothing returned). */
const addAlert = sql<IAddAlertQuery>`
  INSERT INTO receiving_account_alerts (merchant_id, mint, address, created_at)
  VALUES ($merchantId!, $mint!, $address!, $now!) ON CONFLICT DO NOTHING RETURNING mint`;

/** Up to 100 alerts (usually there are none). */
const listAlerts = sql<IListAlertsQuery>`
  SELECT merchant_id, mint, address FROM receiving_account_alerts LIMIT 100`;

const removeAlert = sql<IRemoveAlertQuery>`
  DELETE FROM receiving_account_alerts
   WHERE merchant_id = $merchantId! AND mint = $mint! AND address = $address!`;

/**
 * Every statement on `receiving_account_alerts`: the table's one owner (issue 22), typed by
 * pgtyped from the migrated schema (`npm run db:types`).
 */
@Injectable()
export class ReceivingAccountAlertsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Notes a missing receiving account in the caller's transaction.
   * @returns false when it was noted already (the merchant was told).
   */
  async add(tx: SqlTx, alert: ReceivingAccountAlertRow, now: Date): Promise<boolean> {
    const added = await addAlert.run(
      { merchantId: alert.merchant_id, mint: alert.mint, address: alert.address, now },
      tx,
    );
    return added.length > 0;
  }

  /** Up to 100 alerts (usually there are none). */
  async list(): Promise<ReceivingAccountAlertRow[]> {
    // The mint column holds one of the service's symbols (a text column: typed `string`).
    return (await listAlerts.run(undefined, this.db)) as ReceivingAccountAlertRow[];
  }

  async remove(alert: ReceivingAccountAlertRow): Promise<void> {
    await removeAlert.run(
      { merchantId: alert.merchant_id, mint: alert.mint, address: alert.address },
      this.db,
    );
  }
}
