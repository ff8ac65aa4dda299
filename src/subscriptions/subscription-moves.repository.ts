import { Injectable } from '@nestjs/common';
import { sql } from '../database/typed-sql';
import { Db } from '../database/db';
import type { SqlTx } from '../database/pg-transaction';
import type { MintSymbol } from '../solana/mints';
import type {
  ILiveDelegatedOfWalletQuery,
  ILiveDelegatedOfWalletResult,
  ILockForMoveQuery,
  IMoveToProgramQuery,
} from './subscription-moves.repository.types';

/** A live token-delegate subscription of a wallet in a mint (`liveDelegatedOfWallet`). */
export type DelegatedSubscriptionRow = ILiveDelegatedOfWalletResult;

/**
 * The wallet's live subscriptions in a mint still under the token-delegate scheme, as a customer
 * of any merchant, oldest first: they share the one approval a move to the program replaces (a
 * token account has one delegate), so they move together (docs/solana.md, "Moving subscribers
 * between schemes").
 */
const liveDelegatedOfWallet = sql<ILiveDelegatedOfWalletQuery>`
  SELECT s.id, s.merchant_id, s.plan_id, m.wallet_address AS merchant_wallet,
         p.amount::text AS "amount!", p.interval_seconds
    FROM customers c JOIN subscriptions s ON s.customer_id = c.id
    JOIN plans p ON p.id = s.plan_id JOIN merchants m ON m.id = s.merchant_id
   WHERE c.wallet_address = $walletAddress! AND p.mint = $mint! AND s.scheme = 'token-delegate'
     AND s.status IN ('Active', 'PastDue') AND s.revoked_at IS NULL
   ORDER BY s.created_at, s.id`;

/**
 * Moves subscriptions to the program scheme, each with its delegation PDA, locked in id order.
 * Only live, unrevoked token-delegate ones move: returns those that did. The charge run records
 * a try only while its subscription is under the scheme the try was built for, reading the row
 * `FOR SHARE` (`recordTries`): a move that commits first stops that try.
 */
const moveToProgram = sql<IMoveToProgramQuery>`
  WITH m AS (
    SELECT * FROM jsonb_to_recordset($moves!::jsonb) AS m(id uuid, onchain_address text)
  ), locked AS (
    SELECT s.id FROM subscriptions s
     WHERE s.id = ANY(ARRAY(SELECT m.id FROM m)) AND s.scheme = 'token-delegate'
       AND s.status IN ('Active', 'PastDue') AND s.revoked_at IS NULL
     ORDER BY s.id FOR UPDATE
  )
  UPDATE subscriptions s SET scheme = 'program', onchain_address = m.onchain_address,
         updated_at = $at!
    FROM m JOIN locked l ON l.id = m.id
   WHERE s.id = m.id
  RETURNING s.id`;

/** Locks subscriptions `FOR UPDATE`, in id order (a move's first step): their ids. */
const lockForMove = sql<ILockForMoveQuery>`
  SELECT s.id FROM subscriptions s WHERE s.id = ANY($ids!::uuid[]) ORDER BY s.id FOR UPDATE`;

/**
 * A customer's move of its subscriptions from the token-delegate scheme to the Subscriptions
 * program: the statements on `subscriptions` it needs (the table's owner is this module).
 */
@Injectable()
export class SubscriptionMovesRepository {
  constructor(private readonly db: Db) {}

  /** See `liveDelegatedOfWallet`. */
  liveDelegatedOfWallet(
    walletAddress: string,
    mint: MintSymbol,
    ex: SqlTx | Db = this.db,
  ): Promise<DelegatedSubscriptionRow[]> {
    return liveDelegatedOfWallet.run({ walletAddress, mint }, ex);
  }

  /** See `lockForMove`. */
  async lock(tx: SqlTx, ids: string[]): Promise<void> {
    await lockForMove.run({ ids }, tx);
  }

  /** See `moveToProgram`: the ids that moved. */
  async moveToProgram(
    tx: SqlTx,
    moves: { id: string; onchainAddress: string }[],
    at: Date,
  ): Promise<string[]> {
    const json = JSON.stringify(
      moves.map((m) => ({ id: m.id, onchain_address: m.onchainAddress })),
    );
    const rows = await moveToProgram.run({ moves: json, at }, tx);
    return rows.map((row) => row.id);
  }
}
