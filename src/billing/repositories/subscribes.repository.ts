import { Injectable } from '@nestjs/common';
import { Db } from '../../database/db';
import type { SqlTx } from '../../database/pg-transaction';
import type { MintSymbol } from '../../solana/mints';

/** A plan with what a subscribe needs of its merchant. */
export interface PlanTerms {
  id: string;
  merchant_id: string;
  label: string;
  mint: MintSymbol;
  amount: string;
  interval_seconds: number;
  active: boolean;
  merchant_wallet: string;
  merchant_name: string;
}

/**
 * Serialises, for the rest of the caller's transaction, everything that judges one wallet's
 * shared approval in one mint: confirms of subscribes and of re-authorisations.
 */
export async function lockWallet(tx: SqlTx, wallet: string, mint: string): Promise<void> {
  await tx.execute(`SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, [
    `approval:${wallet}:${mint}`,
  ]);
}

/**
 * What confirming a subscribe reads. It writes no table of its own (the subscription is the
 * subscriptions module's to create); these are reads of plans, merchants, subscriptions and
 * customers, each one statement as it was.
 */
@Injectable()
export class SubscribesRepository {
  constructor(private readonly db: Db) {}

  /** The plan with its merchant's wallet and name, or undefined. */
  async planTerms(planId: string): Promise<PlanTerms | undefined> {
    const [plan] = await this.db.execute<PlanTerms[]>(
      `SELECT p.id, p.merchant_id, p.label, p.mint, p.amount::text AS amount, p.interval_seconds,
              p.active, m.wallet_address AS merchant_wallet, m.name AS merchant_name
         FROM plans p JOIN merchants m ON m.id = p.merchant_id WHERE p.id = ?`,
      [planId],
    );
    return plan;
  }

  /** The wallet's live (Active or PastDue) subscription to the plan, in the caller's transaction. */
  async liveSubscription(
    tx: SqlTx,
    plan: { id: string; merchant_id: string },
    wallet: string,
  ): Promise<string | null> {
    const [row] = await tx.execute<{ id: string }[]>(
      `SELECT s.id FROM subscriptions s JOIN customers c ON c.id = s.customer_id
        WHERE s.plan_id = ? AND c.merchant_id = ? AND c.wallet_address = ?
          AND s.status IN ('Active', 'PastDue')`,
      [plan.id, plan.merchant_id, wallet],
    );
    return row?.id ?? null;
  }

  /** `lockWallet` in the caller's transaction. */
  lockWallet(tx: SqlTx, wallet: string, mint: string): Promise<void> {
    return lockWallet(tx, wallet, mint);
  }
}
