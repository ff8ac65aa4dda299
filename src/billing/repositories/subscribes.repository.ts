import { Injectable } from '@nestjs/common';
import { sql } from '../../database/typed-sql';
import { Db } from '../../database/db';
import type { SqlTx } from '../../database/pg-transaction';
import type { MintSymbol } from '../../solana/mints';
import type {
  ILiveSubscriptionQuery,
  ILockWalletKeyQuery,
  IPlanTermsQuery,
  IPlanTermsResult,
} from './subscribes.repository.types';

/**
 * A plan with what a subscribe needs of its merchant. Its mint is one of the service's symbols
 * (a text column, which the generated type leaves `string`).
 */
export type PlanTerms = Omit<IPlanTermsResult, 'mint'> & { mint: MintSymbol };

/** The plan with its merchant's wallet and name (the amount's text is never null: forced). */
const planTerms = sql<IPlanTermsQuery>`
  SELECT p.id, p.merchant_id, p.label, p.mint, p.amount::text AS "amount!", p.interval_seconds,
         p.active, m.wallet_address AS merchant_wallet, m.name AS merchant_name, p.meter_name,
         p.meter_unit_price::text AS meter_unit_price, p.meter_unit_size::text AS meter_unit_size,
         p.meter_included_units::text AS meter_included_units, p.meter_cap::text AS meter_cap,
         p.usage_grace_seconds
    FROM plans p JOIN merchants m ON m.id = p.merchant_id WHERE p.id = $planId!`;

/** The wallet's live (Active or PastDue) subscription to the plan. */
const liveSubscription = sql<ILiveSubscriptionQuery>`
  SELECT s.id FROM subscriptions s JOIN customers c ON c.id = s.customer_id
   WHERE s.plan_id = $planId! AND c.merchant_id = $merchantId! AND c.wallet_address = $wallet!
     AND s.status IN ('Active', 'PastDue')`;

/** A transaction-scoped advisory lock on `key` (held until the caller's transaction ends). */
const lockWalletKey = sql<ILockWalletKeyQuery>`
  SELECT pg_advisory_xact_lock(hashtextextended($key!, 0))`;

/**
 * Serialises, for the rest of the caller's transaction, everything that judges one wallet's
 * shared approval in one mint: confirms of subscribes and of re-authorisations.
 */
export async function lockWallet(tx: SqlTx, wallet: string, mint: string): Promise<void> {
  await lockWalletKey.run({ key: `approval:${wallet}:${mint}` }, tx);
}

/**
 * What confirming a subscribe reads. It writes no table of its own (the subscription is the
 * subscriptions module's to create); these are reads of plans, merchants, subscriptions and
 * customers, each one statement as it was, typed by pgtyped from the migrated schema
 * (`npm run db:types`).
 */
@Injectable()
export class SubscribesRepository {
  constructor(private readonly db: Db) {}

  /** The plan with its merchant's wallet and name, or undefined. */
  async planTerms(planId: string): Promise<PlanTerms | undefined> {
    const [plan] = await planTerms.run({ planId }, this.db);
    // The mint column holds one of the service's symbols (a text column: typed `string`).
    return plan as PlanTerms | undefined;
  }

  /** The wallet's live (Active or PastDue) subscription to the plan, in the caller's transaction. */
  async liveSubscription(
    tx: SqlTx,
    plan: { id: string; merchant_id: string },
    wallet: string,
  ): Promise<string | null> {
    const [row] = await liveSubscription.run(
      { planId: plan.id, merchantId: plan.merchant_id, wallet },
      tx,
    );
    return row?.id ?? null;
  }

  /** `lockWallet` in the caller's transaction. */
  lockWallet(tx: SqlTx, wallet: string, mint: string): Promise<void> {
    return lockWallet(tx, wallet, mint);
  }
}
