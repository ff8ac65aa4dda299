import { Injectable } from '@nestjs/common';
import { sql } from '../database/typed-sql';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import type {
  IFailSettlementQuery,
  IFeeSpentQuery,
  IInsertSettlementQuery,
  ILandedFailuresQuery,
  IPendingSettlementsQuery,
  IPendingSettlementsResult,
  IReleaseFeeQuery,
  ISettleSettlementQuery,
  ISettlementSignaturesQuery,
  ISpendFeeQuery,
} from './x402.repository.types';

/** A settlement as it is written, before its transaction is sent. */
export interface SettlementInsert {
  id: string;
  merchantId: string;
  signature: string;
  transaction: string;
  lastValidBlockHeight: number;
  network: string;
  payer: string;
  mint: string;
  amount: string;
  networkFee: string;
  resourceUrl: string | null;
  at: Date;
}

/** A Pending settlement as the reconciler reads it. */
export type PendingSettlement = IPendingSettlementsResult;

const insertSettlement = sql<IInsertSettlementQuery>`
  INSERT INTO x402_settlements (id, created_at, updated_at, merchant_id, status, signature,
    transaction, last_valid_block_height, network, payer, mint, amount, network_fee, resource_url)
  VALUES ($id!, $at!, $at!, $merchantId!, 'Pending', $signature!, $transaction!,
    $lastValidBlockHeight!, $network!, $payer!, $mint!, $amount!::bigint, $networkFee!::bigint,
    $resourceUrl)
  ON CONFLICT (signature) DO NOTHING
  RETURNING id`;

/**
 * Adds `fee` to the merchant's spend of the day only while the sum stays within `budget`: one
 * statement (the day's row lock orders concurrent settlements). Nothing returned: over budget.
 */
const spendFee = sql<ISpendFeeQuery>`
  INSERT INTO x402_fee_days AS d (merchant_id, day, spent)
  SELECT $merchantId!, $day!::date, $fee!::bigint WHERE $fee!::bigint <= $budget!::bigint
  ON CONFLICT (merchant_id, day) DO UPDATE SET spent = d.spent + EXCLUDED.spent
   WHERE d.spent + EXCLUDED.spent <= $budget!::bigint
  RETURNING spent::text AS "spent!"`;

/** Gives back the fee of a transaction that never landed (it cost nothing). */
const releaseFee = sql<IReleaseFeeQuery>`
  UPDATE x402_fee_days SET spent = GREATEST(spent - $fee!::bigint, 0)
   WHERE merchant_id = $merchantId! AND day = $day!::date`;

const feeSpent = sql<IFeeSpentQuery>`
  SELECT spent::text AS "spent!" FROM x402_fee_days
   WHERE merchant_id = $merchantId! AND day = $day!::date`;

/** Compare-and-set Pending -> Settled: true for the one writer that settles it. */
const settleSettlement = sql<ISettleSettlementQuery>`
  UPDATE x402_settlements SET status = 'Settled', payment_id = $paymentId!, updated_at = $at!
   WHERE id = $id! AND status = 'Pending'
  RETURNING id`;

/** Compare-and-set Pending -> Failed: the day its fee was counted on, for the one that wins. */
const failSettlement = sql<IFailSettlementQuery>`
  UPDATE x402_settlements SET status = 'Failed', error = left($error!, 200), updated_at = $at!
   WHERE id = $id! AND status = 'Pending'
  RETURNING to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS "day!"`;

/** A payer's settlements to the merchant that landed and failed in the day before `at`. */
const landedFailures = sql<ILandedFailuresQuery>`
  SELECT count(*)::int AS "failures!" FROM x402_settlements
   WHERE merchant_id = $merchantId! AND payer = $payer! AND status = 'Failed'
     AND error LIKE 'landed: %' AND created_at > $at!::timestamptz - interval '1 day'`;

/** Which of these signatures are settlements'. */
const settlementSignatures = sql<ISettlementSignaturesQuery>`
  SELECT signature FROM x402_settlements WHERE signature = ANY($signatures!::text[])`;

/** Pending settlements older than `before` (their sender is gone or slow), oldest first. */
const pendingSettlements = sql<IPendingSettlementsQuery>`
  SELECT id, merchant_id, signature, last_valid_block_height::text AS "last_valid_block_height!",
         network, payer, mint, amount::text AS "amount!", network_fee::text AS "network_fee!",
         resource_url
    FROM x402_settlements
   WHERE status = 'Pending' AND created_at < $before!
   ORDER BY created_at
   LIMIT $limit!::int`;

/** `x402_settlements` and `x402_fee_days`: the x402 module's tables. */
@Injectable()
export class X402Repository {
  constructor(private readonly db: Db) {}

  /** @returns false when a settlement of this signature exists already (a replay). */
  async insert(tx: SqlTx, row: SettlementInsert): Promise<boolean> {
    const inserted = await insertSettlement.run(row, tx);
    return inserted.length === 1;
  }

  /** @returns the day's spend with `fee` added, or null when that would pass `budget`. */
  async spendFee(
    tx: SqlTx,
    merchantId: string,
    day: string,
    fee: bigint,
    budget: bigint,
  ): Promise<bigint | null> {
    const [row] = await spendFee.run(
      { merchantId, day, fee: fee.toString(), budget: budget.toString() },
      tx,
    );
    return row ? BigInt(row.spent) : null;
  }

  async releaseFee(tx: SqlTx, merchantId: string, day: string, fee: bigint): Promise<void> {
    await releaseFee.run({ merchantId, day, fee: fee.toString() }, tx);
  }

  async feeSpent(merchantId: string, day: string): Promise<bigint> {
    const [row] = await feeSpent.run({ merchantId, day }, this.db);
    return row ? BigInt(row.spent) : 0n;
  }

  async settle(tx: SqlTx, id: string, paymentId: string, at: Date): Promise<boolean> {
    return (await settleSettlement.run({ id, paymentId, at }, tx)).length === 1;
  }

  /** @returns the day its fee was counted on, or null when it is not Pending any more. */
  async fail(tx: SqlTx, id: string, error: string, at: Date): Promise<string | null> {
    const [row] = await failSettlement.run({ id, error, at }, tx);
    return row?.day ?? null;
  }

  async landedFailures(tx: SqlTx, merchantId: string, payer: string, at: Date): Promise<number> {
    const [row] = await landedFailures.run({ merchantId, payer, at }, tx);
    return row.failures;
  }

  async signatures(signatures: string[]): Promise<Set<string>> {
    if (signatures.length === 0) return new Set();
    const rows = await settlementSignatures.run({ signatures }, this.db);
    return new Set(rows.map((r) => r.signature));
  }

  pending(before: Date, limit: number): Promise<PendingSettlement[]> {
    return pendingSettlements.run({ before, limit }, this.db);
  }
}
