import { Injectable } from '@nestjs/common';
import { sql } from '../database/typed-sql';
import type { SqlTx } from '../database/pg-transaction';
import type { SignatureUse } from './entities/subscription-signature.entity';
import type {
  IFindSignatureUseQuery,
  IInsertSignatureQuery,
  IInsertSignatureOnceQuery,
} from './subscription-signatures.repository.types';

/** What an accepted signature did, and to which subscription (of which plan). */
export interface SignatureUseRow {
  subscription_id: string;
  plan_id: string;
  use: SignatureUse;
}

/** The use of a signature, any merchant's, with the plan of the subscription it touched. */
const findSignatureUse = sql<IFindSignatureUseQuery>`
  SELECT g.subscription_id, s.plan_id, g.use
    FROM subscription_signatures g JOIN subscriptions s ON s.id = g.subscription_id
   WHERE g.signature = $signature!`;

/** A signature's first use: a second one is a unique violation (the caller's transaction fails). */
const insertSignature = sql<IInsertSignatureQuery>`
  INSERT INTO subscription_signatures (signature, subscription_id, use, created_at)
  VALUES ($signature!, $subscriptionId!, $use!, $at!)
  RETURNING signature`;

/** A signature's use, unless it was used before (for anything): then nothing is returned. */
const insertSignatureOnce = sql<IInsertSignatureOnceQuery>`
  INSERT INTO subscription_signatures (signature, subscription_id, use, created_at)
  VALUES ($signature!, $subscriptionId!, $use!, $at!)
  ON CONFLICT (signature) DO NOTHING
  RETURNING signature`;

/**
 * Every statement on `subscription_signatures` (issue 22: the table's one owner), typed by
 * pgtyped from the migrated schema (`npm run db:types`).
 */
@Injectable()
export class SubscriptionSignaturesRepository {
  /** The use of `signature`, any merchant's; undefined when it was never accepted. */
  async find(ex: SqlTx, signature: string): Promise<SignatureUseRow | undefined> {
    const [row] = await findSignatureUse.run({ signature }, ex);
    // `use` is one of the entity's (a text column: typed `string`).
    return row as SignatureUseRow | undefined;
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
    const rows = await (mustBeNew ? insertSignature : insertSignatureOnce).run(row, tx);
    return rows.length > 0;
  }
}
