import { Injectable } from '@nestjs/common';
import type { SqlTx } from '../database/pg-transaction';
import type { SignatureUse } from './entities/subscription-signature.entity';

/** What an accepted signature did, and to which subscription (of which plan). */
export interface SignatureUseRow {
  subscription_id: string;
  plan_id: string;
  use: SignatureUse;
}

/** Every statement on `subscription_signatures` (issue 22: the table's one owner). */
@Injectable()
export class SubscriptionSignaturesRepository {
  /** The use of `signature`, any merchant's; undefined when it was never accepted. */
  async find(ex: SqlTx, signature: string): Promise<SignatureUseRow | undefined> {
    const [row] = await ex.execute<SignatureUseRow[]>(
      `SELECT g.subscription_id, s.plan_id, g.use
         FROM subscription_signatures g JOIN subscriptions s ON s.id = g.subscription_id
        WHERE g.signature = ?`,
      [signature],
    );
    return row;
  }

  /**
   * Records that `signature` created or changed subscription `subscriptionId`, in the caller's
   * transaction. @returns false when it was used before (for anything); with `mustBeNew` that
   * is a unique violation instead (the caller's transaction fails).
   */
  async insert(
    tx: SqlTx,
    row: { signature: string; subscriptionId: string; use: SignatureUse; at: Date },
    mustBeNew: boolean,
  ): Promise<boolean> {
    const rows = await tx.execute<{ signature: string }[]>(
      `INSERT INTO subscription_signatures (signature, subscription_id, use, created_at)
       VALUES (?, ?, ?, ?) ${mustBeNew ? '' : 'ON CONFLICT (signature) DO NOTHING'}
       RETURNING signature`,
      [row.signature, row.subscriptionId, row.use, row.at],
    );
    return rows.length > 0;
  }
}
